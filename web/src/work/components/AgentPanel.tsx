// The selected agent: its state and mode, the approval its execution waits
// for, what runs, its queue (cancel), its last result and its live terminal.
import { useMemo } from 'preact/hooks';
import type { Agent } from '../../../../src/core/work.js';
import type { WorkModel } from '../../live/work.js';
import { postJson } from '../../shared/api.js';
import { ApprovalBox } from './ApprovalBox.js';

export function AgentPanel(props: { agent: Agent; model: WorkModel; terminal: string; canWrite: boolean; project: string; roleIn: (project: string) => string | null; projectName: (project: string) => string }) {
  const { agent, model, terminal, canWrite, project } = props;
  const x = agent.running ? model.executions[agent.running] : null;
  const running = x ? model.commands[x.command] : null;
  const results = useMemo(() => Object.values(model.results).filter((r) => r.agent === agent.id).sort((a, b) => b.rev - a.rev), [model.results, agent.id]);
  const space = model.spaces[agent.space];
  return (
    <aside class="agent-panel" data-testid="agent-panel" aria-label="Agent">
      <h2>{agent.label}</h2>
      <dl>
        <dt>State</dt>
        <dd data-testid="agent-state" data-state={agent.state}>
          {agent.state}
          {x?.state === 'blocked' && <span data-testid="agent-blocked"> on {x.blockedOn}</span>}
        </dd>
        <dt>Mode</dt>
        <dd data-testid="agent-mode">
          {agent.mode || 'default'}
          {agent.trustedLocal ? ' · trusted local' : ' · bridge'}
          {agent.trustedLocal && (agent.callable ? ' · callable' : ' · read-only to teammates')}
        </dd>
        <dt>Space</dt>
        <dd>
          {space?.name ?? agent.space}
          {space && !space.contributed && ' (revoked)'}
        </dd>
        <dt>Pane</dt>
        <dd data-testid="agent-pane">{agent.pane || '—'}</dd>
      </dl>
      {x?.state === 'blocked' && x.approval && <ApprovalBox x={x} approval={x.approval} role={props.roleIn(x.approval.project)} projectName={props.projectName(x.approval.project)} />}
      <h3>Running</h3>
      <p data-testid="running">{running ? running.text : <span class="muted">nothing</span>}</p>
      <h3>Queue</h3>
      <ol class="queue" data-testid="queue">
        {agent.queue.map((id) => {
          const c = model.commands[id];
          return (
            <li key={id} data-command={id}>
              <span class="q-text">{c?.text ?? id}</span> <span class="muted small">by {c?.by.name}</span>
              {canWrite && (
                <button class="linkish" onClick={() => void postJson(`/api/v2/commands/${id}/cancel?project=${encodeURIComponent(project)}`, {})}>
                  cancel
                </button>
              )}
            </li>
          );
        })}
        {agent.queue.length === 0 && <li class="muted">empty</li>}
      </ol>
      <h3>Result</h3>
      <p data-testid="result" data-status={results[0]?.status ?? ''}>
        {results[0] ? results[0].text : <span class="muted">none yet</span>}
      </p>
      <h3>Terminal</h3>
      <pre class="terminal" data-testid="terminal">
        {agent.state === 'ended' ? '(ended)' : terminal || '(no output yet)'}
      </pre>
    </aside>
  );
}

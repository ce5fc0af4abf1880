// The coding agents' part of the one trust ledger, in the page's Trust
// section (issue 30; docs/approvals.md "Earned trust"): whether earned trust
// is on for the project, the classes that never run on trust, every team's
// level per action class, and why each is where it is (the history, newest
// first). An owner turns it on or off and sets the never-classes (PUT
// /api/trust/agents, each an event); a person revokes from the call itself
// (the inbox, the agent's card, the floor). Read off the approvals fold with
// the server's own `agentLedgerJSON`.
import { useState } from 'preact/hooks';
import { agentLedgerJSON } from '../../../../src/core/agent-trust.js';
import { useApprovals } from '../../live/approvals.js';
import { sendJson } from '../../shared/api.js';
import { inProject, pageProject } from '../../shared/scope.js';

export function AgentsTrust() {
  const client = useApprovals(pageProject());
  const j = agentLedgerJSON(client.state.agentTrust);
  // The never-classes being edited (comma-separated), or null.
  const [never, setNever] = useState<string | null>(null);
  const [error, setError] = useState('');
  const put = async (body: { on?: boolean; never?: string[] }) => {
    const r = await sendJson('PUT', inProject('/api/trust/agents'), body);
    setError(r.ok ? '' : r.status === 403 ? `Only an owner can change this (${r.message}).` : r.message);
    return r.ok;
  };
  const save = async (e: Event) => {
    e.preventDefault();
    const classes = (never ?? '').split(',').map((c) => c.trim()).filter(Boolean);
    if (await put({ never: classes })) setNever(null);
  };
  return (
    <div class="fl-agents-trust" data-testid="agents-trust">
      <h3>Coding agents</h3>
      <p class="fl-muted">
        Per team and action class (<code>npm test</code>, <code>Edit src/</code>): a call that waits for a person earns its team trust at its class; once trusted, the next such call runs
        without a person, and shows "allowed by trust" where it can be revoked.
      </p>
      <p data-testid="agents-trust-on">
        Earned trust is <strong>{j.on ? 'on' : 'off'}</strong> for this project{j.by ? ` (last set by ${j.by})` : ''}
        {j.on ? '.' : ': every matching call waits for a person.'}{' '}
        <button type="button" data-testid="agents-trust-toggle" onClick={() => void put({ on: !j.on })}>
          {j.on ? 'Turn off' : 'Turn on'}
        </button>
      </p>
      <p data-testid="agents-trust-never">
        Never on trust:{' '}
        {j.never.length === 0
          ? 'no class named'
          : j.never.map((c, i) => (
              <span key={c}>
                {i > 0 && ', '}
                <code>{c}</code>
              </span>
            ))}
        ; and always a pipe into a shell, a command substitution, <code>sh -c</code>, a write outside the project.{' '}
        {never === null && (
          <button type="button" data-testid="agents-trust-never-edit" onClick={() => setNever(j.never.join(', '))}>
            Edit
          </button>
        )}
      </p>
      {never !== null && (
        <form class="fl-change" onSubmit={(e) => void save(e)}>
          <label class="fl-field">
            Classes that never run on trust (comma-separated)
            <input data-testid="agents-trust-never-input" value={never} onInput={(e) => setNever((e.target as HTMLInputElement).value)} />
          </label>
          <div class="fl-row">
            <button type="submit">Save</button>
            <button type="button" onClick={() => setNever(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {error && (
        <p class="fl-refusal" role="alert">
          {error}
        </p>
      )}
      {j.holders.length === 0 ? (
        <p class="fl-muted">No team has a decided call yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Team</th>
              <th>Action class</th>
              <th>Level</th>
              <th>Run</th>
              <th title="approved">✓</th>
              <th title="rejected">✗</th>
              <th title="timed out">late</th>
              <th title="allowed by trust or a session rule">auto</th>
            </tr>
          </thead>
          <tbody>
            {j.holders.map((h) => (
              <tr key={`${h.team}/${h.action_class}`} data-testid={`agents-trust-${h.team}-${h.action_class}`}>
                <td>{h.team}</td>
                <td>
                  <code>{h.action_class}</code>
                </td>
                <td>
                  <span class={`fl-level fl-level-${h.level}`}>{h.level_name}</span>
                </td>
                <td>{h.run}</td>
                <td>{h.approved}</td>
                <td>{h.rejected}</td>
                <td>{h.timeout}</td>
                <td>{h.auto}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {j.history.length > 0 && (
        <ol class="fl-history" data-testid="agents-trust-history" reversed>
          {j.history
            .slice()
            .reverse()
            .map((c) => (
              <li key={c.id}>
                <strong>{c.team}</strong> (<code>{c.action_class}</code>) {j.levels[c.from]} → {j.levels[c.to]}
                {c.by ? ` by ${c.by}: ${c.reason ?? ''}` : c.because.length ? ` after ${c.because.map((b) => `${b.verdict}${b.by ? ` by ${b.by}` : ''}`).join(', ')}` : ''}
              </li>
            ))}
        </ol>
      )}
    </div>
  );
}

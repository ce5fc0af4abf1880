// The card of one agent: what the fold knows about it, its pending hook
// approvals (answerable right here), its parent and helpers as links.
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks';
import { shownStatus } from '../../../../src/core/attention.js';
import { quietSince, type Agent, type FloorState } from '../../../../src/core/floor.js';
import { AgentApprovals } from '../../shared/approvals/ApprovalItem.js';
import { AgentTrusted } from '../../shared/approvals/TrustLine.js';
import { ago } from '../../shared/time.js';
import { AgentCost } from '../../shared/cost.js';
import { pageProject } from '../../shared/scope.js';
import { Trends } from './Trends.js';
import { BUDGET_PAUSED } from '../../../../src/core/usage.js';
import { SHOWN_COLOR, SHOWN_LABEL, STATUS_LABEL } from '../look.js';

export function AgentCard(props: { agent: Agent; state: FloorState; now: number; quietAfter: number; here: ReadonlySet<string> | null; onClose: () => void; onPick: (id: string) => void; onHistory?: () => void }) {
  const { agent: a, state, now } = props;
  const quiet = quietSince(a, now, props.quietAfter);
  const shown = shownStatus(a, now, props.quietAfter, props.here);
  const team = state.teams.get(a.team);
  const parent = a.parent ? state.agents.get(a.parent) : undefined;
  const helpers = [...state.agents.values()].filter((x) => x.parent === a.id);
  const ref = useRef<HTMLDivElement>(null);
  // Where the focus was when the card opened (a row of the list, the canvas, the search box): it goes back there when the card closes (Escape, ×), unless the person has moved it elsewhere meanwhile.
  const opener = useRef<Element | null>(null);
  // A layout effect: the card takes the focus in the same commit as it appears, not a frame later.
  useLayoutEffect(() => {
    if (!opener.current) opener.current = document.activeElement;
    ref.current?.focus();
  }, [a.id]);
  useEffect(
    () => () => {
      const now = document.activeElement;
      if (now && now !== document.body && !ref.current?.contains(now)) return;
      const back = opener.current as HTMLElement | null;
      if (back && back !== document.body && back.isConnected) back.focus();
      else document.querySelector<HTMLElement>('.floor canvas')?.focus();
    },
    [],
  );
  const row = (k: string, v: preact.ComponentChildren, testid: string) => (
    <>
      <dt>{k}</dt>
      <dd data-testid={`card-${testid}`}>{v}</dd>
    </>
  );
  return (
    <div class="card" role="dialog" aria-label={`Agent ${a.name}`} data-testid="agent-card" tabIndex={-1} ref={ref} style={{ '--c': SHOWN_COLOR[shown] }}>
      <header>
        <span class="badge" aria-hidden="true" />
        <h2 data-testid="card-name">{a.name}</h2>
        <button class="close" aria-label="Close card" onClick={props.onClose}>
          ×
        </button>
      </header>
      {/* A tool call of this agent waiting for a decision: answerable right here. */}
      <AgentApprovals agent={a.id} />
      {/* Its newest call allowed by trust, with who earned it and Revoke. */}
      <AgentTrusted agent={a.id} />
      <dl>
        {row(
          'Status',
          quiet !== null ? (
            <span class="pill pill-quiet" data-quiet="true">{`Quiet, last heard ${ago(now - quiet)} (was ${STATUS_LABEL[a.status].toLowerCase()})`}</span>
          ) : (
            <span class={`pill pill-${shown}`} data-shown={shown} title={shown === 'terminal' ? 'It asks in its own terminal (a permission prompt or a question): nothing to decide here' : undefined}>
              {SHOWN_LABEL[shown]}
              {a.leftAt !== null ? ' (leaving)' : ''}
            </span>
          ),
          'status',
        )}
        {/* A spent budget paused it (the hooks deny its tool calls): why, until an owner raises or lifts it. */}
        {a.activity.startsWith(BUDGET_PAUSED) && row('Paused', <span class="pill pill-paused">{a.activity.slice(BUDGET_PAUSED.length)}</span>, 'paused')}
        {row('Activity', a.activity || '—', 'activity')}
        {row('Tool', a.tool || '—', 'tool')}
        {row('Role', a.role || '—', 'role')}
        {row('Team', team?.name ?? a.team, 'team')}
        {row('Source', a.source || '—', 'source')}
        {row('Parent', parent ? <button class="link" onClick={() => props.onPick(parent.id)}>{parent.name}</button> : a.parent ?? '—', 'parent')}
        {row(
          'Helpers',
          helpers.length ? (
            <span class="helpers">
              {helpers.map((h) => (
                <button key={h.id} class="link" onClick={() => props.onPick(h.id)}>
                  {h.name}
                </button>
              ))}
            </span>
          ) : (
            '—'
          ),
          'helpers',
        )}
        <AgentCost id={a.id} />
        {row('Last seen', <time dateTime={new Date(a.lastSeen).toISOString()} title={new Date(a.lastSeen).toLocaleString()}>{ago(now - a.lastSeen)}</time>, 'last-seen')}
        {row('Id', <code>{a.id}</code>, 'id')}
      </dl>
      {/* Per day over the last 30 days, from the log. */}
      <Trends agent={a.id} project={pageProject()} />
      {props.onHistory && (
        <button class="history-open" onClick={props.onHistory} data-testid="card-history">
          History
        </button>
      )}
    </div>
  );
}

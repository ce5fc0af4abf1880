// The floor in words: the agents who need a person first, then every room
// with its whiteboard and its agents by desk. It is the accessible view of
// the canvas (keyboard, screen readers) and says what the canvas shows.
import { memo } from 'preact/compat';
import { shownStatus, type Shown } from '../../../../src/core/attention.js';
import type { Agent, FloorState, Status } from '../../../../src/core/floor.js';
import { ago } from '../../shared/time.js';
import { SHOWN_COLOR, SHOWN_LABEL, SHOWN_POSE, STATUS_LABEL, byAttention } from '../look.js';
import { TeamCost } from '../../shared/cost.js';

const AgentRow = memo(
  function AgentRow(props: { a: Agent; rev: number; status: Status; shown: Shown; quiet: string | null; selected: boolean; onPick: (id: string) => void }) {
    const a = props.a;
    const shown = props.shown;
    // Silent too long while "working": say quiet and when it was last heard, not a guess.
    const st = props.quiet ? `Quiet, last heard ${props.quiet} (was ${STATUS_LABEL[a.status].toLowerCase()})` : SHOWN_LABEL[shown];
    return (
      <li data-testid={`agent-row-${a.id}`} data-status={a.status} data-shown={shown} data-quiet={props.quiet ? 'true' : undefined} data-team={a.team} class={`row row-${shown}${props.selected ? ' sel' : ''}`}>
        {/* The name is what the row shows, in its order (WCAG 2.5.3), and then the pose in words. */}
        <button onClick={() => props.onPick(a.id)}>
          <span class="ring" style={{ '--c': SHOWN_COLOR[shown] }} aria-hidden="true" />
          <span class="who">
            <span class="name">{a.name}</span>
            {a.role && <span class="role">{a.role}</span>}
          </span>
          <span class="what">
            <span class="st" data-testid="row-status">{st}</span>
            {a.tool && <span class="tool" data-testid="row-tool">{a.tool}</span>}
            {a.activity && <span class="act" data-testid="row-activity">{a.activity}</span>}
          </span>
          <span class="sr-only">{`${a.leftAt !== null ? ', leaving' : ''}. Pose: ${SHOWN_POSE[shown]}.`}</span>
        </button>
      </li>
    );
  },
  (p, n) => p.rev === n.rev && p.selected === n.selected && p.status === n.status && p.shown === n.shown && p.quiet === n.quiet && p.a === n.a,
);

export function AgentList(props: { state: FloorState; agents: Agent[]; now: number; quietAfter: number; here: ReadonlySet<string> | null; selected: string | null; onPick: (id: string) => void }) {
  const shown = (a: Agent) => shownStatus(a, props.now, props.quietAfter, props.here);
  const quiet = (a: Agent) => (shown(a) === 'quiet' ? ago(props.now - a.lastSeen) : null);
  const { state } = props;
  const byTeam = new Map<string, Agent[]>();
  for (const a of props.agents) {
    let l = byTeam.get(a.team);
    if (!l) byTeam.set(a.team, (l = []));
    l.push(a);
  }
  const urgent = props.agents.filter((a) => (a.status === 'waiting' || a.status === 'error') && a.leftAt === null).sort(byAttention);
  return (
    <aside id="floor-list" class="list" aria-label="Agents, in words" data-testid="list-view">
      {urgent.length > 0 && (
        <section class="urgent" aria-label="Needs you">
          <h2>Needs you</h2>
          <ul>
            {urgent.map((a) => (
              <AgentRow key={a.id} a={a} rev={a.rev} status={a.status} shown={shown(a)} quiet={quiet(a)} selected={a.id === props.selected} onPick={props.onPick} />
            ))}
          </ul>
        </section>
      )}
      {[...state.teams.values()].map((t) => {
        const members = (byTeam.get(t.id) ?? []).sort((x, y) => x.desk - y.desk);
        // Filtered (the floor's tools): a room with nobody shown is left out.
        if (members.length === 0 && props.agents.length !== state.agents.size) return null;
        return (
          <section key={t.id} class="team" data-testid={`team-${t.id}`} aria-label={`Room ${t.name}`}>
            <h2>
              {t.name} <span class="n">{members.length}</span>
              <TeamCost team={t.name} />
            </h2>
            <p class="task" data-testid={`whiteboard-${t.id}`}>
              <span class="k">Whiteboard:</span> {t.task || '—'}
            </p>
            <ul>
              {members.map((a) => (
                <AgentRow key={a.id} a={a} rev={a.rev} status={a.status} shown={shown(a)} quiet={quiet(a)} selected={a.id === props.selected} onPick={props.onPick} />
              ))}
            </ul>
          </section>
        );
      })}
    </aside>
  );
}

// The floor in words: the agents who need a person first, then every room
// with its whiteboard and its agents by desk. It is the accessible view of
// the canvas (keyboard, screen readers) and says what the canvas shows.
import { memo } from 'preact/compat';
import type { Agent, FloorState, Status } from '../../../../src/core/floor.js';
import { POSE_TEXT, STATUS_COLOR, STATUS_LABEL, byAttention } from '../look.js';
import { TeamCost } from '../../shared/cost.js';

const AgentRow = memo(
  function AgentRow(props: { a: Agent; rev: number; status: Status; selected: boolean; onPick: (id: string) => void }) {
    const a = props.a;
    return (
      <li data-testid={`agent-row-${a.id}`} data-status={a.status} data-team={a.team} class={`row row-${a.status}${props.selected ? ' sel' : ''}`}>
        <button onClick={() => props.onPick(a.id)} aria-label={`${a.name}, ${a.role || 'agent'}: ${STATUS_LABEL[a.status]}${a.leftAt !== null ? ', leaving' : ''}${a.activity ? '. ' + a.activity : ''}${a.tool ? '. Tool ' + a.tool : ''}. Pose: ${POSE_TEXT[a.status]}.`}>
          <span class="ring" style={{ '--c': STATUS_COLOR[a.status] }} aria-hidden="true" />
          <span class="who">
            <span class="name">{a.name}</span>
            {a.role && <span class="role">{a.role}</span>}
          </span>
          <span class="what">
            <span class="st" data-testid="row-status">{STATUS_LABEL[a.status]}</span>
            {a.tool && <span class="tool" data-testid="row-tool">{a.tool}</span>}
            {a.activity && <span class="act" data-testid="row-activity">{a.activity}</span>}
          </span>
        </button>
      </li>
    );
  },
  (p, n) => p.rev === n.rev && p.selected === n.selected && p.status === n.status && p.a === n.a,
);

export function AgentList(props: { state: FloorState; agents: Agent[]; selected: string | null; onPick: (id: string) => void }) {
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
              <AgentRow key={a.id} a={a} rev={a.rev} status={a.status} selected={a.id === props.selected} onPick={props.onPick} />
            ))}
          </ul>
        </section>
      )}
      {[...state.teams.values()].map((t) => {
        const members = (byTeam.get(t.id) ?? []).sort((x, y) => x.desk - y.desk);
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
                <AgentRow key={a.id} a={a} rev={a.rev} status={a.status} selected={a.id === props.selected} onPick={props.onPick} />
              ))}
            </ul>
          </section>
        );
      })}
    </aside>
  );
}

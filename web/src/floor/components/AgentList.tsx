// The floor in words: the agents who need a person first, then every room
// with its whiteboard and its agents by desk. It is the accessible view of
// the canvas (keyboard, screen readers) and says what the canvas shows.
//
// Cost on a big floor (500 agents, 200 events/s): re-rendering every row
// whenever anything changed made each refresh of the list one long frame.
// Now a section re-renders only when who is in it changes (a join, a leave,
// someone starting or stopping to need you) or what all its rows read (the
// clock, the selection); a row whose agent changed is refreshed by itself,
// a bounded number per animation frame (`ListRows`), so the list's work is
// spread over frames and follows the events, not the size of the floor.
import { memo } from 'preact/compat';
import { useEffect, useReducer, useRef } from 'preact/hooks';
import { shownStatus, type Shown } from '../../../../src/core/attention.js';
import type { Agent, FloorState, Team } from '../../../../src/core/floor.js';
import { ago } from '../../shared/time.js';
import { SHOWN_COLOR, SHOWN_LABEL, SHOWN_POSE, STATUS_LABEL, byAttention } from '../look.js';
import { TeamCost } from '../../shared/cost.js';

/** One row on the page: the revision of its agent it last showed, and how to refresh it. */
interface RowHandle {
  id: string;
  rev: number;
  refresh: () => void;
}

/**
 * The rows on the page, and which of them show an older revision of their
 * agent than the fold has: `scan` finds them, `flush` refreshes a few (each
 * row re-renders alone, not its section or the list).
 */
export class ListRows {
  private rows = new Set<RowHandle>();
  private stale = new Set<RowHandle>();

  add(h: RowHandle): () => void {
    this.rows.add(h);
    return () => {
      this.rows.delete(h);
      this.stale.delete(h);
    };
  }

  /** Marks the rows whose agent changed since they were rendered. */
  scan(s: FloorState): void {
    for (const h of this.rows) {
      const a = s.agents.get(h.id);
      if (a && a.rev !== h.rev) this.stale.add(h);
    }
  }

  /** Refreshes at most `max` stale rows (oldest marked first); returns how many are left. */
  flush(max: number): number {
    let n = 0;
    for (const h of this.stale) {
      if (n++ >= max) break;
      this.stale.delete(h);
      h.refresh();
    }
    return this.stale.size;
  }

  /** Rendered at `rev`: no longer stale. */
  rendered(h: RowHandle, rev: number): void {
    h.rev = rev;
    this.stale.delete(h);
  }
}

/** What every row reads besides its agent: when it is now, and what waits for a decision here. */
export interface RowContext {
  now: number;
  quietAfter: number;
  here: ReadonlySet<string> | null;
  rows: ListRows;
  onPick: (id: string) => void;
}

const shownOf = (a: Agent, c: RowContext) => shownStatus(a, c.now, c.quietAfter, c.here);
const quietOf = (a: Agent, c: RowContext, shown: Shown) => (shown === 'quiet' ? ago(c.now - a.lastSeen) : null);

const AgentRow = memo(
  function AgentRow(props: { a: Agent; rev: number; shown: Shown; quiet: string | null; selected: boolean; ctx: RowContext }) {
    const a = props.a;
    const [, refresh] = useReducer((n: number) => n + 1, 0);
    const handle = useRef<RowHandle | null>(null);
    if (!handle.current) handle.current = { id: a.id, rev: -1, refresh: () => refresh(0) };
    props.ctx.rows.rendered(handle.current, a.rev);
    useEffect(() => props.ctx.rows.add(handle.current!), [props.ctx.rows]);
    // Read afresh: a row refreshed on its own has its section's props of before.
    const shown = shownOf(a, props.ctx);
    const quiet = quietOf(a, props.ctx, shown);
    // Silent too long while "working": say quiet and when it was last heard, not a guess.
    const st = quiet ? `Quiet, last heard ${quiet} (was ${STATUS_LABEL[a.status].toLowerCase()})` : SHOWN_LABEL[shown];
    return (
      <li data-testid={`agent-row-${a.id}`} data-status={a.status} data-shown={shown} data-quiet={quiet ? 'true' : undefined} data-team={a.team} class={`row row-${shown}${props.selected ? ' sel' : ''}`}>
        {/* The name is what the row shows, in its order (WCAG 2.5.3), and then the pose in words. */}
        <button onClick={() => props.ctx.onPick(a.id)}>
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
  (p, n) => p.rev === n.rev && p.selected === n.selected && p.shown === n.shown && p.quiet === n.quiet && p.a === n.a && p.ctx === n.ctx,
);

function rowsOf(members: Agent[], selected: string | null, ctx: RowContext) {
  return members.map((a) => {
    const shown = shownOf(a, ctx);
    return <AgentRow key={a.id} a={a} rev={a.rev} shown={shown} quiet={quietOf(a, ctx, shown)} selected={a.id === selected} ctx={ctx} />;
  });
}

/** Who is in a section, in order: it re-renders when this changes (or the clock, or the selection in it). */
const keyOf = (members: Agent[]) => members.map((a) => a.id).join('\u0000');

const Urgent = memo(
  function Urgent(props: { members: Agent[]; keyed: string; selected: string | null; ctx: RowContext }) {
    return (
      <section class="urgent" aria-label="Needs you">
        <h2>Needs you</h2>
        <ul>{rowsOf(props.members, props.selected, props.ctx)}</ul>
      </section>
    );
  },
  (p, n) => p.keyed === n.keyed && p.selected === n.selected && p.ctx === n.ctx,
);

const Room = memo(
  function Room(props: { t: Team; name: string; task: string; members: Agent[]; keyed: string; selected: string | null; ctx: RowContext }) {
    const { t, members } = props;
    return (
      <section class="team" data-testid={`team-${t.id}`} aria-label={`Room ${props.name}`}>
        <h2>
          {props.name} <span class="n">{members.length}</span>
          <TeamCost team={props.name} />
        </h2>
        <p class="task" data-testid={`whiteboard-${t.id}`}>
          <span class="k">Whiteboard:</span> {props.task || '—'}
        </p>
        <ul>{rowsOf(members, props.selected, props.ctx)}</ul>
      </section>
    );
  },
  (p, n) => p.t === n.t && p.name === n.name && p.task === n.task && p.keyed === n.keyed && p.selected === n.selected && p.ctx === n.ctx,
);

export function AgentList(props: { state: FloorState; agents: Agent[]; ctx: RowContext; selected: string | null }) {
  const { state, ctx } = props;
  const byTeam = new Map<string, Agent[]>();
  for (const a of props.agents) {
    let l = byTeam.get(a.team);
    if (!l) byTeam.set(a.team, (l = []));
    l.push(a);
  }
  const urgent = props.agents.filter((a) => (a.status === 'waiting' || a.status === 'error') && a.leftAt === null).sort(byAttention);
  // The selection, for the one section that holds it (the others' props stay the same).
  const sel = (members: Agent[]) => (props.selected !== null && members.some((a) => a.id === props.selected) ? props.selected : null);
  return (
    <aside id="floor-list" class="list" aria-label="Agents, in words" data-testid="list-view">
      {urgent.length > 0 && <Urgent members={urgent} keyed={keyOf(urgent)} selected={sel(urgent)} ctx={ctx} />}
      {[...state.teams.values()].map((t) => {
        const members = (byTeam.get(t.id) ?? []).sort((x, y) => x.desk - y.desk);
        // Filtered (the floor's tools): a room with nobody shown is left out.
        if (members.length === 0 && props.agents.length !== state.agents.size) return null;
        return <Room key={t.id} t={t} name={t.name} task={t.task} members={members} keyed={keyOf(members)} selected={sel(members)} ctx={ctx} />;
      })}
    </aside>
  );
}

// The floor page: the canvas (driven by requestAnimationFrame), and around it
// a small DOM that Preact re-renders at most a few times a second: the
// connection state, the counts by status, the agent card and the list view
// (the same state in words, for keyboards and screen readers).

import { memo } from 'preact/compat';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { STATUSES, countByStatus, type Agent, type FloorState, type Status } from '../../../src/core/floor.js';
import { FloorClient, type Connection } from './live.js';
import { FloorScene } from './scene.js';
import { ATTENTION, POSE_TEXT, STATUS_COLOR, STATUS_LABEL } from './look.js';
import { AgentApprovals } from '../approvals/InboxView.js';
import type { RoostHook } from './hook.js';

/** DOM refresh period: the canvas is live per frame, the words around it need not be. */
const UI_EVERY_MS = 250;

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s ago`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  return `${Math.round(m / 60)} h ago`;
}

const CONNECTION_TEXT: Record<Connection, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  replaying: 'Replaying…',
};

export function FloorView() {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const wrapRef = useRef<HTMLDivElement>(null);
  const [, setTick] = useState(0);
  const [selected, setSelected] = useState<string | null>(null);
  const [showList, setShowList] = useState(() => localStorage.getItem('roost.floor.list') !== 'hidden');
  const client = useMemo(() => new FloorClient(), []);
  const sceneRef = useRef<FloorScene | null>(null);
  const selectedRef = useRef<string | null>(null);
  selectedRef.current = selected;

  useEffect(() => {
    const canvas = canvasRef.current!;
    const scene = new FloorScene(canvas);
    sceneRef.current = scene;
    const mq = window.matchMedia('(prefers-reduced-motion: reduce)');
    const onMotion = () => {
      scene.reducedMotion = mq.matches;
      scene.markDirty();
    };
    onMotion();
    mq.addEventListener('change', onMotion);

    const hook: RoostHook = {
      client,
      scene,
      get state() {
        return client.state;
      },
      where(id, part = 'body') {
        const p = scene.screenOf(id, part);
        if (!p) return null;
        const r = canvas.getBoundingClientRect();
        return { x: r.left + p.x, y: r.top + p.y };
      },
      afterDraw: null,
      frameWork: new Float64Array(4096),
      frameCount: 0,
      drawWork: new Float64Array(4096),
      drawCount: 0,
    };
    window.__roost = hook;

    let uiDirty = true;
    let lastUi = 0;
    client.onConnection = () => {
      uiDirty = true;
    };
    client.start();

    const resize = () => {
      const r = wrapRef.current!.getBoundingClientRect();
      scene.resize(Math.floor(r.width), Math.floor(r.height), window.devicePixelRatio || 1);
    };
    const ro = new ResizeObserver(resize);
    ro.observe(wrapRef.current!);
    resize();

    let raf = 0;
    let lastDraw = 0;
    const frame = () => {
      raf = requestAnimationFrame(frame);
      const t0 = performance.now();
      const now = Date.now();
      const d = client.drain(now);
      if (d.replaced) scene.replaceState(client.state);
      else if (d.changed) scene.apply(d.effects, client.state, now);
      if (d.changed) uiDirty = true;
      scene.selected = selectedRef.current;
      // A big floor is redrawn at most 30 times a second: without a GPU, rasterizing
      // the whole canvas is the main cost, and walking at 30 fps reads as smooth.
      const big = client.state.agents.size > 60;
      let drew = false;
      if (!big || t0 - lastDraw >= 30 || scene.pendingInput) {
        if ((drew = scene.draw(client.state, now))) lastDraw = t0;
      }
      const work = performance.now() - t0;
      hook.frameWork[hook.frameCount++ % 4096] = work;
      if (drew) hook.drawWork[hook.drawCount++ % 4096] = work;
      if (hook.afterDraw && d.events.length) hook.afterDraw(d.events, Date.now());
      if (uiDirty && t0 - lastUi >= UI_EVERY_MS) {
        uiDirty = false;
        lastUi = t0;
        setTick((n) => n + 1);
      }
    };
    raf = requestAnimationFrame(frame);
    // A ticking clock for "last seen", and a heartbeat for the DOM when frames are sparse.
    const slow = window.setInterval(() => {
      uiDirty = true;
    }, 5_000);
    return () => {
      cancelAnimationFrame(raf);
      clearInterval(slow);
      ro.disconnect();
      mq.removeEventListener('change', onMotion);
      client.stop();
      if (window.__roost === hook) delete window.__roost;
    };
  }, [client]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setSelected(null);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const state = client.state;
  const counts = countByStatus(state);
  const agents = [...state.agents.values()];
  const selAgent = selected ? state.agents.get(selected) ?? null : null;

  const onCanvasClick = (e: MouseEvent) => {
    const scene = sceneRef.current;
    if (!scene) return;
    const r = (e.currentTarget as HTMLCanvasElement).getBoundingClientRect();
    const id = scene.hit(e.clientX - r.left, e.clientY - r.top, client.state);
    setSelected(id);
    scene.markDirty();
  };

  // Keyboard on the canvas: arrows walk through agents, most urgent first; Enter opens the card.
  const order = () => [...client.state.agents.values()].filter((a) => a.leftAt === null).sort(byAttention).map((a) => a.id);
  const onCanvasKey = (e: KeyboardEvent) => {
    const scene = sceneRef.current;
    if (!scene) return;
    const ids = order();
    if (ids.length === 0) return;
    const i = scene.focused ? ids.indexOf(scene.focused) : -1;
    if (e.key === 'ArrowRight' || e.key === 'ArrowDown') scene.focused = ids[(i + 1) % ids.length];
    else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') scene.focused = ids[(i - 1 + ids.length) % ids.length];
    else if ((e.key === 'Enter' || e.key === ' ') && scene.focused) setSelected(scene.focused);
    else return;
    e.preventDefault();
    scene.markDirty();
    setTick((n) => n + 1);
  };
  const focusedAgent = sceneRef.current?.focused ? state.agents.get(sceneRef.current.focused) : undefined;

  const total = agents.length;
  const summary = `${total} agent${total === 1 ? '' : 's'} in ${state.teams.size} room${state.teams.size === 1 ? '' : 's'}` + (counts.waiting ? `, ${counts.waiting} waiting for you` : '') + (counts.error ? `, ${counts.error} in error` : '');

  return (
    <div class="floor">
      <div class="floor-bar">
        <div class={`conn conn-${client.connection}`} data-testid="connection" data-state={client.connection} role="status" aria-live="polite">
          <span class="dot" aria-hidden="true" />
          {CONNECTION_TEXT[client.connection]}
        </div>
        <ul class="counts" aria-label="Agents by status" data-testid="counts">
          {STATUSES.map((s) => (
            <li
              key={s}
              class={`count count-${s}${counts[s] ? ' some' : ''}${(s === 'waiting' || s === 'error') && counts[s] ? ' urgent' : ''}`}
              data-status={s}
              data-count={counts[s]}
              style={{ '--c': STATUS_COLOR[s] }}
            >
              <span class="swatch" aria-hidden="true" />
              <span class="n">{counts[s]}</span> {STATUS_LABEL[s]}
            </li>
          ))}
        </ul>
        <button class="toggle" aria-pressed={showList} aria-controls="floor-list" onClick={() => {
          const v = !showList;
          setShowList(v);
          localStorage.setItem('roost.floor.list', v ? 'shown' : 'hidden');
        }}>
          {showList ? 'Hide list' : 'Show list'}
        </button>
      </div>
      <div class="floor-main">
        <div class="canvas-wrap" ref={wrapRef}>
          <canvas
            ref={canvasRef}
            data-testid="floor-canvas"
            tabIndex={0}
            role="img"
            aria-label={`The floor: ${summary}. Use the arrow keys to move between agents and Enter to open a card; the list beside it says the same in words.`}
            onClick={onCanvasClick}
            onKeyDown={onCanvasKey}
          />
          {total === 0 && (
            <div class="empty" data-testid="empty">
              <h2>The floor is empty</h2>
              <p>
                Agents appear here as soon as they report. Try <code>npx roost demo</code>, or post one event:
              </p>
              <pre>{`curl -XPOST ${location.origin}/events -H 'content-type: application/json' \\\n  -d '{"type":"status","agent":"bot-1","team":"Payments","status":"working"}'`}</pre>
            </div>
          )}
          {total > 0 && (
            <details class="legend" data-testid="legend">
              <summary>Legend</summary>
              <ul>
                {STATUSES.map((st) => (
                  <li key={st}>
                    <span class="ring" style={{ '--c': STATUS_COLOR[st] }} aria-hidden="true" />
                    <b>{STATUS_LABEL[st]}</b>: {POSE_TEXT[st]}
                  </li>
                ))}
                <li>Paper plane: a message (blue and bigger: a briefing for a new helper). Headset: the team lead.</li>
              </ul>
            </details>
          )}
          {focusedAgent && <div class="sr-only" aria-live="polite">{`${focusedAgent.name}, ${STATUS_LABEL[focusedAgent.status]}${focusedAgent.activity ? ', ' + focusedAgent.activity : ''}`}</div>}
          {selAgent && <AgentCard agent={selAgent} state={state} onClose={() => setSelected(null)} onPick={setSelected} />}
        </div>
        {showList && <ListView state={state} agents={agents} selected={selected} onPick={(id) => setSelected(id)} />}
      </div>
    </div>
  );
}

function byAttention(a: Agent, b: Agent): number {
  return ATTENTION[a.status] - ATTENTION[b.status] || a.seq - b.seq;
}

function AgentCard(props: { agent: Agent; state: FloorState; onClose: () => void; onPick: (id: string) => void }) {
  const { agent: a, state } = props;
  const team = state.teams.get(a.team);
  const parent = a.parent ? state.agents.get(a.parent) : undefined;
  const helpers = [...state.agents.values()].filter((x) => x.parent === a.id);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    ref.current?.focus();
  }, [a.id]);
  const row = (k: string, v: preact.ComponentChildren, testid: string) => (
    <>
      <dt>{k}</dt>
      <dd data-testid={`card-${testid}`}>{v}</dd>
    </>
  );
  return (
    <div class="card" role="dialog" aria-label={`Agent ${a.name}`} data-testid="agent-card" tabIndex={-1} ref={ref} style={{ '--c': STATUS_COLOR[a.status] }}>
      <header>
        <span class="badge" aria-hidden="true" />
        <h2 data-testid="card-name">{a.name}</h2>
        <button class="close" aria-label="Close card" onClick={props.onClose}>
          ×
        </button>
      </header>
      {/* A tool call of this agent waiting for a decision: answerable right here. */}
      <AgentApprovals agent={a.id} />
      <dl>
        {row('Status', <span class={`pill pill-${a.status}`}>{STATUS_LABEL[a.status]}{a.leftAt !== null ? ' (leaving)' : ''}</span>, 'status')}
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
        {row('Last seen', <time dateTime={new Date(a.lastSeen).toISOString()} title={new Date(a.lastSeen).toLocaleString()}>{ago(Date.now() - a.lastSeen)}</time>, 'last-seen')}
        {row('Id', <code>{a.id}</code>, 'id')}
      </dl>
    </div>
  );
}

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

function ListView(props: { state: FloorState; agents: Agent[]; selected: string | null; onPick: (id: string) => void }) {
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

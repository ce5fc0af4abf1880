// The floor page: the canvas (driven by requestAnimationFrame), and around it
// a small DOM that Preact re-renders at most a few times a second: the
// connection state, the counts by status, the agent card and the list view
// (the same state in words, for keyboards and screen readers).

import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { countShown, shownStatus } from '../../../src/core/attention.js';
import { QUIET_AFTER_MS, agentIdOf, floorFromJSON, type FloorJSON, type FloorState } from '../../../src/core/floor.js';
import { FloorClient } from '../live/floor.js';
import { ConnectionBadge } from '../shared/ConnectionBadge.js';
import { loadPref, savePref } from '../shared/prefs.js';
import { ProjectSwitcher } from '../shared/ProjectSwitcher.js';
import { pageProject } from '../shared/scope.js';
import { useWaiting } from '../shared/waiting.js';
import { RewindBar, useRewind, type RewindBody } from '../shared/Rewind.js';
import { AgentCard } from './components/AgentCard.js';
import { AgentList, ListRows, type RowContext } from './components/AgentList.js';
import { EmptyFloor } from './components/EmptyFloor.js';
import { FloorControls } from './components/FloorControls.js';
import { Pulse, type PulseSink } from './components/Pulse.js';
import { Timeline } from './components/Timeline.js';
import { FloorTrusted } from './components/Trusted.js';
import { NO_FILTERS, filtersKey, matcher, rolesOf, type Filters } from './camera.js';
import { attachFloorInput, type FloorInput } from './input.js';
import { Legend } from './components/Legend.js';
import { StatusCounts } from './components/StatusCounts.js';
import type { RoostHook } from './hook.js';
import { SHOWN_LABEL, byAttention } from './look.js';
import { FloorScene } from './scene.js';
import './floor.css';

/** DOM refresh period: the canvas is live per frame, the words around it need not be. */
const UI_EVERY_MS = 250;
/** List rows whose agent changed, refreshed per DOM refresh at most (components/AgentList.tsx). */
const ROWS_PER_TICK = 120;
/** Whether the list beside the canvas is shown (a person's choice, kept). */
const LIST_KEY = 'roost.floor.list';
/** Seconds of silence before a working or thinking agent shows as quiet (a setting; docs/floor.md, "Quiet agents"). */
const QUIET_KEY = 'roost.floor.quietAfter';

/** The moment a search result opened (`?timeline=<agent>&from=<f:pos|a:pos>`, SearchBox.tsx): that agent's timeline, at that entry. */
interface Moment {
  agent: string;
  from: string;
}
function momentOfPage(): Moment | null {
  const q = new URLSearchParams(location.search);
  const agent = q.get('timeline');
  const from = q.get('from');
  return agent && agent.length <= 1024 && from && /^[fa]:\d{1,15}$/.test(from) ? { agent, from } : null;
}

function quietAfterMs(): number {
  const s = Number(loadPref(QUIET_KEY));
  return Number.isFinite(s) && s > 0 ? s * 1000 : QUIET_AFTER_MS;
}

/** What GET /rewind answers: the floor at a past position. */
type FloorRewind = RewindBody & FloorJSON;

export function FloorView() {
  // Rewind: the floor as it was at `?at=` (the server's fold of the past); the live client keeps folding behind it.
  const rewind = useRewind<FloorRewind>('/rewind');
  const past = useMemo<FloorState | null>(() => (rewind.shown ? floorFromJSON(rewind.shown) : null), [rewind.shown]);
  const pastRef = useRef<FloorState | null>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const wrapRef = useRef<HTMLDivElement>(null);
  const [, setTick] = useState(0);
  const [selected, setSelected] = useState<string | null>(null);
  const [showList, setShowList] = useState(() => loadPref(LIST_KEY) !== 'hidden');
  // The page's project (`?project=`): the shell remounts the view when it changes.
  const client = useMemo(() => new FloorClient(pageProject()), []);
  const quietAfter = useMemo(quietAfterMs, []);
  // What waits for a decision here: the one selector the nav badge and the inbox count too.
  const waiting = useWaiting();
  // The same set while its members are (the list's rows compare it), a fresh one when they change.
  const hereKept = useRef<{ key: string; set: ReadonlySet<string> | null }>({ key: '', set: null });
  const hereKey = waiting.here === null ? '' : '+' + [...waiting.here].sort().join('\u0000');
  if (hereKept.current.key !== hereKey) hereKept.current = { key: hereKey, set: waiting.here };
  const here = hereKept.current.set;
  const hereRef = useRef(here);
  hereRef.current = past ? null : here;
  // The clock the view reads quiet agents against: the fold stays pure, the view passes `now` in.
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = window.setInterval(() => setNow(Date.now()), Math.min(10_000, Math.max(250, quietAfter / 4)));
    return () => window.clearInterval(t);
  }, [quietAfter]);
  const sceneRef = useRef<FloorScene | null>(null);
  const inputRef = useRef<FloorInput | null>(null);
  // Who the canvas and the list show (camera.ts): not kept, a fresh page shows everyone.
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const shown = useMemo(() => matcher(filters), [filters]);
  // History: the timeline of one agent (opened from its card), and the pulse chart with its live feed.
  const [historyOf, setHistoryOf] = useState<string | null>(null);
  const [pulseOpen, setPulseOpen] = useState(false);
  // A search result's moment: the page's URL says it, and a later search (same page, new URL) changes it.
  const [moment, setMoment] = useState<Moment | null>(momentOfPage);
  useEffect(() => {
    const on = () => setMoment(momentOfPage());
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  const closeMoment = () => {
    setMoment(null);
    const q = new URLSearchParams(location.search);
    q.delete('timeline');
    q.delete('from');
    const s = q.toString();
    history.replaceState(null, '', location.pathname + (s ? '?' + s : '') + location.hash);
  };
  const pulseSink = useRef<PulseSink | null>(null);
  const selectedRef = useRef<string | null>(null);
  selectedRef.current = selected;
  // The list's rows, refreshed a few per frame when their agent changed.
  const rows = useMemo(() => new ListRows(), []);
  const pickRef = useRef<(id: string) => void>(() => {});
  pickRef.current = (id) => {
    setSelected(id);
    sceneRef.current?.reveal(id);
  };

  useEffect(() => {
    const canvas = canvasRef.current!;
    const scene = new FloorScene(canvas);
    sceneRef.current = scene;
    const input = (inputRef.current = attachFloorInput(canvas, scene));
    // The canvas draws what the list says: quiet, or waiting in its terminal (src/core/attention.ts).
    scene.lookOf = (a, t) => shownStatus(a, t, quietAfter, hereRef.current);
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
      // A resize may still be delivered after the view left the page (a notification's click went elsewhere).
      if (!wrapRef.current) return;
      const r = wrapRef.current.getBoundingClientRect();
      scene.resize(Math.floor(r.width), Math.floor(r.height), window.devicePixelRatio || 1);
    };
    const ro = new ResizeObserver(resize);
    ro.observe(wrapRef.current!);
    resize();

    let raf = 0;
    let lastScale = 0;
    let lastDraw = 0;
    let lastStep = 0;
    const step = () => {
      const t0 = performance.now();
      lastStep = t0;
      const now = Date.now();
      const d = client.drain(now);
      // Rewound, the canvas shows the past: the live frames are folded, not drawn.
      const pastShown = pastRef.current;
      if (pastShown) {
        if (d.changed) uiDirty = true;
      } else if (d.replaced) scene.replaceState(client.state);
      else if (d.changed) scene.apply(d.effects, client.state, now);
      if (d.changed && !pastShown) {
        uiDirty = true;
        rows.scan(client.state);
      }

      if (pulseSink.current && d.events.length) {
        const teams: string[] = [];
        for (const ev of d.events) {
          const id = agentIdOf(ev);
          const team = id !== undefined ? client.state.agents.get(id)?.team : undefined;
          if (team !== undefined) teams.push(team);
        }
        pulseSink.current(teams, now);
      }
      scene.selected = selectedRef.current;
      // A big floor is redrawn at most 30 times a second: without a GPU, rasterizing
      // the whole canvas is the main cost, and walking at 30 fps reads as smooth.
      const big = client.state.agents.size > 60;
      let drew = false;
      if (!big || t0 - lastDraw >= 30 || scene.pendingInput) {
        if ((drew = scene.draw(pastShown ?? client.state, now))) lastDraw = t0;
      }
      // The zoom level beside the buttons follows the wheel and the keys.
      if (scene.scale !== lastScale) {
        lastScale = scene.scale;
        uiDirty = true;
      }
      const work = performance.now() - t0;
      hook.frameWork[hook.frameCount++ % 4096] = work;
      if (drew) hook.drawWork[hook.drawCount++ % 4096] = work;
      if (hook.afterDraw && d.events.length) hook.afterDraw(d.events, Date.now());
      if (uiDirty && t0 - lastUi >= UI_EVERY_MS) {
        uiDirty = false;
        lastUi = t0;
        // The list's changed rows, with the rest of the DOM: every frame that changes the page costs
        // the browser a style, a layout, a paint and a commit, so they share one frame four times a second.
        rows.flush(ROWS_PER_TICK);
        setTick((n) => n + 1);
      }
    };
    const frame = () => {
      raf = requestAnimationFrame(frame);
      step();
    };
    raf = requestAnimationFrame(frame);
    // A ticking clock for "last seen", and a heartbeat for the DOM when frames are sparse.
    const slow = window.setInterval(() => {
      uiDirty = true;
    }, 5_000);
    // A tab the browser shows but paints rarely (an unfocused window of a
    // headless or a throttling browser: animation frames about once a second)
    // still folds and lists what arrives within about UI_EVERY_MS.
    const starved = window.setInterval(() => {
      if (document.visibilityState === 'visible' && performance.now() - lastStep > UI_EVERY_MS) step();
    }, UI_EVERY_MS);
    return () => {
      cancelAnimationFrame(raf);
      clearInterval(slow);
      clearInterval(starved);
      ro.disconnect();
      input.detach();
      mq.removeEventListener('change', onMotion);
      client.stop();
      if (window.__roost === hook) delete window.__roost;
    };
  }, [client]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        setSelected(null);
        setHistoryOf(null);
        setMoment(null);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  useEffect(() => {
    sceneRef.current?.setFilter(filtersKey(filters), shown);
  }, [filters, shown]);

  // Rewound: the past's state, read against the past's clock, with nothing of today's approvals.
  useEffect(() => {
    pastRef.current = past;
    const scene = sceneRef.current;
    if (!scene) return;
    const s = past ?? client.state;
    scene.replaceState(s);
    rows.scan(s);
    rows.flush(Number.MAX_SAFE_INTEGER);
    scene.markDirty();
  }, [past, client, rows]);
  const state = past ?? client.state;
  const viewNow = past ? rewind.shown?.at ?? now : now;
  const viewHere = past ? null : here;
  const rowContext = useMemo<RowContext>(() => ({ now: viewNow, quietAfter, here: viewHere, rows, onPick: (id) => pickRef.current(id) }), [viewNow, quietAfter, viewHere, rows]);
  const counts = countShown(state, !past && waiting.client.ready ? waiting.client.state : null, viewNow, quietAfter);
  const everyone = [...state.agents.values()];
  const agents = shown ? everyone.filter(shown) : everyone;
  const selAgent = selected ? state.agents.get(selected) ?? null : null;

  const onCanvasClick = (e: MouseEvent) => {
    const scene = sceneRef.current;
    if (!scene || inputRef.current?.swallowClick()) return;
    const r = (e.currentTarget as HTMLCanvasElement).getBoundingClientRect();
    const id = scene.hit(e.clientX - r.left, e.clientY - r.top, client.state);
    setSelected(id);
    scene.markDirty();
  };

  // A double click on a room fits it to the canvas.
  const onCanvasDblClick = (e: MouseEvent) => {
    const scene = sceneRef.current;
    if (!scene) return;
    const r = (e.currentTarget as HTMLCanvasElement).getBoundingClientRect();
    const team = scene.roomAt(e.clientX - r.left, e.clientY - r.top);
    if (team) scene.focusRoom(team);
  };

  // Keyboard on the canvas: arrows walk through agents, most urgent first (the view follows); Enter opens the card;
  // + and − zoom, 0 fits, Shift+arrows pan, F fits the focused agent's room.
  const order = () => {
    const scene = sceneRef.current;
    return [...client.state.agents.values()].filter((a) => a.leftAt === null && (!scene || scene.isShown(a))).sort(byAttention).map((a) => a.id);
  };
  const onCanvasKey = (e: KeyboardEvent) => {
    const scene = sceneRef.current;
    if (!scene || e.altKey || e.ctrlKey || e.metaKey) return;
    const pan = 120;
    if (e.key === '+' || e.key === '=') scene.zoomBy(1.25);
    else if (e.key === '-' || e.key === '_') scene.zoomBy(1 / 1.25);
    else if (e.key === '0') scene.fitNow();
    else if (e.shiftKey && e.key.startsWith('Arrow')) {
      const dx = e.key === 'ArrowLeft' ? pan : e.key === 'ArrowRight' ? -pan : 0;
      const dy = e.key === 'ArrowUp' ? pan : e.key === 'ArrowDown' ? -pan : 0;
      scene.panBy(dx, dy);
    } else if ((e.key === 'f' || e.key === 'F') && scene.focused) {
      const a = client.state.agents.get(scene.focused);
      if (a) scene.focusRoom(a.team);
    } else {
      const ids = order();
      if (ids.length === 0) return;
      const i = scene.focused ? ids.indexOf(scene.focused) : -1;
      if (e.key === 'ArrowRight' || e.key === 'ArrowDown') scene.focused = ids[(i + 1) % ids.length];
      else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') scene.focused = ids[(i - 1 + ids.length) % ids.length];
      else if ((e.key === 'Enter' || e.key === ' ') && scene.focused) setSelected(scene.focused);
      else return;
      if (scene.focused) scene.reveal(scene.focused);
    }
    e.preventDefault();
    scene.markDirty();
    setTick((n) => n + 1);
  };
  const focusedAgent = sceneRef.current?.focused ? state.agents.get(sceneRef.current.focused) : undefined;

  const total = everyone.length;
  const summary = `${total} agent${total === 1 ? '' : 's'} in ${state.teams.size} room${state.teams.size === 1 ? '' : 's'}` + (counts.waiting ? `, ${counts.waiting} waiting for you` : '') + (counts.terminal ? `, ${counts.terminal} waiting in their terminal` : '') + (counts.error ? `, ${counts.error} in error` : '');

  return (
    <div class="floor">
      <div class="floor-bar">
        <ConnectionBadge state={client.connection} testid="connection" />
        <ProjectSwitcher testid="floor-project" />
        <StatusCounts counts={counts} />
        <button class="toggle" aria-pressed={showList} aria-controls="floor-list" onClick={() => {
          const v = !showList;
          setShowList(v);
          savePref(LIST_KEY, v ? 'shown' : 'hidden');
        }}>
          {showList ? 'Hide list' : 'Show list'}
        </button>
      </div>
      <RewindBar rewind={rewind} livePosition={client.position} what="The floor" />
      <FloorControls
        state={state}
        roles={rolesOf(state)}
        filters={filters}
        shown={agents.length}
        total={everyone.length}
        zoom={sceneRef.current?.scale ?? 1}
        fitted={sceneRef.current?.mode !== 'free'}
        onFilters={setFilters}
        onFind={(a) => {
          // A find shows the agent even if the filters hid it.
          if (shown && !shown(a)) setFilters(NO_FILTERS);
          setSelected(a.id);
          requestAnimationFrame(() => sceneRef.current?.reveal(a.id));
        }}
        onFocusTeam={(t) => sceneRef.current?.focusRoom(t)}
        onZoom={(k) => sceneRef.current?.zoomBy(k)}
        onFit={() => sceneRef.current?.fitNow()}
        pulse={pulseOpen}
        onPulse={() => setPulseOpen(!pulseOpen)}
      />
      <div class="floor-main">
        <div class="canvas-wrap" ref={wrapRef}>
          <canvas
            ref={canvasRef}
            data-testid="floor-canvas"
            tabIndex={0}
            role="img"
            aria-label={`The floor: ${summary}. Use the arrow keys to move between agents and Enter to open a card, plus and minus to zoom, 0 to fit, Shift and the arrows to pan; the list beside it says the same in words.`}
            onClick={onCanvasClick}
            onDblClick={onCanvasDblClick}
            onKeyDown={onCanvasKey}
          />
          {total === 0 && <EmptyFloor />}
          {total > 0 && <Legend />}
          {total > 0 && !past && <FloorTrusted state={state} onPick={setSelected} />}
          {focusedAgent && <div class="sr-only" aria-live="polite">{`${focusedAgent.name}, ${SHOWN_LABEL[shownStatus(focusedAgent, viewNow, quietAfter, viewHere)]}${focusedAgent.activity ? ', ' + focusedAgent.activity : ''}`}</div>}
          {moment && (
            <Timeline
              key={`${moment.agent} ${moment.from}`}
              agent={state.agents.get(moment.agent) ?? { id: moment.agent, name: moment.agent }}
              from={moment.from}
              project={client.project}
              names={(id) => state.agents.get(id)?.name ?? id}
              onClose={closeMoment}
            />
          )}
          {!moment && selAgent && historyOf !== selAgent.id && (
            <AgentCard agent={selAgent} state={state} now={viewNow} quietAfter={quietAfter} here={viewHere} onClose={() => setSelected(null)} onPick={setSelected} onHistory={() => setHistoryOf(selAgent.id)} />
          )}
          {!moment && selAgent && historyOf === selAgent.id && (
            <Timeline agent={selAgent} project={client.project} names={(id) => state.agents.get(id)?.name ?? id} onClose={() => setHistoryOf(null)} />
          )}
          {pulseOpen && (
            <Pulse
              project={client.project}
              teamName={(id) => client.state.teams.get(id)?.name ?? id}
              register={(sink) => {
                pulseSink.current = sink;
              }}
              onClose={() => setPulseOpen(false)}
            />
          )}
        </div>
        {showList && <AgentList state={state} agents={agents} ctx={rowContext} selected={selected} />}
      </div>
    </div>
  );
}

// The floor app on the server: the log's `floor` stream folded by the shared
// floor fold, served as /events, /stream, /state, /health and /reset.
//
// Order of things for one POST /events: check every item (a bad batch stores
// nothing) → append the batch in one request (durable on return) → answer →
// the commit wakes `onCommit`, which folds the entries in position order and
// publishes their frames. Lifetimes are a logged `sweep` event, so a replay and
// a restart see exactly the removals the live stream saw.

import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  FLOOR_PROTOCOL_VERSION,
  LIMITS,
  SWEEP,
  agentIdOf,
  applyEvent,
  dueForSweep,
  emptyFloor,
  floorFromJSON,
  floorToJSON,
  newAgentsIn,
  type Effect,
  type FloorEvent,
  type FloorJSON,
  type FloorState,
  type Status,
} from '../core/floor.js';
import { countPulse, emptyPulse, type PulseState } from '../core/pulse.js';
import { MAX_BATCH, MAX_NEW_AGENTS_PER_BATCH, checkFloorEvent, normalizeFloorEvent } from '../core/floor-wire.js';
import type { EventStore, LogEntry, NewEvent } from '../storage/types.js';
import { HttpError, MAX_BODY_BYTES, readJsonBody, sendError, sendJson, sendJsonText } from './http.js';
import type { ChannelOptions, Live, LiveChannel, ScopeSpec } from './live/index.js';
import { FoldedStream } from './folded.js';
import { PROJECT_PARAM } from './access.js';
import { route, type Route } from './route.js';
import type { RequestKey } from './keys.js';
import type { PerProject } from './scoped.js';
import { FLOOR_REWIND_EVERY, parseRewindAt, rewind } from './rewind.js';

export const FLOOR_STREAM = 'floor';

/**
 * The floor's routes, each served by the request's project's floor. `POST
 * /events` reads its own body with the hand-written, measured check (the
 * ingest path: no promise per request when the floor is started).
 */
export function floorRoutes(floors: PerProject<FloorService>, live: Live): Route[] {
  return [
    route({
      method: 'POST',
      path: '/events',
      auth: 'editor',
      body: 'raw',
      doc: 'one event or a batch of up to 200',
      // docs/floor.md: a retry with the same key and another body gets the first answer (no fingerprint).
      key: { fingerprint: false, legacy: (stream, key) => `${stream}:${key}` },
      handler: ({ req, res, key }) => floors.with(req, (f) => f.postEvents(req, res, key)),
    }),
    route({ method: 'GET', path: '/stream', auth: 'viewer', stream: true, handler: async ({ req, res, url, grant }) => void (await live.serve(req, res, url, grant!, [`floor:${grant!.project}`])) }),
    route({ method: 'GET', path: '/state', auth: 'viewer', handler: async ({ req, res }) => (await floors.of(req)).getState(req, res) }),
    route({ method: 'GET', path: '/rewind', auth: 'viewer', doc: 'the floor as it was at ?at=<position or ISO time> (read-only)', handler: async ({ req, res, url }) => (await floors.of(req)).getRewind(res, url) }),
    route({ method: 'POST', path: '/reset', auth: 'owner', handler: async ({ req, res }) => (await floors.of(req)).postReset(req, res) }),
  ];
}

/** Each project has its own floor; the default project's keeps the stream it always had. */
export function floorStream(project: string): string {
  return project === 'default' ? FLOOR_STREAM : `${FLOOR_STREAM}:${project}`;
}

export interface FloorOptions {
  live: Live;
  channel: ChannelOptions;
  /** The project whose floor this is (its live scope is `floor:<project>`). */
  project: string;
  /** How often lifetimes are checked, ms. */
  sweepEveryMs: number;
  /** A snapshot of the fold is stored every this many events. */
  snapshotEvery: number;
  /** Replays from the log longer than this get a reset snapshot instead. */
  maxReplay: number;
  version: string;
}

/** The live scope `floor:<project>`: a viewer of the project reads it. */
export function floorScope(floors: PerProject<FloorService>): ScopeSpec {
  return {
    need: (project) => ({ project: projectKey(project), min: 'viewer' }),
    open: async (project) => (await floors.get(project)).channel,
  };
}

/** A scope key that must be a project id (the floor's, approvals'). */
export function projectKey(key: string): string {
  if (!PROJECT_PARAM.test(key)) throw new HttpError(400, 'bad_request', 'a project id is 1 to 64 lowercase letters, digits, "-" or "_"');
  return key;
}

interface SnapshotBody {
  position: number;
  floor: FloorJSON;
}

/** One entry folded: its frame event name and JSON data (built without re-serializing the stored body). */
function fold(state: FloorState, entry: LogEntry): { name: string; data: string; event: FloorEvent; effects: Effect[] } {
  const event = (entry.value ?? JSON.parse(entry.body)) as FloorEvent;
  const effects: Effect[] = applyEvent(state, event);
  if (entry.type === SWEEP) {
    const removed = effects.length ? (effects[0] as { agents: string[] }).agents : [];
    return { name: 'removed', data: `{"agents":${JSON.stringify(removed)},"ts":${JSON.stringify(event.ts ?? null)}}`, event, effects };
  }
  return { name: 'event', data: `{"event":${entry.body},"effects":${JSON.stringify(effects)}}`, event, effects };
}

export class FloorService {
  private host: FoldedStream<FloorState>;
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweeping = false;
  private statusListeners = new Set<(agent: string, status: Status, at: number) => void>();
  readonly stream: string;
  /**
   * Events per minute per team, the last hour (GET /floor/pulse): counted as
   * entries are folded, at their append time, so it covers what this node
   * folded since it started (a restart counts from its stored snapshot on).
   */
  readonly pulse: PulseState = emptyPulse();

  constructor(
    private store: EventStore,
    private opts: FloorOptions,
  ) {
    this.stream = floorStream(opts.project);
    this.host = new FoldedStream<FloorState>(
      store,
      {
        stream: this.stream,
        scope: `floor:${opts.project}`,
        empty: emptyFloor,
        step: (state, entry) => {
          const { name, data, event, effects } = fold(state, entry);
          if (entry.type !== SWEEP && entry.type !== 'reset') {
            const id = agentIdOf(event);
            const team = id !== undefined ? state.agents.get(id)?.team : undefined;
            if (team !== undefined) countPulse(this.pulse, team, entry.at);
          }
          return { state, events: [{ name, data }], effects };
        },
        // Entries folded into the live state (never a replay's private copy): status changes to their listeners.
        applied: (entry, out) => {
          if (this.statusListeners.size === 0) return;
          const fx = (out as { effects?: Effect[] }).effects;
          if (fx) for (const e of fx) if (e.kind === 'status') for (const f of this.statusListeners) f(e.agent, e.status, entry.at);
        },
        snapshot: (state, position, reset) => JSON.stringify({ protocol: FLOOR_PROTOCOL_VERSION, epoch: this.store.epoch, position, reset, state: floorToJSON(state) }),
        stored: {
          every: Math.min(opts.snapshotEvery, FLOOR_REWIND_EVERY),
          body: (state, position) => JSON.stringify({ position, floor: floorToJSON(state) } satisfies SnapshotBody),
          load: (text) => {
            const body = JSON.parse(text) as SnapshotBody;
            return { state: floorFromJSON(body.floor), position: body.position };
          },
          label: 'snapshot',
          history: true,
        },
      },
      { live: opts.live, channel: opts.channel, maxReplay: opts.maxReplay },
    );
  }

  /**
   * Hears every status change the fold makes (agent, new status, the entry's
   * append time), for entries folded live or in the start's catch-up (the
   * listener judges freshness by the time): push notices.
   */
  onStatus(f: (agent: string, status: Status, at: number) => void): () => void {
    this.statusListeners.add(f);
    return () => this.statusListeners.delete(f);
  }

  /** The folded floor (the live state: read it, never change it). */
  get state(): FloorState {
    return this.host.state;
  }

  get position(): number {
    return this.host.position;
  }

  private get pos(): number {
    return this.host.position;
  }

  /** The live channel of `floor:<project>`. */
  get channel(): LiveChannel {
    return this.host.channel;
  }

  /** Loads the newest useful snapshot and folds the rest of the log; fills the replay ring. */
  async start(): Promise<void> {
    this.host.listen();
    await this.host.start();
    this.sweepTimer = setInterval(() => void this.sweepIfDue(), this.opts.sweepEveryMs);
    this.sweepTimer.unref();
  }

  async stop(): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    await this.host.stop(); // stops hearing commits now
  }

  private async sweepIfDue(): Promise<void> {
    if (this.sweeping) return;
    const now = Date.now();
    if (dueForSweep(this.state, now).length === 0) return;
    this.sweeping = true;
    try {
      await this.store.append(this.stream, [{ type: SWEEP, body: JSON.stringify({ type: SWEEP, ts: now }) }]);
    } catch (e) {
      console.error('roost: sweep failed', e);
    } finally {
      this.sweeping = false;
    }
  }

  // ------------------------------------------------------------ endpoints

  /**
   * POST /events. Callbacks rather than awaits: this is the ingest path, and
   * every promise and microtask per request shows in the bench.
   */
  postEvents = (req: IncomingMessage, res: ServerResponse, key: RequestKey | null): void => {
    readJsonBody(req, MAX_BODY_BYTES, (err, body) => {
      if (err) return sendError(res, err);
      let events: NewEvent[];
      try {
        events = this.checked(body);
      } catch (e) {
        return sendError(res, e);
      }
      (key ? key.append(this.store, this.stream, events) : this.store.append(this.stream, events)).then(
        // {ok, accepted, first, last, duplicate}: numbers and a boolean, written
        // as text (a third of JSON.stringify's cost, on the hot path).
        (r) => sendJsonText(res, 200, `{"ok":true,"accepted":${r.last - r.first + 1},"first":${r.first},"last":${r.last},"duplicate":${r.duplicate}}`),
        (e) => sendError(res, e),
      );
    });
  };

  /**
   * Events a server service reports (the flock's crows): the same check,
   * caps and append as `POST /events`, in batches of at most 200. Resolves
   * once they are durable (`lazy`: see AppendOptions.lazy, for a service that
   * reports again after a restart what it finds then); rejects with the
   * HttpError a client would get.
   */
  async post(events: FloorEvent[], opts: { lazy?: boolean } = {}): Promise<void> {
    for (let i = 0; i < events.length; i += MAX_BATCH) await this.store.append(this.stream, this.checked(events.slice(i, i + MAX_BATCH)), { lazy: opts.lazy === true });
  }

  /** A request's events, checked and normalized; an HttpError names the first bad one. */
  private checked(body: unknown): NewEvent[] {
    const items = Array.isArray(body) ? body : [body];
    if (items.length === 0) throw new HttpError(400, 'bad_request', 'the batch is empty');
    if (items.length > MAX_BATCH) throw new HttpError(413, 'too_large', `a batch holds at most ${MAX_BATCH} events, got ${items.length}`);
    for (let i = 0; i < items.length; i++) {
      const why = checkFloorEvent(items[i]);
      if (why) throw new HttpError(400, 'bad_request', Array.isArray(body) ? `event ${i}: ${why}` : why);
    }
    // What one request may create is capped here, against this node's floor
    // (the fold clamps again: stored events are hostile too), before anything
    // is normalized or serialized. docs/floor.md, "Limits".
    const fresh = newAgentsIn(this.state, items as FloorEvent[], MAX_NEW_AGENTS_PER_BATCH);
    if (fresh > MAX_NEW_AGENTS_PER_BATCH) throw new HttpError(413, 'too_large', `a batch may bring at most ${MAX_NEW_AGENTS_PER_BATCH} new agents onto the floor; this one brings more`);
    if (fresh > 0 && this.state.agents.size + fresh > LIMITS.agents) {
      throw new HttpError(409, 'conflict', `the floor holds at most ${LIMITS.agents} agents and has ${this.state.agents.size}; this would bring ${fresh} more (agents leave after 2 h of silence, or POST /reset)`);
    }
    const now = Date.now();
    const events: NewEvent[] = new Array(items.length);
    for (let i = 0; i < items.length; i++) {
      const e = normalizeFloorEvent(items[i] as Record<string, unknown>, now);
      events[i] = { type: e.type, body: JSON.stringify(e), value: e };
    }
    return events;
  }

  postReset = async (_req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const r = await this.store.append(this.stream, [{ type: 'reset', body: JSON.stringify({ type: 'reset', ts: Date.now() }) }]);
    sendJson(res, 200, { ok: true, position: r.last });
  };

  getState = (_req: IncomingMessage, res: ServerResponse): void => {
    sendJson(res, 200, { protocol: FLOOR_PROTOCOL_VERSION, epoch: this.store.epoch, position: this.pos, ...floorToJSON(this.state) });
  };

  /** GET /rewind?at=: the floor folded by the same fold from the nearest kept snapshot up to a past position or time. */
  getRewind = async (res: ServerResponse, url: URL): Promise<void> => {
    const r = await rewind(
      this.store,
      {
        stream: this.stream,
        empty: emptyFloor,
        load: (text) => {
          const body = JSON.parse(text) as SnapshotBody;
          return { state: floorFromJSON(body.floor), position: body.position };
        },
        step: (state, entry) => {
          applyEvent(state, JSON.parse(entry.body) as FloorEvent);
          return state;
        },
      },
      parseRewindAt(url.searchParams.get('at')),
    );
    sendJson(res, 200, { protocol: FLOOR_PROTOCOL_VERSION, epoch: this.store.epoch, position: r.position, at: r.at, head: r.head, first: r.first, ...floorToJSON(r.state) });
  };

  getHealth = (_req: IncomingMessage, res: ServerResponse): void => {
    sendJson(res, 200, {
      ok: true,
      version: this.opts.version,
      protocol: FLOOR_PROTOCOL_VERSION,
      agents: this.state.agents.size,
      store: this.store.kind,
      position: this.pos,
      subscribers: this.channel.subscriberCount,
    });
  };
}

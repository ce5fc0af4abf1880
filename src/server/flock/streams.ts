// The flock service's base (FlockService in service.ts extends it through
// one class per job): the project's `flock` stream folded on the fold host,
// its state and snapshots, the list and nest frames and their live channels,
// and every field the jobs above share (declared here, so each is
// initialised before any job's code runs). What the jobs above provide is
// declared abstract at the end.

import { FoldedStream } from '../folded.js';
import { type FlockState, emptyFlock, applyFlock, FLOCK_PROTOCOL_VERSION, flockReplacer, flockFromJSON, leaseHolder, listStatus, FLOCK_LIMITS, flockTs, nestRecordJSON } from '../../core/flock.js';
import { ListFrames, type ListFrame, LIST_EVENTS } from './list-frames.js';
import { LiveChannel, type Ev, type Frame } from '../live/index.js';
import { Passes } from './passes.js';
import type { Approval } from '../../core/approvals.js';
import { CrowsOnFloor } from './floor.js';
import { NestWatch } from './watchdog.js';
import { randomUUID } from 'node:crypto';
import { NestDriver, type NestHost } from './nest-driver.js';
import { Nudger, NUDGE_AFTER_MS } from './nudge.js';
import { Pacer } from './pace.js';
import type { EventStore, LogEntry } from '../../storage/types.js';
import { hostname } from 'node:os';
import { JEV_BAND, type Jev, type JevAnswer, ModelJev, embeddedJev } from './jev.js';
import type { ModelRole, ModelRoster } from '../../models/config.js';
import type { ModelOutcome, ModelRequest } from '../../models/index.js';
import { HttpError } from '../http.js';
import { nestHistory } from './history.js';
import type { DirectUsage } from '../usage.js';
import { flockStream, type FlockOptions, type FlockSettings, type FlockSnapshot, type FoldedFlock, type Obj, type Running } from './settings.js';

export abstract class FlockStreams implements NestHost {
  protected host: FoldedStream<FlockState>;
  readonly stream: string;
  readonly node: string;
  /** Each kept list's contract events with their positions (the list streams' replay; packed once the list finished). */
  protected listFrames = new Map<string, ListFrames>();
  protected listChannels = new Map<string, LiveChannel>();
  /** Each nest's `nest.message` entries with their positions (the nest streams' replay), in msg_id order. */
  protected nestFrames = new Map<string, { position: number; msg_id: string; post: string; body: string }[]>();
  protected nestChannels = new Map<string, LiveChannel>();
  /** Posts to nests from this node, one at a time (a msg_id is the next number, so two at once would clash). */
  protected posting: Promise<unknown> = Promise.resolve();
  /** Model calls this node has in the air, by `<item>\0<crow>` (or `banter\0<list>\0<crow>`). */
  protected calls = new Map<string, Running>();
  /** Tokens reserved by calls in the air, per list (the budget check counts them). */
  protected reserved = new Map<string, number>();
  /** Worker flights picked but not folded yet (pickCrows counts them: two steps composed from one state do not take the same crow). */
  protected planned: { crow: string; nest_id: string }[] = [];
  /** Passes in progress (a stop waits for them, so nothing is appended to a closed store). */
  protected passes = new Set<Promise<void>>();
  /** One pass at a time per list (passes.ts). */
  protected lists = new Passes(
    (id) => {
      const p = this.drive(id);
      this.passes.add(p);
      void p.finally(() => this.passes.delete(p)).catch(() => {});
      return p;
    },
    (id, e) => {
      if (!this.stopped) console.error(`roost: flock list ${id}`, e);
    },
    () => this.stopped,
  );
  /** Lists that wanted crows when none was free. */
  protected starved = new Set<string>();
  protected asking = new Map<string, Promise<Approval | null>>();
  protected finishTimers = new Map<string, NodeJS.Timeout>();
  protected leaseTimer: NodeJS.Timeout | null = null;
  protected stopped = false;
  protected unlisten: (() => void) | null = null;
  protected recent = new Map<string, string[]>();
  protected droppedBanter = new Set<string>();
  protected finishWaiters = new Map<string, (() => void)[]>();
  protected finishedListeners = new Set<(list_id: string, at: number) => void>();
  readonly settings: FlockSettings;
  /** Per-item overhead samples (ms of this node's own work between a landing and the next append), for the bench. */
  readonly stats = { appends: 0, calls: 0, failedCalls: 0, foldedAtStart: 0, framesRebuilt: 0, nestHistoryBuilds: 0 };
  /** Positions of list and nest events the fold refused (kept while a kept frame is older: a snapshot names them). */
  protected rejected: number[] = [];
  /** The snapshot the start loaded (its frames before it are rebuilt from the log). */
  protected loadedSnapshot: FlockSnapshot | null = null;
  protected starting = false;
  /** A verdict was folded in this batch: its trust changes may want announcing (announceTrust). */
  protected verdictFolded = false;
  /** The crows on the project's floor (none without a floor). */
  readonly crows: CrowsOnFloor | null;
  /** The Sentry's watchdog and the nest asks' approvals (watchdog.ts). */
  readonly watch: NestWatch;
  /** This run's part of a call's usage key (a call number restarts at 1 with the process). */
  protected readonly callKey = randomUUID().slice(0, 8);
  /** Must-respond: the crows invoked for nest messages (nest-driver.ts). */
  readonly nests: NestDriver;
  /** The harness's nudges on missed expectations (nudge.ts). */
  readonly nudges: Nudger;
  /** The driver's steps are background work: they yield to the requests this process serves (pace.ts). */
  readonly pace = new Pacer();

  constructor(
    protected store: EventStore,
    protected opts: FlockOptions,
  ) {
    this.stream = flockStream(opts.project);
    this.node = opts.settings.node ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.settings = { jevBand: JEV_BAND, ...opts.settings, node: this.node };
    this.crows = opts.floor ? new CrowsOnFloor(opts.floor) : null;
    this.watch = new NestWatch(this, opts.approvals);
    this.nests = new NestDriver(this);
    this.nudges = new Nudger(this, this.settings.nudgeAfterMs ?? NUDGE_AFTER_MS);
    this.host = new FoldedStream<FlockState>(
      store,
      {
        stream: this.stream,
        scope: `flock:${opts.project}`,
        empty: emptyFlock,
        step: (state, entry) => {
          const e = JSON.parse(entry.body) as unknown;
          const effects = applyFlock(state, e, entry.position);
          // The parsed body rides along to `applied` (read there, never changed): one parse per entry.
          const out: FoldedFlock = { state, events: [{ name: 'event', data: `{"event":${entry.body},"effects":${JSON.stringify(effects)}}` }], accepted: effects.length > 0, body: e };
          return out;
        },
        snapshot: (state, position, reset) => JSON.stringify({ protocol: FLOCK_PROTOCOL_VERSION, epoch: this.store.epoch, position, reset, state }, flockReplacer),
        stored: {
          every: opts.snapshotEvery ?? 10_000,
          body: (state, position) => this.snapshotBody(state, position),
          load: (text) => {
            const body = JSON.parse(text) as FlockSnapshot;
            // The start's own load (replays load snapshots too, for a private copy).
            if (this.starting) this.loadedSnapshot = body;
            return { state: flockFromJSON(body.flock), position: body.position };
          },
          label: 'flock snapshot',
        },
        applied: (entry, out) => {
          if (this.starting) this.stats.foldedAtStart++;
          const o = out as Partial<FoldedFlock>;
          this.applied(entry, o.accepted === true, o.body);
        },
        afterFold: () => {
          this.crows?.flush(this.state, this.driving);
          if (this.verdictFolded && !this.starting) {
            this.verdictFolded = false;
            this.announceTrust().catch((e) => console.error('roost: flock trust announcement', e));
          }
        },
      },
      { live: opts.live, channel: opts.channel, maxReplay: opts.maxReplay },
    );
  }

  get state(): FlockState {
    return this.host.state;
  }

  /** Hears every list.finished folded into the live state (list id, the entry's append time): push notices. */
  onListFinished(f: (list_id: string, at: number) => void): () => void {
    this.finishedListeners.add(f);
    return () => this.finishedListeners.delete(f);
  }

  get position(): number {
    return this.host.position;
  }

  get channel(): LiveChannel {
    return this.host.channel;
  }

  get project(): string {
    return this.opts.project;
  }

  /** What `GET /api/flock` shows: the models per role, the lease, and each kept list's status. */
  overview(): unknown {
    const now = Date.now();
    return {
      protocol: FLOCK_PROTOCOL_VERSION,
      ready: this.settings.models?.ready ?? false,
      models: this.settings.models?.describe() ?? [],
      driver: leaseHolder(this.state, now),
      watchdog: this.watch.status(),
      token_budget: this.state.budget.project,
      lists: [...this.state.lists.keys()].map((id) => listStatus(this.state, id)),
    };
  }

  protected jevTagger: Jev | null = null;
  /** Jev: the model-backed one when a model is named for the `jev` role itself, else the embedded classifier. */
  get jev(): Jev {
    const m = this.settings.models;
    return (this.jevTagger ??= m?.settings.roles.jev && m.forRole('jev') ? new ModelJev(m.forRole('jev')!, this.settings.callTimeoutMs) : embeddedJev());
  }

  get jevBand(): number {
    return this.settings.jevBand;
  }

  get maxSpunCrows(): number {
    return Math.min(this.settings.maxSpunCrows ?? FLOCK_LIMITS.maxSpun, FLOCK_LIMITS.maxSpunCap);
  }

  get models(): ModelRoster | null {
    return this.settings.models;
  }

  async start(): Promise<void> {
    this.host.listen();
    this.starting = true;
    try {
      await this.host.start();
    } finally {
      this.starting = false;
    }
    if (this.loadedSnapshot) await this.rebuildFrames(this.loadedSnapshot);
    this.loadedSnapshot = null;
    const approvals = await this.opts.approvals();
    this.unlisten = approvals.onClosed((a) => void this.approvalClosed(a).catch((e) => console.error('roost: flock verdict failed', e)));
    await this.watch.start();
    this.nudges.start();
    if (this.settings.models) {
      await this.tickLease();
      this.leaseTimer = setInterval(() => void this.tickLease().catch((e) => console.error('roost: flock lease failed', e)), Math.max(100, Math.floor(this.settings.leaseMs / 4)));
      this.leaseTimer.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.pace.stop();
    this.opts.agents?.stop();
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    for (const t of this.finishTimers.values()) clearTimeout(t);
    this.unlisten?.();
    await Promise.race([Promise.allSettled([...this.passes, this.watch.stop(), this.nests.stop(), this.nudges.stop()]), new Promise((r) => setTimeout(r, 2000).unref())]);
    if (leaseHolder(this.state, Date.now()) === this.node) {
      try {
        await this.append([{ type: 'lease.released', node: this.node, ts: flockTs(Date.now()) }]);
      } catch {}
    }
    for (const c of this.listChannels.values()) c.stop();
    for (const c of this.nestChannels.values()) c.stop();
    await this.flushUsage();
    await this.crows?.settled();
    await this.host.stop();
  }

  // ------------------------------------------------------------ the log

  /** Appends events (each stamped with its `ts` by the caller) and resolves once folded here. */
  async append(events: Obj[], key?: string): Promise<void> {
    if (events.length === 0) return;
    const r = await this.store.append(
      this.stream,
      events.map((e) => ({ type: e.type as string, body: JSON.stringify(e) })),
      key ? { idempotencyKey: key } : undefined,
    );
    this.stats.appends++;
    await this.host.folded(r.last);
  }

  /**
   * The driver's own step (a flight, a landing, an answer trust let through,
   * banter, a skip, a finish): appended lazily (AppendOptions.lazy), so a
   * step costs no fsync of its own. It survives a crash of this process at
   * once, a crash of the machine once synced (the next synced append, or
   * LAZY_SYNC_MS); should a crash of the machine lose one, the driver that
   * resumes finds the step undone in the log and does it again, as it does
   * with a call in the air. What answers a request (a verdict, an owner's
   * action, a post) is never lazy; a new list is, and its request is
   * answered only after the store's `sync()` (startList).
   */
  // Measured: synced, the steps' fsyncs were 73% of an item's time (docs/flock.md, "Lazy steps"); test/flock.lazy-steps.
  protected async step(events: Obj[]): Promise<void> {
    if (events.length === 0) return;
    const r = await this.store.append(
      this.stream,
      events.map((e) => ({ type: e.type as string, body: JSON.stringify(e) })),
      { lazy: true },
    );
    this.stats.appends++;
    await this.host.folded(r.last);
  }

  /** The stored snapshot at `position` (see FlockSnapshot). */
  protected snapshotBody(state: FlockState, position: number): string {
    let from = position + 1;
    for (const frames of this.listFrames.values()) if (frames.first < from) from = frames.first;
    for (const frames of this.nestFrames.values()) if (frames.length && frames[0].position < from) from = frames[0].position;
    this.rejected = this.rejected.filter((p) => p >= from);
    return JSON.stringify({ position, frames_from: from, rejected: this.rejected, flock: state } satisfies FlockSnapshot, flockReplacer);
  }

  /**
   * After a start from a snapshot: the list and nest frames from before it,
   * read from the log (from the oldest kept frame on) and not folded again:
   * a frame is an event of a kept list or nest the fold accepted.
   */
  protected async rebuildFrames(snap: FlockSnapshot): Promise<void> {
    const skip = new Set(snap.rejected);
    const lists = new Map<string, ListFrame[]>();
    const nests = new Map<string, { position: number; msg_id: string; post: string; body: string }[]>();
    for (let after = snap.frames_from - 1; after < snap.position; ) {
      const batch = await this.store.read(this.stream, after, 5000);
      if (batch.length === 0) break;
      for (const e of batch) {
        if (e.position > snap.position) break;
        if (skip.has(e.position) || (e.type !== 'nest.message' && !LIST_EVENTS.has(e.type))) continue;
        const body = JSON.parse(e.body) as Obj;
        if (e.type === 'nest.message') {
          if (typeof body.nest_id !== 'string' || typeof body.msg_id !== 'string' || !this.state.nests.has(body.nest_id)) continue;
          let f = nests.get(body.nest_id);
          if (!f) nests.set(body.nest_id, (f = []));
          f.push({ position: e.position, msg_id: body.msg_id, post: typeof body.post === 'string' ? body.post : '', body: e.body });
        } else if (typeof body.list_id === 'string' && this.state.lists.has(body.list_id)) {
          let f = lists.get(body.list_id);
          if (!f) lists.set(body.list_id, (f = []));
          f.push({ position: e.position, ev: { name: e.type, data: e.body } });
          this.remember(body.list_id, body);
        }
        this.stats.framesRebuilt++;
      }
      after = batch[batch.length - 1].position;
    }
    // Before the frames folded after the snapshot (the start's), in position order.
    for (const [id, f] of lists) {
      let frames = this.listFrames.get(id);
      if (!frames) this.listFrames.set(id, (frames = new ListFrames()));
      frames.prepend(f);
      if (this.state.lists.get(id)?.finished) frames.pack();
    }
    for (const [id, f] of nests) {
      const all = [...f, ...(this.nestFrames.get(id) ?? [])];
      this.nestFrames.set(id, all.length > FLOCK_LIMITS.keepMessages ? all.slice(-FLOCK_LIMITS.keepMessages) : all);
    }
  }

  protected applied(entry: LogEntry, accepted: boolean, parsed: unknown): void {
    if (!accepted) {
      // A refused event of a list or nest: a snapshot names it, so a rebuild of the frames skips it.
      if (entry.type === 'nest.message' || LIST_EVENTS.has(entry.type)) this.rejected.push(entry.position);
      return;
    }
    const type = entry.type;
    if (type === 'lease.claimed' || type === 'lease.released') return;
    if (type === 'verdict') this.verdictFolded = true;
    const body = (parsed ?? JSON.parse(entry.body)) as Obj;
    this.crows?.seen(this.state, body);
    if (type === 'nest.message' && typeof body.nest_id === 'string' && typeof body.msg_id === 'string') {
      const nest_id = body.nest_id;
      let frames = this.nestFrames.get(nest_id);
      if (!frames) this.nestFrames.set(nest_id, (frames = []));
      const f = { position: entry.position, msg_id: body.msg_id, post: typeof body.post === 'string' ? body.post : '', body: entry.body };
      frames.push(f);
      if (frames.length > FLOCK_LIMITS.keepMessages) frames.shift();
      const ch = this.nestChannels.get(nest_id);
      if (ch) ch.publish(ch.frame(entry.position, [this.nestEv(nest_id, f)]));
      this.nests.kick(nest_id);
      return;
    }
    if ((type === 'nest.flying' || type === 'nest.landed') && typeof body.nest_id === 'string') this.nests.kick(body.nest_id);
    // A deleted nest: its stream ends (its messages stay in the log).
    if (type === 'nest.deleted' && typeof body.nest_id === 'string') {
      this.nestFrames.delete(body.nest_id);
      this.nestChannels.get(body.nest_id)?.stop();
      this.nestChannels.delete(body.nest_id);
    }
    // A crow came back, joined or was let out: nests waiting for one look again.
    if (type === 'crow.landed' || type === 'nest.landed' || type === 'crow.spun' || type === 'quarantine.lifted') this.nests.kickStarved();
    const list_id = typeof body.list_id === 'string' ? body.list_id : '';
    if (list_id && LIST_EVENTS.has(type)) {
      const ev: Ev = { name: type, data: entry.body };
      let frames = this.listFrames.get(list_id);
      if (!frames) this.listFrames.set(list_id, (frames = new ListFrames()));
      frames.push(entry.position, ev);
      const ch = this.listChannels.get(list_id);
      if (ch) ch.publish(ch.frame(entry.position, [ev]));
      this.remember(list_id, body);
      if (type === 'list.finished') {
        // Banter's "recent flock events" of a finished list are read no more (its banter is over).
        this.recent.delete(list_id);
        frames.pack();
        const t = this.finishTimers.get(list_id);
        if (t) clearTimeout(t);
        this.finishTimers.delete(list_id);
        this.forgetOld();
        for (const f of this.finishWaiters.get(list_id) ?? []) f();
        this.finishWaiters.delete(list_id);
        for (const f of this.finishedListeners) f(list_id, entry.at);
      }
    }
    if (list_id) this.kick(list_id);
    if ((type === 'crow.landed' || type === 'nest.landed') && this.starved.size) for (const l of this.starved) this.kick(l);
  }

  /** A short line of what happened, for banter's "recent flock events". */
  protected remember(list_id: string, b: Obj): void {
    let r = this.recent.get(list_id);
    if (!r) this.recent.set(list_id, (r = []));
    if (b.type === 'crow.landed') r.push(`${b.crow} came back ${b.ok ? 'with an answer' : `without one (${b.error ?? 'failed'})`} for ${b.item_id}`);
    else if (b.type === 'verdict') r.push(`the ${b.target} of ${b.item_id} was ${b.verdict}`);
    else if (b.type === 'item.triaged') r.push(`Sentry sent ${b.item_id} ${b.mode} as ${b.task_type}`);
    if (r.length > 8) r.shift();
  }

  /** Frames of lists the fold no longer keeps are dropped with them. */
  protected forgetOld(): void {
    // The fold forgets a list only when a newer one finishes, so frames of a forgotten list outnumber the kept lists.
    // The frames are in the order the lists started and the fold forgets the oldest finished list, so the scan
    // stops near the front: it passes only lists that started earlier and still run (it was every kept list before).
    let surplus = this.listFrames.size - this.state.lists.size;
    for (const id of this.listFrames.keys()) {
      if (surplus <= 0) break;
      if (this.state.lists.has(id)) continue;
      surplus--;
      this.listFrames.delete(id);
      this.recent.delete(id);
      this.listChannels.get(id)?.closeAll('this list is no longer kept');
      this.listChannels.delete(id);
    }
  }

  /** The live channel of one list's stream; 404 for a list this server does not know (or no longer keeps). */
  listChannel(list_id: string): LiveChannel {
    let ch = this.listChannels.get(list_id);
    if (ch) return ch;
    if (!this.state.lists.has(list_id)) throw new HttpError(404, 'not_found', `no list "${list_id.slice(0, 80)}"`);
    const evsUpTo = (upTo: number): Ev[] => (this.listFrames.get(list_id)?.between(-Infinity, upTo) ?? []).map((f) => f.ev);
    ch = new LiveChannel(
      `flock.list:${this.opts.project}/${list_id}`,
      this.store.epoch,
      {
        position: () => this.position,
        // A new reader gets the list's events so far (each with the id of the position folded now).
        snapshot: () => ch!.frame(this.position, evsUpTo(this.position)),
        replay: async (after, upTo) => {
          return (this.listFrames.get(list_id)?.between(after, upTo) ?? []).map((f): Frame => ch!.frame(f.position, [f.ev]));
        },
        // What a new reader gets: each event at its own position (a resume from any of them is exact).
        history: (upTo) => (this.listFrames.get(list_id)?.between(-Infinity, upTo) ?? []).map((f): Frame => ch!.frame(f.position, [f.ev])),
      },
      // No ring: the list's frames are kept above, in position order.
      this.opts.live.channelOptions({ ringSize: 0, minFlushIntervalMs: this.opts.channel.minFlushIntervalMs }),
    );
    this.listChannels.set(list_id, ch);
    return ch;
  }

  // ------------------------------------------------------------ nests

  /** A `nest.message` frame: the contract's record (nest_id, ts, the record, `resolved` computed now). */
  protected nestEv(nest_id: string, f: { msg_id: string; body: string }): Ev {
    const rec = this.state.nests.get(nest_id)?.messages.get(f.msg_id);
    if (rec) return { name: 'nest.message', data: JSON.stringify(nestRecordJSON(nest_id, rec, Date.now())) };
    // No longer kept in the state: the stored record as it was posted.
    const { type: _t, window_ms: _w, by: _b, post: _p, ...rest } = JSON.parse(f.body) as Obj;
    return { name: 'nest.message', data: JSON.stringify({ ...rest, resolved: '' }) };
  }

  /** The live channel of one nest's stream (`flock.nest:<project>/<nest_id>`); 404 for an unknown nest. */
  nestChannel(nest_id: string): LiveChannel {
    let ch = this.nestChannels.get(nest_id);
    if (ch) return ch;
    if (!this.state.nests.has(nest_id)) throw new HttpError(404, 'not_found', `no nest "${nest_id.slice(0, 80)}"`);
    const framesUpTo = (after: number, upTo: number) => (this.nestFrames.get(nest_id) ?? []).filter((f) => f.position > after && f.position <= upTo);
    ch = new LiveChannel(
      `flock.nest:${this.opts.project}/${nest_id}`,
      this.store.epoch,
      {
        position: () => this.position,
        // A new reader gets the nest's messages so far, in msg_id order.
        snapshot: () => ch!.frame(this.position, framesUpTo(-1, this.position).map((f) => this.nestEv(nest_id, f))),
        replay: async (after, upTo) => framesUpTo(after, upTo).map((f) => ch!.frame(f.position, [this.nestEv(nest_id, f)])),
        history: nestHistory(() => this.nestFrames.get(nest_id) ?? [], (f) => ch!.frame(f.position, () => [this.nestEv(nest_id, f)]), this.stats),
      },
      this.opts.live.channelOptions({ ringSize: 0, minFlushIntervalMs: this.opts.channel.minFlushIntervalMs }),
    );
    this.nestChannels.set(nest_id, ch);
    return ch;
  }

  protected postedHooks = new Set<(nest_id: string, msg_id: string, ev: Obj) => Promise<void>>();

  protected expiryTimer: NodeJS.Timeout | null = null;

  protected claiming: Promise<void> | null = null;

  /** This process has driven (taken the lease and resumed) at least once. */
  protected droveOnce = false;

  /** Calls' usage gathers for up to USAGE_MS and is recorded in one append (each record keeps its own time). */
  protected usageQueue: DirectUsage[] = [];
  protected usageTimer: NodeJS.Timeout | null = null;

  // ------------------------------------------------------------ what the jobs above provide

  abstract postMessage(nest_id: string, build: () => Obj, opts?: { key?: string }): Promise<string>;
  abstract onPosted(h: (nest_id: string, msg_id: string, ev: Obj) => Promise<void>): () => void;
  abstract logJev(nest_id: string, msg_id: string, request: boolean, a: JevAnswer, header?: { kind?: string; mode?: string }): Promise<void>;
  protected abstract approvalClosed(a: Approval): Promise<void>;
  protected abstract announceTrust(): Promise<void>;
  abstract get driving(): boolean;
  protected abstract tickLease(): Promise<void>;
  abstract wantLease(): Promise<void>;
  abstract kick(list_id: string): void;
  protected abstract drive(list_id: string): Promise<void>;
  abstract call(role: ModelRole, req: ModelRequest, who: { crow: string; list_id?: string; nest_id?: string; item_id: string }): Promise<ModelOutcome>;
  protected abstract flushUsage(): Promise<void>;
}

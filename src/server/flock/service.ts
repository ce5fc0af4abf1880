// The flock of one project (docs/flock.md): its stream `flock` (default
// project) or `flock:<project>`, folded on the fold host by the pure fold
// (src/core/flock.ts), served live on two kinds of scope, and driven.
//
// - `flock:<project>`: every folded entry (`{event, effects}`), a snapshot of
//   the whole state first (the flock view, on /live).
// - `flock.list:<project>/<list_id>`: one list's contract events, each frame
//   `event: <type>` with the stored body as data (spec/flock-events.md), what
//   `GET /api/events?list_id=` serves. A subscriber without a cursor gets the
//   list's events so far as its first frame; `Last-Event-ID` resumes after it.
// - `flock.nest:<project>/<nest_id>`: one nest's `nest.message` records, what
//   `GET /api/events?nest_id=` serves, replayed in msg_id order.
//
// The driver: the node holding the project's lease (`lease.claimed`) reads
// the fold's queries (itemPhase, toFly, pickCrows, draftAnswer, listStatus)
// after every change of a list and appends what comes next; model calls run
// beside it and land as `crow.landed`. Each pending verdict is an approval of
// kind `verdict` in the one approvals model; its close is appended as the
// verdict (keyed, so once). A restart resumes from the log: flights with no
// landing are flown again, open banter is dropped, unannounced trust changes
// are announced.

import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  applyFlock,
  cooldownS,
  draftAnswer,
  emptyFlock,
  FLOCK_LIMITS,
  FLOCK_PROTOCOL_VERSION,
  flockTs,
  flockFromJSON,
  flockReplacer,
  flyingListsOf,
  inFlight,
  itemPhase,
  leaseHolder,
  listStatus,
  itemsClosed,
  nestRecordJSON,
  outputNeedsApproval,
  pickCrows,
  previewTrust,
  toFly,
  triageNeedsApproval,
  trustChangedEvent,
  trustLevel,
  unannouncedTrust,
  unfinishedLists,
  type FlockItem,
  type FlockList,
  type FlockState,
  type Triage,
  type VerdictTarget,
  type VerdictValue,
} from '../../core/flock.js';
import type { Approval } from '../../core/approvals.js';
import type { ModelOutcome, ModelProvider, ModelRequest } from '../../models/index.js';
import type { ModelRole, ModelRoster } from '../../models/config.js';
import { JEV_BAND, ModelJev, embeddedJev, type Jev, type JevAnswer } from './jev.js';
import type { EventStore, LogEntry } from '../../storage/types.js';
import { FoldedStream, type Folded } from '../folded.js';
import { LiveChannel, type ChannelOptions, type Ev, type Frame, type Live } from '../live.js';
import { nestHistory } from './history.js';
import { LIST_EVENTS, ListFrames, type ListFrame } from './list-frames.js';
import type { ApprovalService } from '../approvals.js';
import { providerUsage, type DirectUsage, type UsageService } from '../usage.js';
import { budgetGate } from './budget-gate.js';
import { HttpError } from '../http.js';
import type { FloorService } from '../floor.js';
import { CrowsOnFloor, crowAgentId, nestTeam } from './floor.js';
import { NestWatch } from './watchdog.js';
import { Nudger, NUDGE_AFTER_MS } from './nudge.js';
import { NestDriver, type NestHost } from './nest-driver.js';
import { CODE_RESERVE, banterLine, banterRequest, codePrompt, mergeRequest, normalTriage, triageRequest, workRequest, worstCase, type TriageInput } from './prompts.js';
import type { BoardRef, CodeAgents } from './agents.js';
import { Pacer } from './pace.js';
import { Passes } from './passes.js';

export const FLOCK_STREAM = 'flock';

export function flockStream(project: string): string {
  return project === 'default' ? FLOCK_STREAM : `${FLOCK_STREAM}:${project}`;
}

export interface FlockSettings {
  /** The models behind the crows; null: POST /api/lists answers 503. */
  models: ModelRoster | null;
  /** An approval's window: unanswered past it, the verdict is `timeout` (default 10 minutes). */
  verdictWindowMs: number;
  /** The driver's lease, renewed every quarter of it; another node takes over the moment it runs out. */
  leaseMs: number;
  /** One try of one model call (the provider's retry policy wraps it). */
  callTimeoutMs: number;
  /** How long `list.finished` waits for banter in the air. */
  banterWaitMs: number;
  /** This node's name in the lease (a fresh one per process by default). */
  node: string;
  /** Jev's high band: its tag stands at or above it (docs/flock.md, "Jev"). */
  jevBand: number;
  /** MaxSpunCrows: how many crows the Boss may spin up (default 8, at most FLOCK_LIMITS.maxSpunCap). */
  maxSpunCrows?: number;
  /** A crow's expectation before the harness nudges it (nudge.ts; default 10 minutes). */
  nudgeAfterMs?: number;
}

/** The `cooldown_s` of a refused rate's 429: the cooldown it started, else a minute (the rate's window). */
export function rateRefusalS(cooldown: number): number {
  return cooldown || 60;
}

export const FLOCK_DEFAULTS: Omit<FlockSettings, 'models' | 'node'> & { agentTimeoutMs: number } = {
  /** A code item's Claude Code session (./agents.ts): it lands ok:false when no result came within this. */
  agentTimeoutMs: 30 * 60 * 1000,
  jevBand: JEV_BAND,
  verdictWindowMs: 10 * 60 * 1000,
  // Short, so a dead driver's lists resume within 5 s (docs/flock.md, "The lease"); renewed every second while there is work.
  leaseMs: 4_000,
  callTimeoutMs: 60_000,
  banterWaitMs: 20_000,
  maxSpunCrows: 8,
};

export interface FlockOptions {
  live: Live;
  channel: ChannelOptions;
  maxReplay: number;
  /** A snapshot of the fold is stored every this many events (default 10,000; docs/flock.md, "Snapshots"). */
  snapshotEvery?: number;
  project: string;
  approvals: () => Promise<ApprovalService>;
  /** The project's floor: the driving node reports its crows there (src/server/flock/floor.ts). */
  floor?: () => Promise<FloorService>;
  /** The project's usage roll-up: every model call's provider usage is recorded there (source `flock`). */
  usage?: () => Promise<UsageService>;
  /** Coding agents for `code` items (Claude Code sessions through the fleet board: ./agents.ts); none: a model crow flies them. */
  agents?: CodeAgents;
  settings: Omit<FlockSettings, 'node' | 'jevBand'> & { node?: string; jevBand?: number };
}

/** The approval id of an item's verdict: stable, so a restart finds the one it asked for. */
export function verdictApprovalId(project: string, item_id: string, target: VerdictTarget): string {
  return 'ap_' + createHash('sha256').update(`flock\n${project}\n${item_id}\n${target}`).digest('hex').slice(0, 24);
}

type Obj = Record<string, unknown>;

/** How long calls' usage gathers before it is recorded (one append), and how many records make one at once. */
const USAGE_MS = 100;
const USAGE_BATCH = 100;

/** The phases whose driver step appends (a verdict phase too, when trust lets it through without an approval). */
const STEPS: ReadonlySet<string> = new Set(['triage', 'rejected', 'failed', 'work', 'merge', 'answer']);

/**
 * A stored snapshot of the flock (docs/flock.md, "Snapshots"): the fold at
 * `position`, and what the list and nest streams' replay needs from before
 * it: their frames are rebuilt from the log from `frames_from` on (the first
 * position any kept frame has) without folding, skipping the `rejected`
 * positions (events the fold refused, which no stream carried).
 */
interface FlockSnapshot {
  position: number;
  frames_from: number;
  rejected: number[];
  flock: unknown;
}

/** A folded flock entry: whether the fold accepted it, and its parsed body. */
type FoldedFlock = Folded<FlockState> & { accepted: boolean; body: unknown };

interface Running {
  list_id: string;
  reserve: number;
}

export class FlockService implements NestHost {
  private host: FoldedStream<FlockState>;
  readonly stream: string;
  readonly node: string;
  /** Each kept list's contract events with their positions (the list streams' replay; packed once the list finished). */
  private listFrames = new Map<string, ListFrames>();
  private listChannels = new Map<string, LiveChannel>();
  /** Each nest's `nest.message` entries with their positions (the nest streams' replay), in msg_id order. */
  private nestFrames = new Map<string, { position: number; msg_id: string; post: string; body: string }[]>();
  private nestChannels = new Map<string, LiveChannel>();
  /** Posts to nests from this node, one at a time (a msg_id is the next number, so two at once would clash). */
  private posting: Promise<unknown> = Promise.resolve();
  /** Model calls this node has in the air, by `<item>\0<crow>` (or `banter\0<list>\0<crow>`). */
  private calls = new Map<string, Running>();
  /** Tokens reserved by calls in the air, per list (the budget check counts them). */
  private reserved = new Map<string, number>();
  /** Worker flights picked but not folded yet (pickCrows counts them: two steps composed from one state do not take the same crow). */
  private planned: { crow: string; nest_id: string }[] = [];
  /** Passes in progress (a stop waits for them, so nothing is appended to a closed store). */
  private passes = new Set<Promise<void>>();
  /** One pass at a time per list (passes.ts). */
  private lists = new Passes(
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
  private starved = new Set<string>();
  private asking = new Map<string, Promise<Approval | null>>();
  private finishTimers = new Map<string, NodeJS.Timeout>();
  private leaseTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private unlisten: (() => void) | null = null;
  private recent = new Map<string, string[]>();
  private droppedBanter = new Set<string>();
  private finishWaiters = new Map<string, (() => void)[]>();
  private finishedListeners = new Set<(list_id: string, at: number) => void>();
  readonly settings: FlockSettings;
  /** Per-item overhead samples (ms of this node's own work between a landing and the next append), for the bench. */
  readonly stats = { appends: 0, calls: 0, failedCalls: 0, foldedAtStart: 0, framesRebuilt: 0, nestHistoryBuilds: 0 };
  /** Positions of list and nest events the fold refused (kept while a kept frame is older: a snapshot names them). */
  private rejected: number[] = [];
  /** The snapshot the start loaded (its frames before it are rebuilt from the log). */
  private loadedSnapshot: FlockSnapshot | null = null;
  private starting = false;
  /** A verdict was folded in this batch: its trust changes may want announcing (announceTrust). */
  private verdictFolded = false;
  /** The crows on the project's floor (none without a floor). */
  readonly crows: CrowsOnFloor | null;
  /** The Sentry's watchdog and the nest asks' approvals (watchdog.ts). */
  readonly watch: NestWatch;
  /** This run's part of a call's usage key (a call number restarts at 1 with the process). */
  private readonly callKey = randomUUID().slice(0, 8);
  /** Must-respond: the crows invoked for nest messages (nest-driver.ts). */
  readonly nests: NestDriver;
  /** The harness's nudges on missed expectations (nudge.ts). */
  readonly nudges: Nudger;
  /** The driver's steps are background work: they yield to the requests this process serves (pace.ts). */
  readonly pace = new Pacer();

  constructor(
    private store: EventStore,
    private opts: FlockOptions,
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

  private jevTagger: Jev | null = null;
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
  private async step(events: Obj[]): Promise<void> {
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
  private snapshotBody(state: FlockState, position: number): string {
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
  private async rebuildFrames(snap: FlockSnapshot): Promise<void> {
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

  private applied(entry: LogEntry, accepted: boolean, parsed: unknown): void {
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
  private remember(list_id: string, b: Obj): void {
    let r = this.recent.get(list_id);
    if (!r) this.recent.set(list_id, (r = []));
    if (b.type === 'crow.landed') r.push(`${b.crow} came back ${b.ok ? 'with an answer' : `without one (${b.error ?? 'failed'})`} for ${b.item_id}`);
    else if (b.type === 'verdict') r.push(`the ${b.target} of ${b.item_id} was ${b.verdict}`);
    else if (b.type === 'item.triaged') r.push(`Sentry sent ${b.item_id} ${b.mode} as ${b.task_type}`);
    if (r.length > 8) r.shift();
  }

  /** Frames of lists the fold no longer keeps are dropped with them. */
  private forgetOld(): void {
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
  private nestEv(nest_id: string, f: { msg_id: string; body: string }): Ev {
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

  /** A new nest (already checked by the route). */
  async createNest(nest_id: string, name: string, crows: string[], by: string): Promise<boolean> {
    await this.append([{ type: 'nest.created', nest_id, name, crows, by, ts: flockTs(Date.now()) }]);
    return this.state.nests.get(nest_id)?.name === name;
  }

  /**
   * Posts a message (checked by the route; `build` makes the event from the
   * state at the moment of the append, so its msg_id is the next one). One
   * post at a time on this node; another node's post taking the number first
   * is retried. Resolves with the msg_id, or '' when the fold refused it.
   */
  postMessage(nest_id: string, build: () => Obj, opts: { key?: string } = {}): Promise<string> {
    let ev: Obj = {};
    const run = async (): Promise<string> => {
      for (let tries = 0; tries < 5; tries++) {
        const before = this.state.nests.get(nest_id)?.count;
        if (before === undefined) return '';
        const msg_id = `${nest_id}-${before + 1}`;
        const post = randomUUID();
        const b = build();
        // A post may carry its own time (an ask decided in the inbox: the decision's); else now.
        ev = { type: 'nest.message', nest_id, msg_id, ...b, post, ts: typeof b.ts === 'string' ? b.ts : flockTs(Date.now()) };
        // Keyed (an ask decided in the inbox, posted as the owner's reply by whichever node hears it first): once in the log.
        await this.append([ev], opts.key);
        const frames = this.nestFrames.get(nest_id) ?? [];
        for (let i = frames.length - 1; i >= 0; i--) if (frames[i].msg_id === msg_id) {
          if (frames[i].post === post) return msg_id;
          break;
        }
        // Refused by the fold (nothing moved), or another node's post took the number: try the next.
        if (this.state.nests.get(nest_id)?.count === before) return '';
      }
      return '';
    };
    const p = this.posting.then(run, run);
    this.posting = p.catch(() => {});
    // The hooks run after this node's post is folded and outside the queue (a hook may post in turn).
    return p.then(async (msg_id) => {
      if (msg_id) for (const h of this.postedHooks) await h(nest_id, msg_id, ev);
      return msg_id;
    });
  }

  private postedHooks = new Set<(nest_id: string, msg_id: string, ev: Obj) => Promise<void>>();
  /** Hears each message this node posted, once folded (the watchdog, ask_owner's approvals: watchdog.ts). */
  onPosted(h: (nest_id: string, msg_id: string, ev: Obj) => Promise<void>): () => void {
    this.postedHooks.add(h);
    return () => this.postedHooks.delete(h);
  }

  /** Jev's probabilities for a posted message: one `jev.tag` per question (the mode on a request only). */
  async logJev(nest_id: string, msg_id: string, request: boolean, a: JevAnswer, header: { kind?: string; mode?: string } = {}): Promise<void> {
    const ts = flockTs(Date.now());
    const base = { type: 'jev.tag', nest_id, msg_id, band: this.settings.jevBand, source: this.jev.source, ts };
    // The author's own header rides along (the fold ignores it): one source of truth labels for the calibration (jev-log.ts).
    const evs: Obj[] = [{ ...base, question: 'kind', probs: a.kindProbs, header: header.kind ?? '', ...(a.tokens ? { tokens: a.tokens } : {}) }];
    if (request && a.modeProbs) evs.push({ ...base, question: 'mode', probs: a.modeProbs, header: header.mode ?? '' });
    await this.append(evs);
  }

  // ------------------------------------------------------------ lists

  /** Resolves once the list is finished (at once when it is). */
  finished(list_id: string): Promise<void> {
    if (this.state.lists.get(list_id)?.finished || this.state.forgottenLists.has(list_id)) return Promise.resolve();
    return new Promise((ok) => {
      let ws = this.finishWaiters.get(list_id);
      if (!ws) this.finishWaiters.set(list_id, (ws = []));
      ws.push(ok);
    });
  }

  /** A new list (already checked by the route): resolves with its id once folded. */
  async startList(requester: string, items: string[], nest_id: string, token_budget?: number): Promise<string> {
    const list_id = `l-${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const ev: Obj = {
      type: 'list.started',
      list_id,
      ts: flockTs(Date.now()),
      requester,
      nest_id,
      items: items.map((text, i) => ({ item_id: `${list_id}-${i + 1}`, text })),
      token_budget: token_budget ?? this.state.budget.project,
    };
    const sentry = this.sentryFlights(list_id, items, ev.token_budget as number, ev.ts as string);
    // Appended lazily and folded at its commit, so the Sentry takes off at
    // once; the 202 waits for the list to be durable (the store's sync: on
    // SQLite an fdatasync off the event loop, which the first steps overlap).
    try {
      await this.step([ev, ...sentry.events]);
    } catch (e) {
      sentry.launch();
      throw e;
    }
    sentry.launch();
    if (!this.state.lists.has(list_id)) throw new HttpError(400, 'bad_request', 'the list was not accepted');
    await this.store.sync();
    return list_id;
  }

  /**
   * The Sentry's flights of a new list's items, appended with its
   * `list.started` when this node drives and the pace is front: the pass that
   * would fly them one step each after the list is folded (the same budget
   * check, in item order, up to the first item that does not fit: the pass
   * takes the rest). The launch flies those the fold accepted and releases the others.
   */
  private sentryFlights(list_id: string, texts: string[], token_budget: number, ts: string): { events: Obj[]; launch: () => void } {
    if (!this.driving || this.pace.inBack) return { events: [], launch: () => {} };
    const planned: { n: number; item_id: string; req: ModelRequest }[] = [];
    let reserved = 0;
    for (let i = 0; i < texts.length; i++) {
      const item: FlockItem = { item_id: `${list_id}-${i + 1}`, n: i + 1, text: texts[i], triage: null, triageVerdict: null, flights: new Map(), answer: null, outputVerdict: null, skipped: null };
      const req = triageRequest(this.state, item);
      const worst = worstCase(req);
      if (reserved + worst > token_budget) break;
      reserved += worst;
      this.reserve(list_id, item.item_id, 'Sentry', worst);
      planned.push({ n: i, item_id: item.item_id, req });
    }
    return {
      events: planned.map((p) => ({ type: 'crow.flying', list_id, item_id: p.item_id, crow: 'Sentry', borrowed: false, ts })),
      launch: () => {
        const list = this.state.lists.get(list_id);
        for (const p of planned) {
          const item = list?.items[p.n];
          if (item?.item_id === p.item_id && item.flights.get('Sentry')?.state === 'flying' && this.driving) this.fly(list_id, p.item_id, 'Sentry', 'sentry', p.req);
          else this.release(`${p.item_id}\u0000Sentry`);
        }
      },
    };
  }

  /**
   * A strike against a requester. When it is answered 429 (it starts a
   * cooldown, or it is a refused rate), that is a prank: `requester.pranked`
   * goes to each of their lists still flying, with the 429's `cooldown_s`.
   * Resolves with the cooldown (s) now running.
   */
  async strike(requester: string, reason: 'rate' | 'empty' | 'garbage'): Promise<number> {
    const now = Date.now();
    const before = cooldownS(this.state, requester, now);
    await this.append([{ type: 'requester.strike', requester, reason, ts: flockTs(now) }]);
    const after = cooldownS(this.state, requester, now);
    const cooldown_s = after > before ? after : reason === 'rate' ? rateRefusalS(after) : 0;
    if (cooldown_s > 0) {
      const message =
        after > before
          ? `${requester} sent too many lists or lists without work in them; new lists are refused for ${after} s.`
          : `${requester} may start ${FLOCK_LIMITS.listsPerMinute} lists a minute; new lists are refused for ${cooldown_s} s.`;
      const ts = flockTs(Date.now());
      await this.append(flyingListsOf(this.state, requester).map((list_id) => ({ type: 'requester.pranked', list_id, message, cooldown_s, ts })));
    }
    return after;
  }

  // ------------------------------------------------------------ verdicts

  /** The pending verdict of an item's target, when one waits for a person. */
  pendingVerdict(item_id: string, target: VerdictTarget): { list: FlockList; item: FlockItem } | null {
    const m = /^(.+)-([1-9][0-9]{0,2})$/.exec(item_id);
    if (!m) return null;
    const list = this.state.lists.get(m[1]);
    const item = list?.items[Number(m[2]) - 1];
    if (!list || list.finished || !item || item.item_id !== item_id) return null;
    const phase = itemPhase(item);
    if (target === 'triage' && phase === 'triage_verdict' && item.triage?.needs_approval) return { list, item };
    if (target === 'output' && phase === 'output_verdict' && item.answer?.needs_approval) return { list, item };
    return null;
  }

  /** Asks for the approval of a pending verdict (once; the id is stable); appends the verdict when it closed already. */
  async ensureApproval(list: FlockList, item: FlockItem, target: VerdictTarget): Promise<Approval | null> {
    const approvals = await this.opts.approvals();
    const id = verdictApprovalId(this.opts.project, item.item_id, target);
    const known = approvals.state.byId.get(id);
    if (known) {
      if (known.status !== 'pending') await this.approvalClosed(known);
      return known;
    }
    if (approvals.state.forgotten.has(id)) {
      // Closed long ago and its verdict never written: fail safe.
      await this.writeVerdict(list.list_id, item.item_id, target, 'timeout', '');
      return null;
    }
    let p = this.asking.get(id);
    if (!p) {
      const asker = target === 'triage' ? 'Sentry' : (item.answer?.crows[0] ?? 'flock');
      const digest =
        target === 'triage'
          ? `${item.text}\n→ ${item.triage?.mode} ${item.triage?.task_type}: ${item.triage?.reason ?? ''}${item.triage?.subtasks.length ? `\n${item.triage.subtasks.map((s, i) => `${i + 1}. ${s}`).join('\n')}` : ''}`
          : `${item.text}\n→ ${(item.answer?.crows ?? []).join(', ')}: ${item.answer?.text ?? ''}`;
      p = approvals
        .request({
          id,
          kind: 'verdict',
          asker,
          askerName: asker,
          scope: { list: list.list_id, item: item.item_id, target },
          source: 'flock',
          tool: target,
          input: digest.slice(0, 2000),
          window: this.settings.verdictWindowMs,
        })
        .then((r) => r.approval)
        .finally(() => this.asking.delete(id));
      this.asking.set(id, p);
    }
    return p;
  }

  /** An approval closed: a verdict approval's close is the verdict (first decision wins; expired or withdrawn is `timeout`). */
  private async approvalClosed(a: Approval): Promise<void> {
    if (a.kind !== 'verdict' || a.source !== 'flock') return;
    const { list, item, target } = a.scope as { list?: string; item?: string; target?: string };
    if (!list || !item || (target !== 'triage' && target !== 'output')) return;
    if (a.id !== verdictApprovalId(this.opts.project, item, target)) return;
    const verdict: VerdictValue = a.status === 'allowed' ? 'approved' : a.status === 'denied' ? 'rejected' : 'timeout';
    await this.writeVerdict(list, item, target, verdict, verdict === 'timeout' ? '' : a.decidedBy);
  }

  /** Appends a verdict and the trust changes it announces, in one append (keyed: once per target). */
  async writeVerdict(list_id: string, item_id: string, target: VerdictTarget, verdict: VerdictValue, by: string): Promise<void> {
    const ts = flockTs(Date.now());
    const ev: Obj = { type: 'verdict', list_id, item_id, target, verdict, ts, ...(by ? { by } : {}) };
    const ann = previewTrust(this.state, ev).map((c) => trustChangedEvent(c, ts));
    await this.append([ev, ...ann], `verdict:${item_id}:${target}`);
  }

  /**
   * Every level change is announced on the stream of the list whose verdict
   * caused it (spec: `trust.changed`). A verdict's own append carries the
   * announcements its preview saw, but a preview made while another verdict
   * was on its way (decisions at once: a burst in the inbox, two nodes) sees
   * an older ledger and misses a change. So after a verdict is folded, the
   * driver announces whatever the fold computed and no announcement names
   * yet (keyed, so once; a second announcement of a change is refused by the
   * fold and never reaches a stream).
   */
  private async announceTrust(): Promise<void> {
    if (!this.driving) return;
    const due = unannouncedTrust(this.state);
    if (due.length === 0) return;
    const ts = flockTs(Date.now());
    await this.append(
      due.map((c) => trustChangedEvent(c, ts)),
      `trust.announce:${due[0].id}-${due[due.length - 1].id}`,
    );
  }

  // ------------------------------------------------------------ the lease

  get driving(): boolean {
    return !this.stopped && this.settings.models !== null && leaseHolder(this.state, Date.now()) === this.node;
  }

  /**
   * The lease is held only while there is work (an unfinished list, or a nest
   * message that wants a crow or has one in the air): an idle
   * flock writes nothing. Renewed by its holder every third of its time;
   * taken by any node once nobody holds it and work waits.
   */
  private async tickLease(): Promise<void> {
    if (this.stopped) return;
    const holder = leaseHolder(this.state, Date.now());
    if (holder !== '' && holder !== this.node) return this.watchExpiry();
    if (unfinishedLists(this.state).length === 0 && !this.nests.hasWork()) return;
    await this.claimLease();
  }

  private expiryTimer: NodeJS.Timeout | null = null;

  /**
   * Another node holds the lease: look again the moment it runs out, not a
   * tick later, so a dead holder is replaced within its lease (each renewal
   * folded moves the moment on).
   */
  private watchExpiry(): void {
    const until = this.state.lease?.until;
    if (until === undefined || this.stopped) return;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = setTimeout(() => {
      this.expiryTimer = null;
      void this.tickLease().catch((e) => console.error('roost: flock lease failed', e));
    }, Math.max(0, until - Date.now()) + 20);
    this.expiryTimer.unref();
  }

  /** Nest work arrived while nobody drives: take the lease (taking it resumes every list and nest). */
  async wantLease(): Promise<void> {
    if (this.settings.models && !this.stopped && leaseHolder(this.state, Date.now()) === '') await this.claimLease();
  }

  private claiming: Promise<void> | null = null;

  private claimLease(): Promise<void> {
    this.claiming ??= this.claim().finally(() => (this.claiming = null));
    return this.claiming;
  }

  private async claim(): Promise<void> {
    if (this.stopped) return;
    const was = this.driving;
    // This process's own lease lapsed (a stall longer than the ttl) and nobody took it meanwhile:
    // nothing of this node died, so its banter stays and its announcements are its own; only the
    // passes skipped while it did not drive are run again.
    const lapsed = this.droveOnce && this.state.lease?.node === this.node;
    await this.append([{ type: 'lease.claimed', node: this.node, ttl_ms: this.settings.leaseMs, ts: flockTs(Date.now()) }]);
    if (this.driving && !was) {
      if (!lapsed) return this.resume();
      for (const id of unfinishedLists(this.state)) this.kick(id);
      this.nests.kickAll();
    }
  }

  /** This process has driven (taken the lease and resumed) at least once. */
  private droveOnce = false;

  /** Took the lease (a start, or another node's lease ran out): pick up what the log says is unfinished. */
  private async resume(): Promise<void> {
    this.droveOnce = true;
    const ts = flockTs(Date.now());
    // Open banter is dropped (its call died with the node that made it).
    const open = inFlight(this.state);
    const drops = open.banter.map((b) => ({ type: 'banter.dropped', list_id: b.list_id, item_id: b.item_id, crow: b.crow, to: b.to, reason: 'restart', ts }));
    const ann = unannouncedTrust(this.state).map((c) => trustChangedEvent(c, ts));
    await this.append([...drops, ...ann]);
    if (this.crows && this.opts.floor) {
      this.crows.resync(this.state, await this.opts.floor().catch(() => null));
      this.crows.flushNow(this.state, this.driving);
    }
    for (const id of unfinishedLists(this.state)) this.kick(id);
    this.nests.kickAll();
  }

  // ------------------------------------------------------------ the driver

  kick(list_id: string): void {
    this.lists.kick(list_id);
  }

  private provider(role: ModelRole): ModelProvider | null {
    return this.settings.models?.forRole(role) ?? this.settings.models?.forRole('crow') ?? null;
  }

  /** Whether a call of this worst case still fits the list's budget, counting calls in the air. */
  private fits(list: FlockList, worst: number): boolean {
    return list.tokens_used + (this.reserved.get(list.list_id) ?? 0) + worst <= list.token_budget;
  }

  /** One pass over a list: each item's next step, appended; model calls started. */
  private async drive(list_id: string): Promise<void> {
    if (!this.driving) {
      // Nobody drives (an idle flock lets its lease lapse): take it; taking it resumes every unfinished list.
      if (this.settings.models && !this.stopped && leaseHolder(this.state, Date.now()) === '' && this.state.lists.get(list_id)?.finished === null) await this.claimLease();
      return;
    }
    const list = this.state.lists.get(list_id);
    if (!list || list.finished) return;
    const ts = () => flockTs(Date.now());
    this.starved.delete(list_id);
    for (const item of list.items) {
      if (!this.driving) return;
      let phase = itemPhase(item);
      // A step that appends waits for its turn (pace.ts); the item is read again after the wait.
      if (STEPS.has(phase) || (phase === 'triage_verdict' && !item.triage!.needs_approval) || (phase === 'output_verdict' && !item.answer!.needs_approval)) {
        const turn = this.pace.turn();
        if (turn) {
          await turn;
          if (!this.driving || list.finished || this.state.lists.get(list_id) !== list) return;
          phase = itemPhase(item);
        }
      }
      switch (phase) {
        case 'triage': {
          const req = triageRequest(this.state, item);
          if (!this.fits(list, worstCase(req))) {
            await this.step([{ type: 'item.skipped', list_id, item_id: item.item_id, reason: 'budget', ts: ts() }]);
            break;
          }
          this.reserve(list_id, item.item_id, 'Sentry', worstCase(req));
          await this.step([{ type: 'crow.flying', list_id, item_id: item.item_id, crow: 'Sentry', borrowed: false, ts: ts() }]);
          this.fly(list_id, item.item_id, 'Sentry', 'sentry', req);
          break;
        }
        case 'triaging':
        case 'flying':
        case 'merging':
          // Flights in the log with no call here: a restart. Fly them again.
          for (const f of item.flights.values()) {
            if (f.state !== 'flying' || this.calls.has(`${item.item_id}\u0000${f.crow}`)) continue;
            const req = f.role === 'triage' ? triageRequest(this.state, item) : f.role === 'merge' ? mergeRequest(this.state, item) : workRequest(this.state, item, f.crow, f.subtask);
            // A coding agent's flight rejoins its session (keyed steps: nothing is started or prompted twice).
            const board = f.role === 'work' ? this.flightBoard(list_id, item.item_id, f.crow) : null;
            this.reserve(list_id, item.item_id, f.crow, board ? CODE_RESERVE : worstCase(req));
            this.fly(list_id, item.item_id, f.crow, f.role === 'triage' ? 'sentry' : f.role === 'merge' ? 'elder' : 'crow', req, this.agentRun(item, f.crow, f.subtask, board));
          }
          break;
        case 'triage_verdict':
          if (!item.triage!.needs_approval) await this.writeVerdict(list_id, item.item_id, 'triage', 'auto', '');
          else await this.ensureApproval(list, item, 'triage');
          break;
        case 'output_verdict':
          if (!item.answer!.needs_approval) await this.writeVerdict(list_id, item.item_id, 'output', 'auto', '');
          else await this.ensureApproval(list, item, 'output');
          break;
        case 'rejected':
          await this.step([{ type: 'item.skipped', list_id, item_id: item.item_id, reason: 'rejected', ts: ts() }]);
          break;
        case 'failed':
          await this.step([{ type: 'item.skipped', list_id, item_id: item.item_id, reason: 'failure', ts: ts() }]);
          break;
        case 'work':
          await this.work(list, item);
          break;
        case 'merge': {
          const req = mergeRequest(this.state, item);
          if (!this.fits(list, worstCase(req))) {
            await this.step([{ type: 'item.skipped', list_id, item_id: item.item_id, reason: 'budget', ts: ts() }]);
            break;
          }
          this.reserve(list_id, item.item_id, 'Elder', worstCase(req));
          await this.step([{ type: 'crow.flying', list_id, item_id: item.item_id, crow: 'Elder', borrowed: false, ts: ts() }]);
          this.fly(list_id, item.item_id, 'Elder', 'elder', req);
          break;
        }
        case 'answer': {
          const { answer, crows } = draftAnswer(item);
          if (!answer.trim()) {
            // Nothing usable came back: a failure, not an empty answer.
            await this.step([{ type: 'item.skipped', list_id, item_id: item.item_id, reason: 'failure', ts: ts() }]);
            break;
          }
          const needs = outputNeedsApproval(this.state, item.triage!.task_type, crows);
          const at = ts();
          // When trust skips the approval, the answer and its `auto` verdict are one append.
          const banter = this.banterPlan(list, item, crows, at);
          try {
            await this.step([
              { type: 'item.answered', list_id, item_id: item.item_id, answer, crows, needs_approval: needs, ts: at },
              ...(needs ? [] : [{ type: 'verdict', list_id, item_id: item.item_id, target: 'output', verdict: 'auto', ts: at }]),
              ...(banter ? [banter.event] : []),
            ]);
          } finally {
            banter?.launch();
          }
          break;
        }
        default:
          break;
      }
    }
    await this.maybeFinish(list);
  }

  /** Sends the crows an item wants (one per open subtask of a split; up to MurderSize for a murder). */
  private async work(list: FlockList, item: FlockItem): Promise<void> {
    const plan = this.planWork(list, item, item.triage!, flockTs(Date.now()));
    if (plan === 'starved') return void this.starved.add(list.list_id);
    if (plan === 'budget') return void (await this.step([{ type: 'item.skipped', list_id: list.list_id, item_id: item.item_id, reason: 'budget', ts: flockTs(Date.now()) }]));
    try {
      await this.step(plan.events);
    } finally {
      plan.launch();
    }
  }

  /**
   * The worker flights an item wants under triage `t` (which may not be
   * folded yet: the Sentry's landing carries them when no approval is asked):
   * their `crow.flying` events, their calls reserved, and the launch to run
   * once appended (only flights the fold accepted fly; the others are released).
   */
  private planWork(list: FlockList, item: FlockItem, t: Triage, ts: string): { events: Obj[]; launch: () => void } | 'budget' | 'starved' {
    const want = item.triage ? toFly(item) : t.mode === 'split' ? { subtasks: t.subtasks.map((_, i) => i + 1), crows: t.subtasks.length } : { subtasks: [], crows: t.mode === 'solo' ? 1 : FLOCK_LIMITS.murderSize };
    const view: FlockItem = item.triage ? item : { ...item, triage: { ...t } };
    const picked = pickCrows(this.state, list.nest_id, want.crows, [...item.flights.keys()], this.planned);
    if (picked.length === 0) return 'starved';
    const flights = t.mode === 'split' ? picked.slice(0, want.subtasks.length).map((p, i) => ({ ...p, subtask: want.subtasks[i] })) : picked.map((p) => ({ ...p, subtask: 0 }));
    const reqs = flights.map((f) => workRequest(this.state, view, f.crow, f.subtask));
    // A code item goes to a coding agent when a bridge follows one of the project's boards (docs/flock.md, "Code items").
    const thread = t.task_type === 'code' ? (this.opts.agents?.thread() ?? null) : null;
    const boards = flights.map((f) => (thread ? this.opts.agents!.ref(thread, item.item_id, f.crow) : null));
    const worst = (i: number) => (boards[i] ? CODE_RESERVE : worstCase(reqs[i]));
    if (!this.fits(list, flights.reduce((n, _, i) => n + worst(i), 0))) return 'budget';
    flights.forEach((f, i) => this.reserve(list.list_id, item.item_id, f.crow, worst(i)));
    const mine = flights.map((f) => ({ crow: f.crow, nest_id: list.nest_id }));
    this.planned.push(...mine);
    return {
      events: flights.map((f, i) => ({ type: 'crow.flying', list_id: list.list_id, item_id: item.item_id, crow: f.crow, borrowed: f.borrowed, ...(f.subtask ? { subtask: f.subtask } : {}), ...(boards[i] ? { board: boards[i] } : {}), ts })),
      // Run once the step is folded (or failed): the picks are in the state now, or gone.
      launch: () => {
        this.planned = this.planned.filter((p) => !mine.includes(p));
        flights.forEach((f, i) => {
          if (item.flights.get(f.crow)?.state === 'flying' && this.driving) this.fly(list.list_id, item.item_id, f.crow, 'crow', reqs[i], this.agentRun(view, f.crow, f.subtask, boards[i]));
          else this.release(`${item.item_id}\u0000${f.crow}`);
        });
      },
    };
  }

  private reserve(list_id: string, item_id: string, crow: string, worst: number): void {
    this.calls.set(`${item_id}\u0000${crow}`, { list_id, reserve: worst });
    this.reserved.set(list_id, (this.reserved.get(list_id) ?? 0) + worst);
  }

  private release(key: string): void {
    const r = this.calls.get(key);
    if (!r) return;
    this.calls.delete(key);
    const left = (this.reserved.get(r.list_id) ?? 0) - r.reserve;
    if (left > 0) this.reserved.set(r.list_id, left);
    else this.reserved.delete(r.list_id);
  }

  /**
   * One model call for `crow` on a list: the one place a call's provider
   * usage is read, so it is recorded on the project's usage here (agent the
   * crow, team the list's nest), a failed call's tokens too. Recording never
   * holds up or fails the flight.
   */
  async call(role: ModelRole, req: ModelRequest, who: { crow: string; list_id?: string; nest_id?: string; item_id: string }): Promise<ModelOutcome> {
    const p = this.provider(role);
    const gated = await budgetGate(this.opts.usage); if (gated) return gated; // a spent project budget: the flock flies nothing more (budget-gate.ts)
    const n = ++this.stats.calls;
    if (!p) return { ok: false, error: { kind: 'bad_request', message: `no model serves the ${role} role`, retryable: false }, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, estimated: false }, model: '' };
    const out = await p.call({ ...req, timeoutMs: this.settings.callTimeoutMs });
    if (!out.ok) this.stats.failedCalls++;
    const u = out.usage;
    if (this.opts.usage && u.input + u.output + u.cacheRead + u.cacheWrite > 0) {
      // The crow's floor agent and its nest's room (src/server/flock/floor.ts): usage lands on the tile the floor shows.
      const team = nestTeam(this.state, who.nest_id ?? this.state.lists.get(who.list_id ?? '')?.nest_id ?? 'todo').name;
      // Unique per call: a call redone after a restart is another request, and is counted.
      const key = `${who.item_id}:${role}:${who.crow}:${this.callKey}:${n}`;
      this.usageLater(providerUsage({ key, agent: crowAgentId(who.crow), team, model: out.model || p.model, usage: u, ts: Date.now() }));
    }
    return out;
  }

  /** Calls' usage gathers for up to USAGE_MS and is recorded in one append (each record keeps its own time). */
  private usageQueue: DirectUsage[] = [];
  private usageTimer: NodeJS.Timeout | null = null;

  private usageLater(r: DirectUsage): void {
    this.usageQueue.push(r);
    if (this.usageQueue.length >= USAGE_BATCH) void this.flushUsage();
    else if (!this.usageTimer) {
      this.usageTimer = setTimeout(() => void this.flushUsage(), USAGE_MS);
      this.usageTimer.unref();
    }
  }

  private async flushUsage(): Promise<void> {
    if (this.usageTimer) clearTimeout(this.usageTimer);
    this.usageTimer = null;
    const records = this.usageQueue;
    this.usageQueue = [];
    if (records.length === 0 || !this.opts.usage) return;
    try {
      await (await this.opts.usage()).record(records, { lazy: true });
    } catch (e) {
      console.error('roost: flock usage not recorded', e);
    }
  }

  /**
   * A code flight's run: the coding agent's session at `board` instead of a
   * model call (its usage is counted on the project's usage by the board, as
   * any board session's: not here). Undefined without a board.
   */
  private agentRun(item: FlockItem, crow: string, subtask: number, board: BoardRef | null | undefined): (() => Promise<ModelOutcome>) | undefined {
    const agents = this.opts.agents;
    if (!board || !agents) return undefined;
    return () => agents.fly(board, { name: `${crow} · ${item.item_id}`, prompt: codePrompt(this.state, item, crow, subtask) });
  }

  /** The board a work flight of a code item was sent to (its `crow.flying`), or null: a model crow's. */
  private flightBoard(list_id: string, item_id: string, crow: string): BoardRef | null {
    const parse = (data: string) => JSON.parse(data) as { item_id?: unknown; crow?: unknown; board?: Partial<BoardRef> };
    const ev = this.listFrames.get(list_id)?.findLast('crow.flying', (data) => {
      const f = parse(data);
      return f.item_id === item_id && f.crow === crow;
    });
    if (!ev) return null;
    const b = parse(ev.data);
    return typeof b.board?.thread === 'string' && typeof b.board.session === 'string' ? { thread: b.board.thread, session: b.board.session } : null;
  }

  /** One flight's model call (or `run`, a coding agent's session), landed when it returns (the provider retries; a failure lands ok:false). */
  private fly(list_id: string, item_id: string, crow: string, role: ModelRole, req: ModelRequest, run?: () => Promise<ModelOutcome>): void {
    const key = `${item_id}\u0000${crow}`;
    void (async () => {
      let out: ModelOutcome;
      try {
        out = await (run ? run() : this.call(role, req, { crow, list_id, item_id }));
      } catch (e) {
        out = { ok: false, error: { kind: 'bad_response', message: (e as Error).message, retryable: false }, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, estimated: false }, model: '' };
      }
      if (this.stopped) return;
      // The landing is a step: it waits for its turn (pace.ts), and is composed after it.
      const turn = this.pace.turn();
      if (turn) await turn;
      if (this.stopped) return;
      const ts = flockTs(Date.now());
      const tokens = Math.max(0, Math.min(FLOCK_LIMITS.callTokens, Math.round(out.usage.total)));
      const events: Obj[] = [];
      let after: (() => void) | undefined;
      if (!out.ok) {
        events.push({ type: 'crow.landed', list_id, item_id, crow, ok: false, tokens, error: `${out.error.kind}: ${out.error.message}`.slice(0, FLOCK_LIMITS.error), ts });
      } else if (crow === 'Sentry') {
        if (out.kind !== 'tool') {
          events.push({ type: 'crow.landed', list_id, item_id, crow, ok: false, tokens, error: 'bad_response: the Sentry did not call the triage tool', ts });
        } else {
          const t = normalTriage(out.input as TriageInput);
          const needs = triageNeedsApproval(this.state, t.task_type);
          events.push({ type: 'item.triaged', list_id, item_id, ...t, needs_approval: needs, ts });
          events.push({ type: 'crow.landed', list_id, item_id, crow, ok: true, tokens, ts });
          if (!needs) {
            events.push({ type: 'verdict', list_id, item_id, target: 'triage', verdict: 'auto', ts });
            // No approval asked: the crows take off in the same append.
            const list = this.state.lists.get(list_id);
            const item = list?.items.find((i) => i.item_id === item_id);
            const plan = list && item && this.driving ? this.planWork(list, item, { ...t, needs_approval: false }, ts) : null;
            if (plan && typeof plan === 'object') {
              events.push(...plan.events);
              after = plan.launch;
            }
          }
        }
      } else if (crow === 'Elder') {
        const answer = out.kind === 'tool' ? String((out.input as { answer?: unknown }).answer ?? '') : out.text;
        if (!answer.trim()) events.push({ type: 'crow.landed', list_id, item_id, crow, ok: false, tokens, error: 'bad_response: the Elder merged nothing', ts });
        else events.push({ type: 'crow.landed', list_id, item_id, crow, ok: true, tokens, output: answer.slice(0, FLOCK_LIMITS.output), ts });
      } else {
        const text = out.kind === 'text' ? out.text : out.text || JSON.stringify(out.input);
        if (!text.trim()) events.push({ type: 'crow.landed', list_id, item_id, crow, ok: false, tokens, error: 'bad_response: the answer was empty', ts });
        else {
          const output = text.slice(0, FLOCK_LIMITS.output);
          events.push({ type: 'crow.landed', list_id, item_id, crow, ok: true, tokens, output, ts });
          // A solo item's one crow came back: its answer goes in the same append.
          const list = this.state.lists.get(list_id);
          const item = list?.items.find((i) => i.item_id === item_id);
          if (list && item?.triage?.mode === 'solo' && !item.answer && this.driving && ![...item.flights.values()].some((f) => f.state === 'flying' && f.crow !== crow)) {
            const needs = outputNeedsApproval(this.state, item.triage.task_type, [crow]);
            events.push({ type: 'item.answered', list_id, item_id, answer: output, crows: [crow], needs_approval: needs, ts });
            if (!needs) events.push({ type: 'verdict', list_id, item_id, target: 'output', verdict: 'auto', ts });
            const banter = this.banterPlan(list, item, [crow], ts);
            if (banter) {
              events.push(banter.event);
              after = banter.launch;
            }
          }
        }
      }
      // Released once the landing is folded: a pass in between must not take the flight for one to fly again.
      try {
        await this.step(events);
      } finally {
        this.release(key);
        after?.();
      }
    })().catch((e) => {
      this.release(key);
      if (!this.stopped) console.error(`roost: flock flight ${crow} of ${item_id}`, e);
    });
  }

  // ------------------------------------------------------------ banter

  /**
   * Banter for an item being answered: at most two lines per list, never
   * blocking. The answer's first crow speaks to another crow that worked the
   * list (else the Sentry, or the Elder for a murder). Returns the
   * `banter.started` event (appended with the answer, so the list waits for
   * the line) and the call to make once it is folded; null when no slot, no
   * model or no budget.
   */
  private banterPlan(list: FlockList, item: FlockItem, crows: string[], ts: string): { event: Obj; launch: () => void } | null {
    if (list.banter.started >= FLOCK_LIMITS.banterPerList || !this.provider('banter')) return null;
    const speaker = crows[0];
    if (!speaker) return null;
    let to = '';
    for (const it of list.items) for (const f of it.flights.values()) if (!to && f.role === 'work' && f.crow !== speaker) to = f.crow;
    if (!to) to = item.triage?.mode === 'murder' ? 'Elder' : 'Sentry';
    const req = banterRequest(this.state, item, speaker, to, this.recent.get(list.list_id) ?? []);
    const worst = worstCase(req);
    if (!this.fits(list, worst)) return null;
    const key = `banter\u0000${item.item_id}\u0000${speaker}`;
    const base = { list_id: list.list_id, item_id: item.item_id, crow: speaker, to };
    this.calls.set(key, { list_id: list.list_id, reserve: worst });
    this.reserved.set(list.list_id, (this.reserved.get(list.list_id) ?? 0) + worst);
    const launch = () => {
      if (!list.banter.open.some((b) => b.item_id === item.item_id && b.crow === speaker)) return this.release(key);
      void (async () => {
        const out = await this.call('banter', req, { crow: speaker, list_id: list.list_id, item_id: item.item_id });
        this.release(key);
        if (this.stopped || this.droppedBanter.has(key)) return;
        const turn = this.pace.turn();
        if (turn) {
          await turn;
          if (this.stopped || this.droppedBanter.has(key)) return;
        }
        const tokens = Math.max(0, Math.round(out.usage.total));
        const line = out.ok && out.kind === 'text' ? banterLine(out.text) : '';
        const at = flockTs(Date.now());
        const ev: Obj = line ? { type: 'crow.banter', ...base, text: line, tokens, ts: at } : { type: 'banter.dropped', ...base, tokens, reason: out.ok ? 'unusable' : 'failed', ts: at };
        // The last thing a list waited for: its finish goes in the same append.
        const l = this.state.lists.get(list.list_id);
        const last = l && !l.finished && l.banter.open.length === 1 && itemsClosed(l);
        await this.step(last ? [ev, { type: 'list.finished', list_id: l.list_id, tokens_used: l.tokens_used + tokens, token_budget: l.token_budget, ts: at }] : [ev]);
      })().catch((e) => {
        this.release(key);
        if (!this.stopped) console.error('roost: flock banter', e);
      });
    };
    return { event: { type: 'banter.started', ...base, ts }, launch };
  }

  /** Finishes a list whose items are all closed, once its banter landed (or after the wait, dropped as late). */
  private async maybeFinish(list: FlockList): Promise<void> {
    if (list.finished || this.state.lists.get(list.list_id) !== list) return;
    // Finished once every item is closed and no banter is open either.
    if (!itemsClosed(list)) return;
    if (list.banter.open.length === 0) {
      const t = this.finishTimers.get(list.list_id);
      if (t) clearTimeout(t);
      this.finishTimers.delete(list.list_id);
      await this.step([{ type: 'list.finished', list_id: list.list_id, tokens_used: list.tokens_used, token_budget: list.token_budget, ts: flockTs(Date.now()) }]);
      return;
    }
    if (this.finishTimers.has(list.list_id)) return;
    const timer = setTimeout(() => {
      void (async () => {
        const l = this.state.lists.get(list.list_id);
        if (!l || l.finished || !this.driving) return;
        const ts = flockTs(Date.now());
        for (const b of l.banter.open) this.droppedBanter.add(`banter\u0000${b.item_id}\u0000${b.crow}`);
        await this.step(l.banter.open.map((b) => ({ type: 'banter.dropped', list_id: l.list_id, item_id: b.item_id, crow: b.crow, to: b.to, reason: 'late', ts })));
        this.finishTimers.delete(list.list_id);
        this.kick(list.list_id);
      })().catch((e) => console.error('roost: flock banter wait', e));
    }, this.settings.banterWaitMs);
    timer.unref();
    this.finishTimers.set(list.list_id, timer);
  }

  // ------------------------------------------------------------ owner actions

  /** An owner demotes (one level down) or resets (to stranger) a holder, with a reason. */
  async demote(holder: string, task_type: string, action: 'demote' | 'reset', by: string, reason: string): Promise<{ from: number; to: number }> {
    const from = trustLevel(this.state, holder, task_type);
    if (from === 0) throw new HttpError(409, 'conflict', `${holder} is already a stranger at ${task_type}`);
    const to = action === 'reset' ? 0 : from - 1;
    const before = this.state.changes;
    await this.append([{ type: 'trust.changed', list_id: '', holder, task_type, from, to, by, reason, ts: flockTs(Date.now()) }]);
    if (this.state.changes === before) throw new HttpError(409, 'conflict', 'the ledger changed meanwhile; read it and try again');
    return { from, to };
  }

  async setProjectBudget(token_budget: number, by: string): Promise<void> {
    await this.append([{ type: 'budget.set', token_budget, by, ts: flockTs(Date.now()) }]);
  }
}

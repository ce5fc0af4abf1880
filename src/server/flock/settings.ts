// The flock service's settings, defaults and options, its stream's name, a
// verdict's approval id, and the small types its parts share (service.ts and
// the classes it extends: streams, nest-posts, verdicts, lease, calls, drive).

import type { ModelRoster } from '../../models/config.js';
import { JEV_BAND } from './jev.js';
import type { Live, ChannelOptions } from '../live/index.js';
import type { ApprovalService } from '../approvals.js';
import type { FloorService } from '../floor.js';
import type { UsageService } from '../usage.js';
import type { CodeAgents } from './agents.js';
import type { VerdictTarget, FlockState } from '../../core/flock.js';
import { createHash } from 'node:crypto';
import type { Folded } from '../folded.js';


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

export type Obj = Record<string, unknown>;

/** How long calls' usage gathers before it is recorded (one append), and how many records make one at once. */
export const USAGE_MS = 100;
export const USAGE_BATCH = 100;

/** The phases whose driver step appends (a verdict phase too, when trust lets it through without an approval). */
export const STEPS: ReadonlySet<string> = new Set(['triage', 'rejected', 'failed', 'work', 'merge', 'answer']);

/**
 * A stored snapshot of the flock (docs/flock.md, "Snapshots"): the fold at
 * `position`, and what the list and nest streams' replay needs from before
 * it: their frames are rebuilt from the log from `frames_from` on (the first
 * position any kept frame has) without folding, skipping the `rejected`
 * positions (events the fold refused, which no stream carried).
 */
export interface FlockSnapshot {
  position: number;
  frames_from: number;
  rejected: number[];
  flock: unknown;
}

/** A folded flock entry: whether the fold accepted it, and its parsed body. */
export type FoldedFlock = Folded<FlockState> & { accepted: boolean; body: unknown };

export interface Running {
  list_id: string;
  reserve: number;
}

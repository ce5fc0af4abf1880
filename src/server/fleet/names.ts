// The fleet app's names (docs/fleet.md): how its streams, threads, callers,
// bridge holders, approval ids and teams are named, and the options of the
// service. The bottom of src/server/fleet/: every other file of the folder
// imports it, and it imports none of them.

import type { IncomingMessage } from 'node:http';
import { createHash } from 'node:crypto';
import { SESSION_ID_PATTERN, SESSION_LIMITS } from '../../core/fleet.js';
import type { ResultUsage } from '../../core/fleet-wire.js';
import { APPROVAL_LIMITS } from '../../core/approvals.js';
import type { ChannelOptions, Live } from '../live/index.js';
import { DEFAULT_PROJECT, LOCAL_OWNER, grantOf, principalKey } from '../access.js';
import { askedId, type ApprovalService } from '../approvals.js';
import type { Holders } from '../holders.js';
import type { UsageService } from '../usage.js';
import type { PerProject } from '../scoped.js';

/** A thread's stream is `sessions:<thread>` (default project) or `sessions:<project>:<thread>`: stored names, kept. */
export const FLEET_STREAM_PREFIX = 'sessions:';

/** A board's stream: `sessions:<thread>` in the default project, `sessions:<project>:<thread>` in another. */
export function boardStream(project: string, thread: string): string {
  return FLEET_STREAM_PREFIX + (project === DEFAULT_PROJECT ? thread : `${project}:${thread}`);
}
/** A thread id has the form of a session id. */
export const THREAD_PATTERN = SESSION_ID_PATTERN;
export const MAX_SESSION_BATCH = 200;
/** A session event is small; prompts and turns are capped at 20,000 characters. */
export const MAX_BODY = 512 * 1024;

/** A server-side reader of a board: each folded entry's event, its position, and a result's usage when heard here. */
export type BoardWatcher = (event: Record<string, unknown>, position: number, usage?: ResultUsage) => void;

/** Who is posting, as the transport knows it. */
export interface Caller {
  name: string;
  uid?: string;
}

export interface FleetOptions {
  live: Live;
  channel: ChannelOptions;
  /** A snapshot of a board is stored every this many events. */
  snapshotEvery: number;
  /** Replays longer than this get a reset snapshot instead. */
  maxReplay: number;
  /**
   * Who the caller is. Throws an HttpError (401/403) to refuse. The default is
   * local mode's (see `localCaller`); shared mode replaces it with the
   * authenticated member or token.
   */
  identify?: (req: IncomingMessage) => Caller;
  /** The project's usage roll-up: a bridge's `session.result` usage is counted there (never stored on the board). */
  usage?: (project: string) => Promise<UsageService>;
  /**
   * The one approvals model (docs/approvals.md): a board's request is an
   * approval of kind `fleet` in its project's approvals, decided there; the
   * board shows each outcome as the server's echo. Absent: a board alone
   * (tests of the fold's rules), decided on the board as the contract reads.
   */
  approvals?: PerProject<ApprovalService>;
  /** Who holds askers' waits (a bridge following its board holds its requests). */
  holders?: Holders;
  /** Several nodes: another node's bridges are forgotten after this long without a repeat (default PRESENCE_EXPIRE_MS, 30 s). */
  presenceExpireMs?: number;
}

/** The project of a board's key (`<thread>` in the default project, else `<project>:<thread>`: FleetService.board). */
export function projectOfKey(key: string): string {
  const i = key.indexOf(':');
  return i < 0 ? DEFAULT_PROJECT : key.slice(0, i);
}

/** The topic of bridge presence on the store's broadcast (src/server/presence.ts): per project, one entry per bridge connection, named by its thread. */
export const BRIDGES_TOPIC = 'fleet.bridges';

/** How long after the bridge's own window the server's expiry comes (the bridge's own denial normally closes it first). */
const FLEET_WINDOW_SLACK_MS = 10_000;

/**
 * The approval id of request `rid` of board session `session` on a board
 * stream: derived, so the board's alias, Work and the echo all name the same
 * request, and one board can never name another's.
 */
export function fleetApprovalId(stream: string, session: string, rid: string): string {
  return askedId('fl', stream, `${session}\n${rid}`);
}

/**
 * The holder of a bridge's requests: the bridge's process id (`Roost-Bridge`,
 * new each start) bound to the caller, so one member's client can never hold
 * (or release) another's. Empty without the header (a plain client: only the
 * window closes its requests).
 */
export function bridgeHolder(req: IncomingMessage, who: Caller): string {
  const raw = req.headers['roost-bridge'];
  if (typeof raw !== 'string' || !THREAD_PATTERN.test(raw)) return '';
  return 'bridge:' + createHash('sha256').update(`${who.uid ?? ''}\n${raw}`).digest('hex').slice(0, 24);
}

/**
 * The team a board session's calls earn trust as (docs/approvals.md "Earned
 * trust"): its Space's thread, named as the usage books its cost (`fleet ·
 * <thread>`), so every session of that thread shares it and no other does.
 */
export function fleetTeam(thread: string): string {
  return `fleet · ${thread}`.slice(0, 80);
}

/** The bridge's window (`Roost-Approval-Window`, ms), when it says; the server's expiry comes a little after it. */
export function windowOf(req: IncomingMessage): number | undefined {
  const ms = Number(req.headers['roost-approval-window']);
  if (!Number.isInteger(ms) || ms < APPROVAL_LIMITS.minWindow || ms > APPROVAL_LIMITS.maxWindow) return undefined;
  return ms + FLEET_WINDOW_SLACK_MS;
}

/**
 * Local mode: the server listens on loopback only and the person at the
 * machine is the only member, so every caller is the owner (`uid: local`). A
 * client may label itself with the `Roost-Name` header (the bridge says
 * "Claude", a browser tab the name its person typed), which only tells the
 * owner's own clients apart on the board and in the chat.
 */
export function localCaller(req: IncomingMessage): Caller {
  // Shared mode: the authenticated member or token, whatever the request says.
  const g = grantOf(req);
  if (g && g.kind !== 'local') return { name: g.name, uid: g.uid };
  const raw = req.headers['roost-name'];
  const label = typeof raw === 'string' ? raw.replace(/\s+/g, ' ').trim().slice(0, SESSION_LIMITS.by) : '';
  return { name: label || LOCAL_OWNER.name, uid: LOCAL_OWNER.uid };
}

/** The project the access layer resolved for this request (local mode without a grant: the default). */
export function projectFor(req: IncomingMessage): string {
  return grantOf(req)?.project ?? DEFAULT_PROJECT;
}

/**
 * Who asked a board's requests, as the approvals record it (`askedBy`): the
 * token that posted them (a bridge's, an agent's), which may then not decide
 * them; '' for a person or local mode, whose own bridge's requests are theirs
 * to decide (as a hook's: src/server/hooks.ts).
 */
export function askerOf(req: IncomingMessage): string {
  const g = grantOf(req);
  return g?.kind === 'token' ? principalKey(g) : '';
}

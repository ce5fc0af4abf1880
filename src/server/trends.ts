// Per-agent trends (docs/floor.md, "Trends"):
//
//   GET /floor/trends?agent=<id>[&tz=<minutes>]
//
// One agent's tool calls, approvals waited for, time waiting for a person,
// failures and cost per day over the last 30 days, folded on request from
// the log by the pure fold of src/core/trends.ts: the floor's, the approvals'
// and the usage's streams of the caller's project are each read backwards
// from their head down to the window's start, at most TRENDS_LIMITS.scan
// entries each, so a request costs the same however long the log is. On a
// project busier than that in 30 days the answer says from when it is whole
// (`since`). A viewer route: the project is the caller's grant's.

import { emptyTrends, trendApproval, trendFloor, trendUsage, trendsSince, TREND_DAYS, type TrendState } from '../core/trends.js';
import type { EventStore, LogEntry } from '../storage/types.js';
import { approvalsStream } from './approvals.js';
import { floorStream } from './floor.js';
import { HttpError, sendJson } from './http.js';
import { route, type Route } from './route.js';
import { usageStream } from './usage.js';

export const TRENDS_LIMITS = {
  /** Entries of each stream examined per request, at most. */
  scan: 20_000,
  /** Entries read from the store at a time. */
  window: 1_000,
} as const;

/**
 * Feeds `fold` the entries of `stream` appended at or after `since`, newest
 * first, at most TRENDS_LIMITS.scan of them. Returns the append time from
 * which the stream was read whole (`since` when the window's start was reached).
 */
async function scanWindow(store: EventStore, stream: string, since: number, fold: (e: unknown, at: number) => void, needle?: string): Promise<number> {
  let top = await store.head(stream);
  let budget: number = TRENDS_LIMITS.scan;
  let oldest = Infinity;
  while (top >= 1 && budget > 0) {
    const n = Math.min(TRENDS_LIMITS.window, budget, top);
    const got: LogEntry[] = await store.read(stream, top - n, n);
    if (got.length === 0) break;
    for (let i = got.length - 1; i >= 0; i--) {
      const e = got[i];
      if (e.at < since) return since;
      budget--;
      oldest = e.at;
      // An entry whose text does not hold the agent's id (as JSON writes it) cannot be about it: not parsed.
      if (needle !== undefined && !e.body.includes(needle)) continue;
      let v: unknown = e.value;
      if (v === undefined) {
        try {
          v = JSON.parse(e.body);
        } catch {
          continue;
        }
      }
      fold(v, e.at);
    }
    top = got[0].position - 1;
  }
  // The stream's start was reached (everything is in), or the budget ran out at `oldest`.
  return top < 1 ? since : Math.max(since, oldest);
}

/** The trends of `agent` in `project` at `now`, for a caller `offsetMinutes` behind UTC. */
export async function agentTrends(store: EventStore, project: string, agent: string, now: number, offsetMinutes: number): Promise<{ state: TrendState; since: number }> {
  const t = emptyTrends(agent, now, offsetMinutes);
  const start = trendsSince(t);
  const needle = JSON.stringify(agent).slice(1, -1);
  const a = await scanWindow(store, floorStream(project), start, (e, at) => trendFloor(t, e, at), needle);
  const b = await scanWindow(store, approvalsStream(project), start, (e, at) => trendApproval(t, e, at));
  const c = await scanWindow(store, usageStream(project), start, (e, at) => trendUsage(t, e, at), needle);
  return { state: t, since: Math.max(a, b, c) };
}

export function trendsRoutes(store: EventStore): Route[] {
  return [
    route({
      method: 'GET',
      path: '/floor/trends',
      auth: 'viewer',
      doc: `?agent=, tz= (minutes, as getTimezoneOffset says): per day over the last ${TREND_DAYS} days, tool calls, approvals waited for, time waiting, failures, cost; at most ${TRENDS_LIMITS.scan} entries of each stream read`,
      handler: async ({ res, url, grant }) => {
        const agent = (url.searchParams.get('agent') ?? '').trim();
        if (!agent) throw new HttpError(400, 'bad_request', '"agent" is required: the id of an agent');
        if (agent.length > 1024) throw new HttpError(400, 'bad_request', '"agent" is longer than 1024 characters');
        const tz = url.searchParams.get('tz');
        if (tz !== null && !/^-?\d{1,4}$/.test(tz)) throw new HttpError(400, 'bad_request', '"tz" is minutes behind UTC, as getTimezoneOffset says');
        const { state, since } = await agentTrends(store, grant!.project, agent, Date.now(), tz === null ? 0 : Number(tz));
        sendJson(res, 200, {
          agent,
          days: state.days,
          since,
          complete: since === trendsSince(state),
        });
      },
    }),
  ];
}

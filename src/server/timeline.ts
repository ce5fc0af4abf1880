// History from the log: an agent's timeline (what it said, the tools it ran,
// the messages it sent and got, the approvals it asked for and who decided
// them) and the floor's pulse (events per minute per team, the last hour).
//
//   GET /floor/timeline?agent=<id>[&q=<words>][&before=<cursor>][&limit=<n>][&from=<f:pos|a:pos>]
//   GET /floor/pulse
//
// The timeline is read from the log, newest first, in pages: the floor's
// stream and the project's approvals stream are each scanned backwards from
// the cursor in windows, at most SCAN_PER_PAGE entries of each per request,
// so a request costs the same however long the log is (a quiet agent on a
// busy floor may take several pages, each saying where to go on). Items of
// the two streams are merged by the server's append time; a page only gives
// items no unscanned entry could come before, so paging never reorders.
// The search is a plain, case-insensitive substring of the item's words
// (linear, no pattern language). docs/floor.md, "History".

import { agentIdOf, type Agent, type FloorEvent } from '../core/floor.js';
import type { TimelineItem, TimelinePage } from '../core/floor-wire.js';
import { pulseSeries } from '../core/pulse.js';
import type { EventStore, LogEntry } from '../storage/types.js';
import type { ApprovalService } from './approvals.js';
import type { FloorService } from './floor.js';
import { HttpError, sendJson } from './http.js';
import { route, type Route } from './route.js';
import type { PerProject } from './scoped.js';

export const TIMELINE_LIMITS = {
  /** Items per page: the default, and the most a caller may ask for. */
  page: 50,
  maxPage: 200,
  /** Log entries of each stream examined per request, at most. */
  scanPerPage: 20_000,
  /** Entries read from the store at a time. */
  window: 1_000,
  /** The search's length. */
  query: 200,
  /** Approvals whose outcome is looked for further up the log, per page; and how far. */
  outcomeLookups: 40,
  outcomeScan: 5_000,
  /** Words per item, characters. */
  text: 2_000,
} as const;

const clip = (v: unknown, n: number = TIMELINE_LIMITS.text): string | undefined => (typeof v === 'string' && v.length ? (v.length > n ? v.slice(0, n) : v) : undefined);

/** Who the timeline is about, as the floor knows it now. */
interface Subject {
  id: string;
  /** For a helper: its parent and role, the events posted for it through a subagent hint (same parent, same type). */
  parent: string | null;
  role: string;
}

function recipients(to: unknown): string[] {
  const list = Array.isArray(to) ? to : typeof to === 'string' ? [to] : [];
  const out: string[] = [];
  for (const x of list.slice(0, 50)) if (typeof x === 'string' && x.trim()) out.push(x.trim().slice(0, 128));
  return out;
}

/** The floor event at `entry` as an item of `who`'s timeline, or null when it is not about them. */
export function floorItem(entry: LogEntry, who: Subject): TimelineItem | null {
  if (entry.type === 'sweep' || entry.type === 'reset') return null;
  let e: FloorEvent;
  try {
    e = (entry.value ?? JSON.parse(entry.body)) as FloorEvent;
  } catch {
    return null;
  }
  if (!e || typeof e !== 'object') return null;
  const named = agentIdOf(e);
  const hint = e.subagent && typeof e.subagent === 'object' && !Array.isArray(e.subagent) ? (e.subagent as Record<string, unknown>) : null;
  let mine: boolean;
  if (hint) {
    const type = typeof hint.type === 'string' && hint.type.trim() ? hint.type.trim() : 'subagent';
    mine = who.parent !== null && named === who.parent && type === who.role;
  } else mine = named === who.id;
  const base = { key: `f:${entry.position}`, at: entry.at };
  if (!mine) {
    // A message to them.
    if (e.type === 'message' && named !== undefined && recipients(e.to).includes(who.id)) return { ...base, kind: 'heard', from: named, text: clip(e.text) };
    return null;
  }
  const team = typeof e.team === 'string' ? e.team : e.team && typeof e.team === 'object' ? clip((e.team as Record<string, unknown>).name, 80) : undefined;
  const common = { status: clip(e.status, 40), activity: clip(e.activity), tool: clip(e.tool, 80) };
  switch (e.type) {
    case 'join':
      return { ...base, kind: 'join', ...common, team };
    case 'leave':
      return { ...base, kind: 'leave' };
    case 'tool':
      return { ...base, kind: 'tool', ...common };
    case 'status':
      return { ...base, kind: 'status', ...common };
    case 'message':
      return { ...base, kind: 'message', to: recipients(e.to), text: clip(e.text) };
    case 'task':
      return { ...base, kind: 'task', task: clip(e.task) ?? '' };
    default:
      return null;
  }
}

/** The words of an item the search looks in, lower case. */
function words(i: TimelineItem): string {
  const a = i.approval;
  return [i.kind, i.status, i.tool, i.activity, i.text, i.from, i.task, i.team, ...(i.to ?? []), a?.tool, a?.input, a?.outcome, a?.by, a?.reason]
    .filter((x) => typeof x === 'string')
    .join('\n')
    .toLowerCase();
}

interface Scanned {
  /** Matches, newest first. */
  items: TimelineItem[];
  /** The lowest position examined (everything in [low, before) was looked at); 1 or less when the stream's start was reached. */
  low: number;
  /** The append time of the entry at `low` (what an unscanned entry is at most). */
  lowAt: number;
}

/** Scans `stream` backwards from `before` (exclusive) for up to `want` items, examining at most SCAN_PER_PAGE entries. */
async function scanBack(store: EventStore, stream: string, before: number, want: number, pick: (e: LogEntry) => TimelineItem | null): Promise<Scanned> {
  const items: TimelineItem[] = [];
  let top = before - 1; // the highest position not yet examined
  let budget: number = TIMELINE_LIMITS.scanPerPage;
  let low = before;
  let lowAt = Infinity;
  while (top >= 1 && budget > 0 && items.length < want) {
    const n = Math.min(TIMELINE_LIMITS.window, budget, top);
    const from = top - n; // read (from, top]
    const got = await store.read(stream, from, n);
    if (got.length === 0) break;
    for (let i = got.length - 1; i >= 0; i--) {
      const e = got[i];
      if (e.position > top) continue;
      low = e.position;
      lowAt = e.at;
      budget--;
      const it = pick(e);
      if (it) items.push(it);
      if (items.length >= want) break;
    }
    top = low - 1;
  }
  return { items, low, lowAt };
}

/** `<floor>.<approvals>`: the positions each stream's next page starts below. */
function parseCursor(s: string | null): { f: number; a: number } | null {
  if (s === null) return null;
  const m = /^(\d{1,15})\.(\d{1,15})$/.exec(s);
  if (!m) throw new HttpError(400, 'bad_request', '"before" is a cursor from a previous page ("next")');
  return { f: Number(m[1]), a: Number(m[2]) };
}

export interface TimelineQuery {
  agent: string;
  q: string;
  before: string | null;
  limit: number;
  /**
   * A moment to open the timeline at (what a search hit names): `f:<position>`
   * of the floor's log or `a:<position>` of the approvals' log. The page starts
   * with that entry and goes on older. It also opens the history of an agent
   * no longer on the floor (a past session), when that entry names it.
   */
  from?: string | null;
}

/** `f:<position>` or `a:<position>` (an item's key). */
function parseMoment(s: string): { s: 'f' | 'a'; position: number } {
  const m = /^([fa]):(\d{1,15})$/.exec(s);
  if (!m || Number(m[2]) < 1) throw new HttpError(400, 'bad_request', '"from" is an item\'s key: f:<position> or a:<position>');
  return { s: m[1] as 'f' | 'a', position: Number(m[2]) };
}

/** The first position of `stream` whose append time is after `at` (head + 1 when none): a binary search, about 50 reads at most. */
async function firstAfter(store: EventStore, stream: string, at: number): Promise<number> {
  let lo = 1;
  let hi = (await store.head(stream)) + 1;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const [e] = await store.read(stream, mid - 1, 1);
    if (!e || e.at > at) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Whether the entry at `moment` is about `agent` (named by a floor event, or the asker of an approval). */
async function namesAgent(store: EventStore, stream: string, position: number, kind: 'f' | 'a', agent: string): Promise<{ at: number } | null> {
  const [e] = await store.read(stream, position - 1, 1);
  if (!e || e.position !== position) return null;
  if (kind === 'f') return floorItem(e, { id: agent, parent: null, role: '' }) ? { at: e.at } : null;
  try {
    const v = JSON.parse(e.body) as Record<string, unknown>;
    const asker = typeof v.asker === 'string' ? v.asker : typeof v.agent === 'string' ? v.agent : '';
    return asker.trim() === agent ? { at: e.at } : null;
  } catch {
    return null;
  }
}

/** One page of an agent's timeline. Throws 404 when the agent is not on the floor. */
export async function timelinePage(store: EventStore, floor: FloorService, approvals: ApprovalService, query: TimelineQuery): Promise<TimelinePage> {
  const moment = query.from ? parseMoment(query.from) : null;
  let a: Pick<Agent, 'id' | 'parent' | 'role'> | undefined = floor.state.agents.get(query.agent);
  let cursor = parseCursor(query.before);
  if (moment) {
    const stream = moment.s === 'f' ? floor.stream : approvals.stream;
    // An agent the floor has forgotten (a past session) has its history in the log: the moment must name it (on every page).
    const at = await namesAgent(store, stream, moment.position, moment.s, query.agent);
    if (!a && at) a = { id: query.agent, parent: null, role: '' };
    // The first page starts at the moment; the next ones go on from their cursor.
    if (a && !cursor) {
      const ev = at ?? (await store.read(stream, moment.position - 1, 1))[0];
      const other = ev ? await firstAfter(store, moment.s === 'f' ? approvals.stream : floor.stream, ev.at) : 1;
      cursor = moment.s === 'f' ? { f: moment.position + 1, a: other } : { f: other, a: moment.position + 1 };
    }
  }
  if (!a) throw new HttpError(404, 'not_found', `no agent "${query.agent.slice(0, 128)}" on this floor`);
  const who: Subject = { id: a.id, parent: a.parent, role: a.role };
  const q = query.q.toLowerCase();
  const match = (i: TimelineItem | null) => (i && (q === '' || words(i).includes(q)) ? i : null);
  const fBefore = cursor ? cursor.f : (await store.head(floor.stream)) + 1;
  const aBefore = cursor ? cursor.a : (await store.head(approvals.stream)) + 1;

  // Approvals: the requests this agent made; each with its outcome (from the folded state when it is still
  // kept there, else looked for further up the log, a bounded number per page).
  let lookups = 0;
  const outcomes = new Map<string, NonNullable<TimelineItem['approval']>>();
  const approvalPick = (e: LogEntry): TimelineItem | null => {
    if (e.type !== 'approval.requested') return null;
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(e.body) as Record<string, unknown>;
    } catch {
      return null;
    }
    const asker = typeof v.asker === 'string' ? v.asker : typeof v.agent === 'string' ? v.agent : '';
    if (asker.trim() !== a.id || typeof v.id !== 'string') return null;
    const id = v.id;
    const kept = approvals.state.byId.get(id);
    const ap = {
      id,
      tool: clip(v.tool, 120) ?? '',
      input: clip(v.input) ?? '',
      outcome: kept ? kept.status : 'unknown',
      by: kept?.decidedBy ?? '',
      decidedAt: kept?.decidedAt ?? null,
      reason: kept?.reason ?? '',
    };
    if (!kept) outcomes.set(`${e.position}`, ap);
    return { key: `a:${e.position}`, at: e.at, kind: 'approval', tool: ap.tool, approval: ap };
  };
  // Outcomes must be known before the search looks at them: scan, resolve, then match.
  const fScan = await scanBack(store, floor.stream, fBefore, query.limit, (e) => match(floorItem(e, who)));
  const aRaw = await scanBack(store, approvals.stream, aBefore, q === '' ? query.limit : TIMELINE_LIMITS.scanPerPage, approvalPick);
  for (const [pos, ap] of outcomes) {
    if (lookups++ >= TIMELINE_LIMITS.outcomeLookups) break;
    const after = await store.read(approvals.stream, Number(pos), TIMELINE_LIMITS.outcomeScan);
    for (const e of after) {
      if (!e.type.startsWith('approval.') || e.type === 'approval.requested' || !e.body.includes(ap.id)) continue;
      const o = JSON.parse(e.body) as Record<string, unknown>;
      if (o.id !== ap.id) continue;
      ap.outcome = e.type === 'approval.decided' ? (o.decision === 'allow' ? 'allowed' : 'denied') : e.type === 'approval.expired' ? 'expired' : 'withdrawn';
      ap.by = typeof o.by === 'string' ? o.by.slice(0, 120) : '';
      ap.decidedAt = typeof o.ts === 'number' ? o.ts : e.at;
      ap.reason = clip(o.reason, 500) ?? '';
      break;
    }
  }
  // With a search, the approvals were scanned for every request (their outcome is part of the words): keep the matches.
  let aItems = aRaw.items.filter((i) => match(i) !== null);
  let aScan: Scanned;
  if (aItems.length > query.limit) {
    aItems = aItems.slice(0, query.limit);
    const lastPos = Number(aItems[aItems.length - 1].key.slice(2));
    aScan = { items: aItems, low: lastPos, lowAt: aItems[aItems.length - 1].at };
  } else aScan = { ...aRaw, items: aItems };

  // Merge, newest first, keeping only what no unscanned entry could precede.
  const frontier = Math.max(fScan.low > 1 ? fScan.lowAt : -Infinity, aScan.low > 1 ? aScan.lowAt : -Infinity);
  const merged = [...fScan.items.map((i) => ({ i, s: 'f' as const })), ...aScan.items.map((i) => ({ i, s: 'a' as const }))]
    .filter((x) => x.i.at >= frontier)
    .sort((x, y) => y.i.at - x.i.at || (x.i.key < y.i.key ? 1 : -1))
    .slice(0, query.limit);
  const taken = { f: 0, a: 0 };
  let lastF = fBefore;
  let lastA = aBefore;
  for (const x of merged) {
    const pos = Number(x.i.key.slice(2));
    taken[x.s]++;
    if (x.s === 'f') lastF = pos;
    else lastA = pos;
  }
  // Each stream goes on below what this page consumed: all it examined when every match was given, else below its last given item.
  const nextF = taken.f === fScan.items.length ? fScan.low : lastF;
  const nextA = taken.a === aScan.items.length ? aScan.low : lastA;
  const done = nextF <= 1 && nextA <= 1;
  return { agent: a.id, items: merged.map((x) => x.i), next: done ? null : `${Math.max(0, nextF)}.${Math.max(0, nextA)}` };
}

/** GET /floor/timeline and GET /floor/pulse, read by viewers of the project like the floor's other reads. */
export function historyRoutes(store: EventStore, floors: PerProject<FloorService>, approvals: PerProject<ApprovalService>): Route[] {
  return [
    route({
      method: 'GET',
      path: '/floor/timeline',
      auth: 'viewer',
      doc: '?agent=, q=, before=, limit= up to 200, from= (f:<pos> or a:<pos>: open at that moment); 404 for an agent not on the floor (unless `from` names it)',
      handler: async ({ req, res, url }) => {
        const agent = url.searchParams.get('agent');
        if (!agent || !agent.trim()) throw new HttpError(400, 'bad_request', '"agent" is required: the id of an agent on the floor');
        if (agent.length > 1024) throw new HttpError(400, 'bad_request', '"agent" is longer than 1024 characters');
        const q = (url.searchParams.get('q') ?? '').trim();
        if (q.length > TIMELINE_LIMITS.query) throw new HttpError(400, 'bad_request', `"q" is longer than ${TIMELINE_LIMITS.query} characters`);
        const rawLimit = url.searchParams.get('limit');
        let limit: number = TIMELINE_LIMITS.page;
        if (rawLimit !== null) {
          if (!/^\d{1,6}$/.test(rawLimit) || Number(rawLimit) < 1) throw new HttpError(400, 'bad_request', '"limit" must be a whole number from 1');
          limit = Math.min(TIMELINE_LIMITS.maxPage, Number(rawLimit));
        }
        const from = url.searchParams.get('from');
        if (from !== null && from.length > 40) throw new HttpError(400, 'bad_request', '"from" is an item\'s key: f:<position> or a:<position>');
        const page = await timelinePage(store, await floors.of(req), await approvals.of(req), { agent: agent.trim(), q, before: url.searchParams.get('before'), limit, from });
        sendJson(res, 200, page);
      },
    }),
    route({
      method: 'GET',
      path: '/floor/pulse',
      auth: 'viewer',
      doc: 'events per minute per team, the last hour',
      handler: async ({ req, res }) => {
        const floor = await floors.of(req);
        const now = Date.now();
        const p = pulseSeries(floor.pulse, now);
        sendJson(res, 200, { minutes: 60, now, start: p.start, teams: p.teams.map((t) => ({ id: t.team, name: floor.state.teams.get(t.team)?.name ?? t.team, counts: t.counts, total: t.total })) });
      },
    }),
  ];
}

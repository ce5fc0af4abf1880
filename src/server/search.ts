// Search across a project (docs/search.md):
//
//   GET /api/search?q=<words and "phrases">[&team=][&agent=][&kind=][&from=][&to=][&cursor=][&limit=]
//
// A viewer route: the project is the caller's grant's, so a viewer of one
// project finds nothing of another. The store's full-text index answers
// (EventStore.search); the query is only ever words (src/core/search-text.ts).

import { HttpError, sendJson } from './http.js';
import { route, type Route } from './route.js';
import { QUERY_LIMITS, fleetThreadOf, type SearchAnswerHit, type SearchOpen } from '../core/search-text.js';
import { agentChatOf } from '../core/work.js';
import { SEARCH_LIMITS, type EventStore, type SearchQuery } from '../storage/types.js';

export const SEARCH_PARAM_LIMITS = {
  /** The longest `q` taken (longer is a 400); only its first QUERY_LIMITS.chars are read. */
  q: 10_000,
  filter: 256,
  cursor: 1_000,
} as const;

/** A time bound: milliseconds since the epoch, or a date the platform reads (ISO 8601). */
function timeOf(name: string, v: string | null): number | undefined {
  if (v === null || v === '') return undefined;
  if (v.length > 64) throw new HttpError(400, 'bad_request', `"${name}" is a time: milliseconds or an ISO date`);
  const t = /^\d{1,16}$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isSafeInteger(t)) throw new HttpError(400, 'bad_request', `"${name}" is a time: milliseconds or an ISO date`);
  return t;
}

function filterOf(url: URL, name: string, max: number = SEARCH_PARAM_LIMITS.filter): string | undefined {
  const v = url.searchParams.get(name);
  if (v === null || v === '') return undefined;
  if (v.length > max) throw new HttpError(400, 'bad_request', `"${name}" is longer than ${max} characters`);
  return v;
}

const ID = /^[A-Za-z0-9._:#@-]{1,128}$/;

/** The ids a hit's event names, for the web app to open where it came from; {} when none. */
export function openOf(family: string, body: string): SearchOpen {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return {};
  }
  if (!o || typeof o !== 'object') return {};
  const id = (v: unknown) => (typeof v === 'string' && ID.test(v) ? v : undefined);
  if (family === 'approvals') return id(o.id) ? { approval: id(o.id) } : {};
  if (family === 'flock') {
    if (id(o.item_id)) return { item: id(o.item_id) };
    return id(o.nest_id) ? { nest: id(o.nest_id) } : {};
  }
  if (family === 'work') {
    const c = o.conversation;
    // A command's and its execution's events name the agent's chat (the server writes it on them); a
    // `command.queued` from before that names only its agent, whose chat it is. A conversation's
    // creation names it `id`, a request started in the project (`conversation.linked`) `target`.
    const cid =
      id(c) ??
      (c && typeof c === 'object' ? id((c as Record<string, unknown>).id) : undefined) ??
      (o.type === 'command.queued' && id(o.agent) ? id(agentChatOf(o.agent as string)) : undefined) ??
      (o.type === 'conversation.created' ? id(o.id) : o.type === 'conversation.linked' ? id(o.target) : undefined);
    return cid ? { conversation: cid } : {};
  }
  return {};
}

export function searchRoutes(store: EventStore): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/search',
      auth: 'viewer',
      doc: `?q= (words, "phrases"; at most ${QUERY_LIMITS.terms} terms), team=, agent=, kind=, vendor=, tool=, status=, decider=, from=, to= (ms or ISO), cursor=, limit= up to ${SEARCH_LIMITS.maxPage}; newest first`,
      handler: async ({ res, url, grant }) => {
        const q = url.searchParams.get('q') ?? '';
        if (q.length > SEARCH_PARAM_LIMITS.q) throw new HttpError(400, 'bad_request', `"q" is longer than ${SEARCH_PARAM_LIMITS.q} characters`);
        const rawLimit = url.searchParams.get('limit');
        let limit: number = SEARCH_LIMITS.page;
        if (rawLimit !== null) {
          if (!/^\d{1,6}$/.test(rawLimit) || Number(rawLimit) < 1) throw new HttpError(400, 'bad_request', '"limit" must be a whole number from 1');
          limit = Math.min(SEARCH_LIMITS.maxPage, Number(rawLimit));
        }
        const project = grant!.project;
        const query: SearchQuery = {
          project,
          q,
          team: filterOf(url, 'team'),
          agent: filterOf(url, 'agent'),
          kind: filterOf(url, 'kind'),
          vendor: filterOf(url, 'vendor'),
          tool: filterOf(url, 'tool'),
          status: filterOf(url, 'status'),
          decider: filterOf(url, 'decider'),
          from: timeOf('from', url.searchParams.get('from')),
          to: timeOf('to', url.searchParams.get('to')),
          cursor: filterOf(url, 'cursor', SEARCH_PARAM_LIMITS.cursor),
          limit,
        };
        const page = await store.search(query);
        // What a hit off the floor opens (an approval's page, a nest): one read of its event each, at most a page of them.
        const opens: SearchOpen[] = [];
        for (const h of page.hits) {
          if (h.family === 'floor') opens.push({});
          else if (h.family === 'fleet') {
            // The thread is the stream's, the session the hit's agent (its id): no read.
            const thread = fleetThreadOf(h.stream);
            opens.push(thread ? { thread, ...(h.agent ? { session: h.agent } : {}) } : {});
          }
          else {
            const [e] = await store.read(h.stream, h.position - 1, 1);
            opens.push(e && e.position === h.position ? openOf(h.family, e.body) : {});
          }
        }
        sendJson(res, 200, {
          hits: page.hits.map((h, i): SearchAnswerHit => ({
            ...h,
            ts: new Date(h.at).toISOString(),
            // The live scope the moment belongs to (what the web app opens).
            scope: `${h.family}:${project}`,
            open: opens[i],
          })),
          next: page.next,
        });
      },
    }),
  ];
}

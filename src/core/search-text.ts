// What full-text search sees of the log (docs/search.md): one pure function
// from a stored event to its search document, and one from a caller's query
// to the terms the stores look for. Both stores (SQLite FTS5, PostgreSQL
// tsvector) index the SAME word list made here, and are given the SAME terms,
// so they match alike: the engines' own parsers (FTS5's unicode61, PostgreSQL's
// parser that keeps `a/b.ts` as one "file" token) never decide what a word is.
//
// A word is a run of letters and digits, lower-cased, diacritics removed,
// at most WORD_MAX characters (longer runs are cut, in documents and queries
// alike). A caller's query is never handed to MATCH or to_tsquery: it becomes
// at most QUERY_LIMITS.terms terms (a word, or a quoted phrase of words), each
// made only of such words, which the stores quote themselves.

import { SESSION_ID_PATTERN } from './fleet.js';

/** Which part of a project an indexed stream is (`fleet`: a fleet board's thread, `sessions:*`). */
export type SearchFamily = 'floor' | 'approvals' | 'flock' | 'work' | 'fleet';

/** A fleet thread's stream: `sessions:<thread>` (the default project's) or `sessions:<project>:<thread>`. */
export const FLEET_SEARCH_PREFIX = 'sessions:';

/** The thread of a fleet stream (its last part), or null. */
export function fleetThreadOf(stream: string): string | null {
  if (!stream.startsWith(FLEET_SEARCH_PREFIX)) return null;
  const thread = stream.slice(stream.lastIndexOf(':') + 1);
  return SESSION_ID_PATTERN.test(thread) ? thread : null;
}

/** One event a search found, as the store answers it (EventStore.search). */
export interface SearchHit {
  stream: string;
  position: number;
  /** Server time of the append, ms. */
  at: number;
  family: string;
  kind: string;
  agent: string;
  team: string;
  /** Up to 200 characters of the event's text around the first match, matched words marked «so». */
  snippet: string;
}

/** What a hit of the approvals, the flock, Work or a fleet board opens in the web app (floor hits open the agent's timeline). */
export interface SearchOpen {
  /** The approval's id: its page, `/inbox/<id>`. */
  approval?: string;
  /** The nest a nest message was said in: `/flock/nests/<id>`. */
  nest?: string;
  /** A list's item a flock event is of: the lists, scrolled to it, `/flock?item=<id>`. */
  item?: string;
  /** Work's conversation of a message. */
  conversation?: string;
  /** A fleet board's thread (`/fleet/<thread>`) and the session there a hit is of. */
  thread?: string;
  session?: string;
}

/** A hit as GET /api/search answers it (src/server/search.ts) and the web app reads it: the store's, with its time in ISO 8601, the live scope it belongs to, and what it opens. */
export interface SearchAnswerHit extends SearchHit {
  ts: string;
  scope: string;
  open: SearchOpen;
}

export interface SearchDoc {
  project: string;
  family: SearchFamily;
  /** The event's type (`tool`, `message`, `approval.requested`, `nest.message`, ...). */
  kind: string;
  /** The agent (or asker, crow, author) it is about; '' when none. */
  agent: string;
  /** Its team, when it says; '' otherwise. */
  team: string;
  /** The agent's vendor as the event names it (`source`, its own or its agent's: `claude-code`, `codex`, ...); ''. */
  vendor: string;
  /** The tool it is about (`Bash`, `Edit`, ...); ''. */
  tool: string;
  /** Its status: an agent's `status`, a fleet session's or approval's `state`, a decision's `decision`; ''. */
  status: string;
  /** Who decided (an approval's decision, a fleet approval allowed or denied): `by`, else the poster's `name`; ''. */
  decider: string;
  /** The readable text (for snippets), capped at DOC_LIMITS.text. */
  text: string;
  /** The words of `text`, space-separated (what the stores index). */
  words: string;
}

export const DOC_LIMITS = { text: 4_000, field: 1_000, depth: 6, strings: 200, id: 128 } as const;
export const WORD_MAX = 64;
export const QUERY_LIMITS = {
  /** A query's characters looked at; the rest is ignored. */
  chars: 1_000,
  /** Terms (words and phrases) at most; later ones are ignored. */
  terms: 8,
  /** Words in one phrase at most. */
  phraseWords: 8,
} as const;

/** Keys whose values are bookkeeping, not what a person searches for. */
const SKIP_KEYS = new Set(['type', 'v', 'ts', 'at', 'holder', 'askedBy', 'principal', 'fingerprint', 'key', 'rid', 'window', 'deadline']);

/** The project and family of a stream Roost indexes, or null (sessions, private Work, the Space registry, usage, ...). */
export function searchStreamOf(stream: string): { project: string; family: SearchFamily } | null {
  for (const family of ['floor', 'approvals', 'flock'] as const) {
    if (stream === family) return { project: 'default', family };
    if (stream.startsWith(`${family}:`)) {
      const project = stream.slice(family.length + 1);
      return project ? { project, family } : null;
    }
  }
  if (stream.startsWith(FLEET_SEARCH_PREFIX)) {
    if (fleetThreadOf(stream) === null) return null;
    const rest = stream.slice(FLEET_SEARCH_PREFIX.length);
    const i = rest.lastIndexOf(':');
    return i < 0 ? { project: 'default', family: 'fleet' } : i > 0 ? { project: rest.slice(0, i), family: 'fleet' } : null;
  }
  if (stream.startsWith('work:')) {
    const project = stream.slice(5);
    // `work:private:<uid>` is one person's, `work:spaces` the registry: neither is a project's.
    if (!project || project === 'spaces' || project.startsWith('private:')) return null;
    return { project, family: 'work' };
  }
  return null;
}

const str = (v: unknown, n: number = DOC_LIMITS.id): string => (typeof v === 'string' ? v.trim().slice(0, n) : '');

function idOf(v: unknown): string {
  if (typeof v === 'string') return str(v);
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    return str(o.id) || str(o.name);
  }
  return '';
}

/** Every string value of `v` (not its keys), depth-first in key order, bounded. */
function strings(v: unknown, out: string[], depth: number, budget: { n: number }): void {
  if (budget.n <= 0) return;
  if (typeof v === 'string') {
    const s = v.trim();
    if (s) {
      out.push(s.length > DOC_LIMITS.field ? s.slice(0, DOC_LIMITS.field) : s);
      budget.n -= s.length + 1;
    }
    return;
  }
  if (depth <= 0 || !v || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    for (const x of v.slice(0, DOC_LIMITS.strings)) strings(x, out, depth - 1, budget);
    return;
  }
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (!SKIP_KEYS.has(k)) strings(x, out, depth - 1, budget);
}

/** The words of `text`: letters and digits, lower case, no diacritics, each cut at WORD_MAX. */
export function wordsOf(text: string): string[] {
  const out: string[] = [];
  const norm = text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
  for (const m of norm.matchAll(/[\p{L}\p{N}]+/gu)) out.push(m[0].length > WORD_MAX ? m[0].slice(0, WORD_MAX) : m[0]);
  return out;
}

/**
 * The search document of a stored event, or null when it is not searched
 * (a stream no project owns, a bookkeeping event, a body that is not JSON).
 * `body` is the stored JSON text, or the event already parsed.
 */
export function searchDocOf(stream: string, type: string, body: unknown): SearchDoc | null {
  const where = searchStreamOf(stream);
  if (!where) return null;
  if (type === 'sweep' || type === 'reset' || type === 'snapshot') return null;
  let e: unknown = body;
  if (typeof body === 'string') {
    try {
      e = JSON.parse(body);
    } catch {
      return null;
    }
  }
  if (!e || typeof e !== 'object' || Array.isArray(e)) return null;
  const o = e as Record<string, unknown>;
  // A fleet session's status is the board's live line, one per frame: not what a person searches for.
  if (where.family === 'fleet' && o.type === 'session.status') return null;
  // A fleet event is about its session (its id), whoever posted it.
  const agent = where.family === 'fleet' ? str(o.id) : idOf(o.agent) || str(o.asker) || idOf(o.crow) || idOf(o.author) || idOf(o.from) || idOf(o.by);
  const team = typeof o.team === 'string' ? str(o.team, 80) : o.team && typeof o.team === 'object' ? str((o.team as Record<string, unknown>).name, 80) : '';
  const parts: string[] = [];
  strings(o, parts, DOC_LIMITS.depth, { n: DOC_LIMITS.text });
  let text = parts.join(' · ');
  if (text.length > DOC_LIMITS.text) text = text.slice(0, DOC_LIMITS.text);
  const words = wordsOf(text).join(' ');
  if (!words) return null;
  const kind = str(o.type ?? type, 80) || type.slice(0, 80);
  const field = (v: unknown): string => str(v, 80);
  const vendor = field(o.source) || (o.agent && typeof o.agent === 'object' && !Array.isArray(o.agent) ? field((o.agent as Record<string, unknown>).source) : '');
  const status = field(o.status) || field(o.state) || field(o.decision);
  const decides = kind === 'approval.decided' || (kind === 'session.approval' && (o.state === 'allowed' || o.state === 'denied'));
  const decider = decides ? idOf(o.by) || field(o.name) : '';
  return { project: where.project, family: where.family, kind, agent, team, vendor, tool: field(o.tool), status, decider, text, words };
}

/** One term of a query: its words, in order (one word, or a phrase). */
export type SearchTerm = string[];

/**
 * A caller's query as terms: quoted phrases ("...") and single words, each
 * reduced to words as documents are (so operators, quotes, `*`, `NEAR`,
 * `col:` filters are just text), at most QUERY_LIMITS of them. Empty when the
 * query holds no word: a search for nothing matches nothing.
 */
export function parseQuery(q: string): SearchTerm[] {
  const text = q.length > QUERY_LIMITS.chars ? q.slice(0, QUERY_LIMITS.chars) : q;
  const terms: SearchTerm[] = [];
  const seen = new Set<string>();
  const add = (words: string[]): void => {
    if (words.length === 0 || terms.length >= QUERY_LIMITS.terms) return;
    const t = words.slice(0, QUERY_LIMITS.phraseWords);
    const key = t.join(' ');
    if (seen.has(key)) return;
    seen.add(key);
    terms.push(t);
  };
  // Quoted phrases first take their text out; an unclosed quote runs to the end.
  const re = /"([^"]*)"?|([^"]+)/g;
  for (const m of text.matchAll(re)) {
    if (m[1] !== undefined) add(wordsOf(m[1]));
    else for (const w of wordsOf(m[2] ?? '')) add([w]);
  }
  return terms;
}

/** Marks the matched words of `text`: «word». At most `width` characters around the first match. */
export function snippetOf(text: string, terms: SearchTerm[], width = 200): string {
  const want = new Set(terms.flat());
  const spans: [number, number][] = [];
  for (const m of text.matchAll(/[\p{L}\p{N}\p{M}]+/gu)) {
    const w = wordsOf(m[0])[0];
    if (w !== undefined && want.has(w)) spans.push([m.index, m.index + m[0].length]);
  }
  const start = spans.length ? Math.max(0, spans[0][0] - Math.floor(width / 3)) : 0;
  const end = Math.min(text.length, start + width);
  let out = start > 0 ? '…' : '';
  let at = start;
  for (const [a, b] of spans) {
    if (a < at || b > end) continue;
    out += text.slice(at, a) + '«' + text.slice(a, b) + '»';
    at = b;
  }
  out += text.slice(at, end);
  if (end < text.length) out += '…';
  return out;
}

// Issue 32's "same queries, same results, ranked alike", checked across the
// two stores at once: the same log appended to a SQLite store and to a
// PostgreSQL store, then the same queries asked of both. Every hit must be the
// same event, in the same place of the same page, with the same kind, agent,
// team and marked snippet (only `at`, each store's own clock, may differ).
// The contract suite (storage.search-contract.ts) checks each store against
// the rule; this checks the two answers against each other on a log large
// enough that the rule's every part (time, stream, position, pages) decides
// some order.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.js';
import { PostgresStore } from '../src/storage/postgres.js';
import type { EventStore, SearchHit, SearchQuery } from '../src/storage/types.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable } from './support/pg.js';
import { tempDir } from './support/server.js';

const reachable = await pgReachable();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A small deterministic generator: the same log on every run. */
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

const WORDS = ['refund', 'ledger', 'payments', 'deploy', 'heron', 'invoice', 'cache', 'retry', 'timeout', 'schema', 'Migration', 'RÉSUMÉ'];
const TEAMS = ['pay', 'web', 'ops'];
const AGENTS = ['a1', 'a2', 'b1', 'c1'];

/** Batches of events for the four families and a fleet thread, each batch one append to one stream. */
function log(project: string): { stream: string; events: Record<string, unknown>[] }[] {
  const r = rng(32);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  const phrase = () => Array.from({ length: 3 + Math.floor(r() * 6) }, () => pick(WORDS)).join(r() < 0.3 ? '/' : ' ');
  const out: { stream: string; events: Record<string, unknown>[] }[] = [];
  for (let b = 0; b < 40; b++) {
    const family = pick(['floor', 'floor', 'approvals', 'flock', 'work', 'fleet']);
    const n = 1 + Math.floor(r() * 5);
    const events: Record<string, unknown>[] = [];
    for (let i = 0; i < n; i++) {
      const agent = pick(AGENTS);
      const team = pick(TEAMS);
      if (family === 'floor') events.push({ type: pick(['tool', 'message', 'status']), agent, team, source: pick(['claude-code', 'codex']), tool: pick(['Bash', 'Edit']), status: pick(['working', 'blocked', 'done']), activity: phrase() });
      else if (family === 'approvals') events.push(r() < 0.5 ? { type: 'approval.requested', id: `q${b}-${i}`, asker: agent, team, tool: 'Bash', input: phrase() } : { type: 'approval.decided', id: `q${b}-${i}`, decision: pick(['allow', 'deny']), by: pick(['Maya', 'Omar']), reason: phrase() });
      else if (family === 'flock') events.push({ type: 'nest.message', nest_id: 'n1', author: agent, text: phrase() });
      else if (family === 'work') {
        const k = `k-${b}-${i}`;
        const chat = { agent: `sp:${agent}`, conversation: `agent:sp:${agent}` };
        events.push(pick([{ type: 'message.posted', conversation: 'c-1', text: phrase(), by: { uid: 'u1', name: 'Uma' } }, { type: 'command.queued', id: k, ...chat, text: phrase(), by: { uid: 'u1', name: 'Uma' } }, { type: 'execution.finished', command: k, ...chat, status: pick(['done', 'failed']), result: phrase(), by: { uid: 'u1', name: 'Uma' } }]));
      } else events.push({ type: pick(['session.turn', 'session.prompt', 'session.result']), id: `s-${agent}`, text: phrase(), name: 'Paul', ts: 1 });
    }
    const stream = family === 'fleet' ? `sessions:${project}:t${b % 3}` : `${family}:${project}`;
    out.push({ stream, events });
  }
  return out;
}

const QUERIES: Omit<SearchQuery, 'project'>[] = [
  { q: 'refund' },
  { q: 'refund ledger' },
  { q: 'REFUND Ledger', team: 'pay' },
  { q: '"refund ledger"' },
  { q: '"deploy heron"' },
  { q: 'resume' },
  { q: 'migration', agent: 'a1' },
  { q: 'cache', kind: 'tool' },
  { q: 'retry', vendor: 'codex', tool: 'Bash' },
  { q: 'timeout', status: 'blocked' },
  { q: 'schema', status: 'failed' },
  { q: 'ledger', decider: 'Maya' },
  { q: 'heron', kind: 'execution.finished' },
  { q: 'deploy', agent: 's-b1' },
  { q: 'ledger', limit: 7 },
  { q: 'refund OR nothing' },
  { q: 'payments', limit: 1 },
];

/** Every hit of a query page by page, `at` left out (each store's own clock), each with the page it came on. */
async function answers(s: EventStore, q: SearchQuery): Promise<(Omit<SearchHit, 'at'> & { page: number })[]> {
  const out: (Omit<SearchHit, 'at'> & { page: number })[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 500; page++) {
    const a = await s.search({ ...q, cursor });
    for (const { at: _at, ...h } of a.hits) out.push({ ...h, page });
    if (!a.next) return out;
    cursor = a.next;
  }
  throw new Error('paging did not end');
}

if (!reachable) {
  test('search alike on SQLite and PostgreSQL', (t) => {
    need(t, false, `PostgreSQL is not reachable at ${PG_URL} (start it, or run .ci/run)`);
  });
} else {
  const db = freshSchema();
  const dir = tempDir('roost-search-alike-');
  let sqlite: EventStore | null = null;
  let postgres: EventStore | null = null;
  after(async () => {
    await sqlite?.close();
    await postgres?.close();
    await db.drop();
  });

  test('SQLite and PostgreSQL answer the same queries with the same hits, in the same order, on the same pages', async () => {
    const lite: EventStore = (sqlite = new SqliteStore({ path: join(dir, 'roost.db') }));
    const pgs: EventStore = (postgres = await PostgresStore.open(db.url));
    const project = 'alike';
    // Batch by batch to both, a few milliseconds apart: the append times order alike on both.
    for (const { stream, events } of log(project)) {
      const batch = events.map((e) => ({ type: String(e.type), body: JSON.stringify(e) }));
      await lite.append(stream, batch);
      await pgs.append(stream, batch);
      await sleep(3);
    }
    let found = 0;
    for (const q of QUERIES) {
      const query = { project, ...q };
      const a = await answers(lite, query);
      const b = await answers(pgs, query);
      assert.deepEqual(b, a, `the same answer to ${JSON.stringify(q)}`);
      found += a.length;
    }
    assert.ok(found > 100, `the queries found something to compare (${found} hits)`);
    const several = await answers(lite, { project, q: 'ledger', limit: 7 });
    assert.ok(several.at(-1)!.page >= 2, 'some answers span several pages');
    // And after each store rebuilt its index from its own log, still alike.
    await lite.rebuildSearch();
    await pgs.rebuildSearch();
    for (const q of QUERIES.slice(0, 5)) assert.deepEqual(await answers(pgs, { project, ...q }), await answers(lite, { project, ...q }));
  });
}

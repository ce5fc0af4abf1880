// Search over a large log (docs/search.md): appends `n` floor events with
// text like the floor's and Claude Code's payloads (8 teams, 200 agents,
// tools, commands, file paths, messages) to one project's floor, lets the
// index catch up, then times a two-word query with a team filter, newest
// first, first page (20 hits). Prints one JSON line.
//
//   node dist/bench/search.js <n> [postgres://…[?schema=…]]
//
// On PostgreSQL without a `schema`, it runs in a fresh schema of its own,
// dropped at the end (what `npm run bench -- --only search --db <url>` does).

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { indexPathOf } from '../src/storage/sqlite-search.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/sqlite.js';
import type { EventStore } from '../src/storage/types.js';

const n = Number(process.argv[2] ?? 200_000);
const given = process.argv[3];
/** A schema made for this run (and dropped after it), when the URL names none. */
const fresh = given && !new URL(given).searchParams.has('schema') ? `bench_search_${process.pid}_${Date.now() % 1e9}` : null;
const url = given && fresh ? `${given}${given.includes('?') ? '&' : '?'}schema=${fresh}` : given;

const TEAMS = ['pay', 'web', 'infra', 'data', 'search', 'mobile', 'auth', 'docs'];
const TOOLS = ['Bash', 'Edit', 'Read', 'Write', 'Grep', 'Glob', 'WebFetch', 'Task'];
const DIRS = ['src/payments', 'src/web', 'src/infra', 'lib/data', 'src/search', 'app/mobile', 'src/auth', 'docs'];
const FILES = ['refund.ts', 'index.ts', 'router.go', 'schema.sql', 'query.py', 'login.tsx', 'token.rs', 'README.md', 'deploy.yaml', 'cache.ts'];
const CMDS = ['npm test', 'git status', 'go build ./...', 'pytest -q', 'cargo check', 'make lint', 'kubectl get pods', 'psql -c "select 1"'];
const WORDS = 'the a fix bug refund invoice retry timeout cache flaky deploy migration schema login token rate limit queue worker index shard latency memory leak review merge branch rollback release hotfix'.split(' ');

let seed = 42;
const rnd = (k: number): number => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % k;
};
const pick = <T>(a: T[]): T => a[rnd(a.length)];
const sentence = (k: number): string => Array.from({ length: k }, () => pick(WORDS)).join(' ');

function event(i: number): { type: string; body: string } {
  const t = rnd(TEAMS.length);
  const agent = `agent-${t}-${rnd(25)}`;
  const team = TEAMS[t];
  const r = rnd(10);
  let e: Record<string, unknown>;
  if (r < 6) {
    const tool = pick(TOOLS);
    const activity = tool === 'Bash' ? pick(CMDS) : `${tool === 'Edit' ? 'Editing' : 'Reading'} ${DIRS[t]}/${pick(FILES)}`;
    e = { type: 'tool', agent, team, tool, status: 'working', activity, ts: i };
  } else if (r < 8) e = { type: 'message', agent, team, to: [`agent-${t}-${rnd(25)}`], text: sentence(8 + rnd(20)) };
  else if (r < 9) e = { type: 'status', agent, team, status: pick(['working', 'idle', 'blocked']), activity: sentence(5) };
  else e = { type: 'task', agent, team, task: sentence(6) };
  return { type: e.type as string, body: JSON.stringify(e) };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'roost-search-bench-'));
  let store: EventStore;
  if (url) {
    const { PostgresStore } = await import('../src/storage/postgres.js');
    store = await PostgresStore.open(url);
  } else store = new SqliteStore({ path: join(dir, 'roost.db') });
  try {
    const t0 = performance.now();
    const BATCH = 500;
    for (let i = 0; i < n; i += BATCH) {
      const evs = [];
      for (let k = i; k < Math.min(n, i + BATCH); k++) evs.push(event(k));
      await store.append('floor', evs);
    }
    const appendMs = performance.now() - t0;
    // The first search indexes whatever is left.
    await store.search({ project: 'default', q: 'refund' });
    const indexedMs = performance.now() - t0;
    const times: number[] = [];
    let hits = 0;
    for (let i = 0; i < 300; i++) {
      const q = `${pick(WORDS.slice(2))} ${pick(WORDS.slice(2))}`;
      const s = performance.now();
      const page = await store.search({ project: 'default', q, team: pick(TEAMS) });
      times.push(performance.now() - s);
      hits += page.hits.length;
    }
    times.sort((a, b) => a - b);
    const q = (p: number): number => times[Math.min(times.length - 1, Math.floor(p * times.length))];
    let bytes = 0;
    if (url) {
      // The table and its indexes (text, tsvector, GIN, B-trees), what the index costs on disk.
      const { default: pg } = await import('pg');
      const schema = new URL(url).searchParams.get('schema') ?? 'public';
      const c = new pg.Client({ connectionString: url.replace(/\?.*$/, '') });
      await c.connect();
      try {
        const r = await c.query<{ b: string }>('SELECT pg_total_relation_size($1::regclass) AS b', [`"${schema}".search_docs`]);
        bytes = Number(r.rows[0].b);
      } finally {
        await c.end();
      }
    } else {
      // The index's own file (closed: its WAL is in it).
      await store.close();
      bytes = statSync(indexPathOf(join(dir, 'roost.db'))).size;
    }
    console.log(JSON.stringify({ n, appendMs, indexedMs, p50: q(0.5), p99: q(0.99), meanHits: hits / times.length, indexBytes: bytes }));
  } finally {
    await store.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    if (given && fresh) {
      const { default: pg } = await import('pg');
      const c = new pg.Client({ connectionString: given });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${fresh} CASCADE`).finally(() => c.end());
    }
  }
}

await main();

// What keeping the search index current costs single-event ingest
// (docs/search.md): durable single-event POST /events on SQLite, 64
// connections, as a share of bare node:http, with the index written after
// each commit (the default) and without (ROOST_SEARCH_INDEX=search: only a
// search indexes). The three servers are up together and loaded in turns,
// B I B N B I B N B …, each Roost window against the baseline windows either
// side (the machine drifts within a minute). Prints one JSON line.
//
//   node dist/bench/ingest-index.js [windows per kind] [seconds]

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitHealthy } from '../test/support/up.js';

const WINDOWS = Number(process.argv[2] ?? 4);
const SECONDS = Number(process.argv[3] ?? 5);
const BENCH = dirname(fileURLToPath(import.meta.url));
const ROOT = join(BENCH, '..', '..');
const SINGLE = JSON.stringify({ type: 'status', agent: 'bench-1', team: 'bench', status: 'working', activity: 'Reconciling invoices' });

async function up(argv: string[], env: Record<string, string>, path: string): Promise<{ url: string; proc: ChildProcess; port: number }> {
  const port = await freePort();
  const proc = spawn(process.execPath, argv.map((a) => (a === '$PORT' ? String(port) : a)), { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...env } });
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url, proc, { path, timeoutMs: 120_000, everyMs: 20 });
  return { url, proc, port };
}

function load(url: string): Promise<{ rps: number; p50: number; p99: number; errors: number; non2xx: number }> {
  return new Promise((ok, fail) => {
    const cfg = { mode: 'http', url: url + '/events', body: SINGLE, connections: 64, seconds: SECONDS, warmupSeconds: 1 };
    const p = spawn(process.execPath, [join(BENCH, 'load.js'), JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('exit', (code) => (code === 0 ? ok(JSON.parse(out.trim().split('\n').pop()!)) : fail(new Error(`load failed (${code})`))));
  });
}

async function main(): Promise<void> {
  const dirs = [mkdtempSync(join(tmpdir(), 'roost-ix-')), mkdtempSync(join(tmpdir(), 'roost-ix-'))];
  const base = await up([join(BENCH, 'baseline-server.js'), '$PORT'], {}, '/');
  const indexed = await up([join(ROOT, 'bin', 'roost.js'), 'serve', '--port', '$PORT', '--data', dirs[0]], {}, '/health');
  const plain = await up([join(ROOT, 'bin', 'roost.js'), 'serve', '--port', '$PORT', '--data', dirs[1]], { ROOST_SEARCH_INDEX: 'search' }, '/health');
  try {
    const b = [await load(base.url)];
    const ix: number[] = [];
    const no: number[] = [];
    const share = { indexed: [] as number[], plain: [] as number[] };
    for (let w = 0; w < WINDOWS; w++) {
      for (const [kind, srv] of [['indexed', indexed], ['plain', plain]] as const) {
        const r = await load(srv.url);
        const before = b[b.length - 1];
        const after = await load(base.url);
        b.push(after);
        (kind === 'indexed' ? ix : no).push(r.rps);
        share[kind].push((200 * r.rps) / (before.rps + after.rps));
      }
    }
    const mean = (v: number[]) => v.reduce((a, x) => a + x, 0) / v.length;
    // The indexed server's index is complete: a search finds the last event posted.
    const found = (await (await fetch(`${indexed.url}/api/search?q=reconciling+invoices&limit=1`)).json()) as { hits: unknown[] };
    console.log(
      JSON.stringify({
        baseRps: mean(b.map((r) => r.rps)),
        indexedRps: mean(ix),
        plainRps: mean(no),
        indexedShare: mean(share.indexed),
        plainShare: mean(share.plain),
        indexedOverPlain: mean(share.indexed) / mean(share.plain),
        indexedSearchHits: found.hits.length,
      }),
    );
  } finally {
    for (const p of [base, indexed, plain]) p.proc.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

await main();

// A nest stream's history under a crowd (issue 37, point 6), in its own processes:
//
//   node dist/bench/nests.js <seconds> [readers=100] [records=5000]
//     An in-process Roost on a fresh SQLite file, one nest holding `records`
//     messages (about 600 bytes each: 3 MB of history). A second process
//     holds `readers` streams of that nest (`GET /api/events?nest_id=`, no
//     cursor, so each gets the whole history), and each reopens as soon as it
//     has read it: for `seconds`, the server is replaying to all of them at
//     once. A third process asks `GET /health` every 20 ms meanwhile. Prints
//     /health's p50 / p99 / max, the histories read, and the server's builds
//     of the history.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteStore } from '../src/storage/index.js';
import { startRoost } from '../src/server/index.js';
import { flockTs } from '../src/core/flock.js';

const [mode, ...rest] = process.argv.slice(2);
const NEST = 'crowded';
const MARK = Buffer.from('\nevent: nest.message\n');

/** Runs this script in another mode in its own process; resolves with its last JSON line. */
function side<T>(argv: string[]): { done: Promise<T> } {
  const p = spawn(process.execPath, [fileURLToPath(import.meta.url), ...argv], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  p.stdout.on('data', (d) => (out += d));
  return {
    done: new Promise((ok, fail) =>
      p.on('exit', (code) => {
        if (code !== 0) return fail(new Error(`nests.js ${argv[0]} failed (${code})`));
        ok(JSON.parse(out.trim().split('\n').pop()!) as T);
      }),
    ),
  };
}

async function main(): Promise<void> {
  const seconds = Number(mode);
  const readers = Number(rest[0] ?? 100);
  const records = Number(rest[1] ?? 5000);
  const dir = mkdtempSync(join(tmpdir(), 'roost-bench-nests-'));
  const roost = await startRoost(new SqliteStore({ path: join(dir, 'roost.db') }), { port: 0 });
  try {
    await roost.flock.append([{ type: 'nest.created', nest_id: NEST, name: 'Crowded', crows: ['Pepper', 'Inky'], by: 'bench', ts: flockTs(Date.now()) }]);
    const text = 'a line of a long conversation in a busy nest, '.repeat(10);
    for (let i = 0; i < records; i += 500) {
      const ts = flockTs(Date.now());
      const n = Math.min(500, records - i);
      await roost.flock.append(Array.from({ length: n }, (_, k) => ({ type: 'nest.message', nest_id: NEST, msg_id: `${NEST}-${i + k + 1}`, kind: 'say', author: 'owner', text: `${i + k + 1}: ${text}`, to: '', refers_to: '', tagged_by: 'header', ts })));
    }
    const builds0 = roost.flock.stats.nestHistoryBuilds;
    // The longest gap between two ticks of a 5 ms timer: how long the server's event loop was held.
    let last = performance.now();
    let loopMaxMs = 0;
    const probe = setInterval(() => {
      const now = performance.now();
      loopMaxMs = Math.max(loopMaxMs, now - last);
      last = now;
    }, 5);
    const cpu0 = process.cpuUsage();
    const reading = side<{ histories: number; bytes: number; incomplete: number }>(['readers', roost.url, String(readers), String(records), String(seconds)]);
    const probing = side<{ p50: number; p99: number; max: number; n: number; failed: number }>(['probe', roost.url, String(seconds)]);
    const [r, h] = await Promise.all([reading.done, probing.done]);
    const cpu = process.cpuUsage(cpu0);
    clearInterval(probe);
    const result = { ...h, loopMaxMs, histories: r.histories, mbRead: r.bytes / 1e6, incomplete: r.incomplete, builds: roost.flock.stats.nestHistoryBuilds - builds0, serverCpuS: (cpu.user + cpu.system) / 1e6 };
    process.stdout.write(JSON.stringify(result) + '\n');
  } finally {
    await roost.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `readers` streams of the nest, each reopened once it has the whole history, until `seconds` pass. */
async function readersMode(): Promise<void> {
  const [url, n, records, seconds] = rest;
  const want = Number(records);
  const end = Date.now() + Number(seconds) * 1000;
  let histories = 0;
  let bytes = 0;
  let incomplete = 0;
  const one = async (): Promise<void> => {
    while (Date.now() < end) {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), Math.max(1, end - Date.now()));
      let got = 0;
      try {
        const res = await fetch(`${url}/api/events?nest_id=${NEST}`, { signal: ac.signal });
        // Counted on the bytes (one `event:` line a record), so the readers' process stays light.
        let tail = Buffer.alloc(0);
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          bytes += chunk.length;
          const buf = tail.length ? Buffer.concat([tail, chunk]) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
          let at = 0;
          for (;;) {
            const i = buf.indexOf(MARK, at);
            if (i < 0) break;
            got++;
            at = i + MARK.length;
          }
          tail = Buffer.from(buf.subarray(Math.max(at, buf.length - MARK.length + 1)));
          if (got >= want) break;
        }
        ac.abort();
        if (got >= want) histories++;
        else incomplete++;
      } catch {
        if (got < want) incomplete++;
      } finally {
        clearTimeout(timer);
      }
    }
  };
  await Promise.all(Array.from({ length: Number(n) }, one));
  process.stdout.write(JSON.stringify({ histories, bytes, incomplete }) + '\n');
}

/** GET /health every 20 ms for `seconds`; its latencies. */
async function probeMode(): Promise<void> {
  const [url, seconds] = rest;
  // The readers start first: give them a moment to open their streams.
  await new Promise((r) => setTimeout(r, 300));
  const end = Date.now() + Number(seconds) * 1000 - 300;
  const times: number[] = [];
  let failed = 0;
  while (Date.now() < end) {
    const t0 = performance.now();
    try {
      const r = await fetch(url + '/health', { signal: AbortSignal.timeout(5000) });
      await r.text();
      if (r.status !== 200) failed++;
    } catch {
      failed++;
    }
    times.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 20));
  }
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
  process.stdout.write(JSON.stringify({ p50: q(0.5), p99: q(0.99), max: times[times.length - 1], n: times.length, failed }) + '\n');
}

if (mode === 'readers') await readersMode();
else if (mode === 'probe') await probeMode();
else await main();

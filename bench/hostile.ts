// Bounded cost per request (issue 12, part 7), measured in its own process:
//
//   node dist/bench/hostile.js batch <dir>
//     An in-process Roost on a fresh SQLite file. One 125 KB POST /events of
//     200 `message` events, each to 50 recipients nobody has seen: on an
//     unbounded floor that is 10,000 new agents from one request. Prints the
//     answer's status, the longest event-loop stall while the request is
//     answered and folded, and how many agents the floor holds afterwards.
//
//   node dist/bench/hostile.js prefill <dir> [agents]
//     Writes a floor log that holds `agents` agents (default 10,000) straight
//     into the store, past the HTTP edge (stored events are hostile too): the
//     same hostile batch shape, 50 new recipients per message, all in one team
//     (the worst case for desk assignment), then a few ordinary events.
//     `npm run bench` then starts `roost serve` on it and times the restart.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteStore } from '../src/storage/index.js';
import { startRoost } from '../src/server/index.js';
import { FLOOR_STREAM } from '../src/server/floor.js';

const [mode, dir, arg] = process.argv.slice(2);

/** 200 messages, each to 50 recipients that are not on the floor (about 125 KB of JSON). */
export function hostileBatch(round = 0): Record<string, unknown>[] {
  return Array.from({ length: 200 }, (_, i) => ({
    type: 'message',
    agent: `sender-${round}-${i}`,
    team: 'swarm',
    to: Array.from({ length: 50 }, (_, j) => `r${round}-${i}-${j}`),
    text: 'hi',
  }));
}

async function batch(): Promise<void> {
  const store = new SqliteStore({ path: join(dir, 'roost.db') });
  const roost = await startRoost(store, { port: 0 });
  // Warm the path (JIT, SQLite statements) with one ordinary event first.
  await fetch(roost.url + '/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'join', agent: 'warm' }) });
  // The client is another process, so what is measured here is the server's
  // own work: parsing, checking, storing, folding, answering.
  const client = spawn(process.execPath, [fileURLToPath(import.meta.url), 'post', roost.url], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  client.stdout.on('data', (d) => (out += d));
  await new Promise((r) => client.stdout.once('data', r)); // "ready": its body is built
  out = '';
  // The longest gap between two ticks of a 1 ms timer: how long the event loop
  // was held (no other request, stream or timer of the server ran meanwhile).
  let last = performance.now();
  let maxGap = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  }, 1);
  await new Promise((r) => setTimeout(r, 50));
  maxGap = 0;
  // CPU time is the steadier figure on a busy machine: a gap also grows while
  // the process merely waits for a core.
  const cpu0 = process.cpuUsage();
  client.stdin.end('go\n');
  await new Promise((r) => client.once('exit', r));
  // Whatever was stored is folded within a turn or two of the commit; give the
  // loop a moment so a fold that blocks it shows too.
  await new Promise((res) => setTimeout(res, 100));
  clearInterval(probe);
  const cpu = process.cpuUsage(cpu0);
  const answer = JSON.parse(out) as { status: number; bytes: number; ms: number };
  const result = { bytes: answer.bytes, status: answer.status, answeredMs: answer.ms, loopMaxMs: maxGap, cpuMs: (cpu.user + cpu.system) / 1000, agents: roost.floor.state.agents.size };
  await roost.close();
  process.stdout.write(JSON.stringify(result) + '\n');
}

/** The client side of `batch`: builds the body, says ready, posts it when told, prints the answer. */
async function post(): Promise<void> {
  const body = JSON.stringify(hostileBatch());
  process.stdout.write('ready\n');
  await new Promise((r) => process.stdin.once('data', r));
  const t0 = performance.now();
  const r = await fetch(dir + '/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  await r.text();
  process.stdout.write(JSON.stringify({ status: r.status, bytes: Buffer.byteLength(body), ms: performance.now() - t0 }) + '\n');
}

async function prefill(): Promise<void> {
  const agents = Number(arg ?? 10_000);
  const store = new SqliteStore({ path: join(dir, 'roost.db') });
  const t0 = Date.now();
  let made = 0;
  for (let round = 0; made < agents; round++) {
    const events = hostileBatch(round);
    const kept: Record<string, unknown>[] = [];
    for (const e of events) {
      if (made >= agents) break;
      const to = (e.to as string[]).slice(0, Math.max(0, agents - made - 1));
      made += 1 + to.length;
      kept.push({ ...e, to, ts: t0 + made });
    }
    await store.append(FLOOR_STREAM, kept.map((e) => ({ type: 'message', body: JSON.stringify(e) })));
  }
  // Ordinary traffic after it, so a restart has a tail to fold and a ring to refill.
  const tail = Array.from({ length: 2000 }, (_, i) => ({ type: 'status', agent: `sender-0-${i % 200}`, status: 'working', activity: `step ${i}`, ts: t0 + agents + i }));
  for (let i = 0; i < tail.length; i += 200) await store.append(FLOOR_STREAM, tail.slice(i, i + 200).map((e) => ({ type: e.type, body: JSON.stringify(e) })));
  await store.close();
  process.stdout.write(JSON.stringify({ agents, ms: Date.now() - t0 }) + '\n');
}

const modes: Record<string, () => Promise<void>> = { batch, prefill, post };
const run = modes[mode];
if (!run || !dir) {
  process.stderr.write('usage: hostile.js batch|prefill <dir> [agents]\n');
  process.exit(2);
}
await run();

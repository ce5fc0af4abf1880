// Outbound webhooks (issue 31, docs/webhooks.md): 1,000 deliveries to a local
// receiver (four targets, 250 events each), every one delivered once and in
// order per target; then the receiver down for 30 s while 1,000 more are
// enqueued, and back: every delivery arrives (retried with the backoff), none
// twice, still in order. The receiver checks every signature
// (test/support/webhook-receiver.ts). The backoff's base is a setting
// (`webhookBackoffMs`, ROOST_WEBHOOK_BACKOFF_MS): 100 ms here, so the retries
// after a 30 s outage come within a minute rather than hours.
//
//   node dist/bench/webhooks.js [outage seconds]    # prints one JSON line

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.js';
import { startRoost } from '../src/server/index.js';
import { Receiver } from '../test/support/webhook-receiver.js';

const OUTAGE_S = Number(process.argv[2] ?? 30);
const TARGETS = 4;
const EVENTS = 250;
const SECRET = 'bench-secret-of-enough-length';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(f: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await sleep(5);
  }
}

/** Per target path: the events' sequence numbers in arrival order. */
function check(rx: Receiver, from: number, count: number): { once: boolean; ordered: boolean; twice: number } {
  const twice = rx.twice().length;
  let ordered = true;
  for (let t = 0; t < TARGETS; t++) {
    const seqs = rx.got.filter((g) => g.path === `/hook/${t}` && g.json.data.seq >= from && g.json.data.seq < from + count).map((g) => g.json.data.seq as number);
    if (seqs.length !== count || seqs.some((s, i) => s !== from + i)) ordered = false;
  }
  return { once: twice === 0, ordered, twice };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'roost-bench-webhooks-'));
  const rx = await new Receiver(SECRET).start();
  const port = rx.port;
  const roost = await startRoost(new SqliteStore({ path: join(dir, 'roost.db') }), { port: 0, webhookBackoffMs: 100 });
  try {
    for (let t = 0; t < TARGETS; t++) {
      const r = await fetch(roost.url + '/webhooks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: `http://127.0.0.1:${port}/hook/${t}`, kinds: ['work.finished'], secret: SECRET, allow_private: true }) });
      if (r.status !== 201) throw new Error(`target: ${r.status} ${await r.text()}`);
    }
    const enqueue = async (from: number) => {
      for (let i = from; i < from + EVENTS; i++) await roost.webhooks.enqueue('default', 'work.finished', `bench:${i}`, Date.now(), { seq: i }, `command ${i} finished`);
    };
    // 1. 1,000 deliveries, the receiver up.
    const t0 = performance.now();
    await enqueue(0);
    const enqueuedMs = performance.now() - t0;
    await until(() => rx.got.length >= TARGETS * EVENTS, 300_000, 'the first 1,000');
    const firstMs = performance.now() - t0;
    const first = check(rx, 0, EVENTS);
    // 2. The receiver down for the outage; 1,000 more enqueued meanwhile.
    await rx.stop();
    const down = performance.now();
    await enqueue(EVENTS);
    await sleep(Math.max(0, OUTAGE_S * 1000 - (performance.now() - down)));
    const failedAttempts = [...roost.webhooks.state.deliveries.values()].reduce((n, d) => n + (d.status === 'pending' ? d.attempts : 0), 0);
    await rx.start(port);
    const back = performance.now();
    await until(() => rx.got.length >= 2 * TARGETS * EVENTS, 600_000, 'the second 1,000');
    const recoverMs = performance.now() - back;
    await sleep(1000); // room for a duplicate to show
    const second = check(rx, EVENTS, EVENTS);
    console.log(
      JSON.stringify({
        deliveries: TARGETS * EVENTS,
        enqueuedMs,
        firstMs,
        perSecond: (TARGETS * EVENTS) / (firstMs / 1000),
        firstOnce: first.once && rx.got.length >= TARGETS * EVENTS,
        firstOrdered: first.ordered,
        outageS: OUTAGE_S,
        failedAttempts,
        recoverMs,
        secondOnce: second.once,
        secondOrdered: second.ordered,
        received: rx.got.length,
        twice: second.twice,
        badSignatures: rx.refusedSignatures.length,
      }),
    );
  } finally {
    await roost.close();
    await rx.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);

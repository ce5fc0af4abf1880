// An acknowledged event survives a crash: a `roost serve` child takes a few
// thousand concurrent single-event POSTs, is SIGKILLed in the middle, restarts
// on the same data dir, and every event that got HTTP 200 is in the log, at the
// position its answer named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { child, tempDir } from './support/server.js';
import { openSse } from './support/sse.js';

const TOTAL = 2000;
const IN_FLIGHT = 48;
const KILL_AFTER = 1000; // acknowledgements before the SIGKILL

test('every acknowledged event survives a SIGKILL mid-load', { timeout: 60_000 }, async (t) => {
  const dataDir = tempDir();
  let srv = await child({ dataDir });
  const acked = new Map<number, number>(); // event number → position in the answer
  let failed = 0;
  let next = 0;
  let killed = false;
  let killedAt = 0;

  async function worker(): Promise<void> {
    while (next < TOTAL && !(killed && Date.now() - killedAt > 200)) {
      const i = next++;
      try {
        const r = await fetch(srv.url + '/events', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'status', agent: `crash-${i}`, team: `T${i % 10}`, status: 'working', activity: `ack-${i}` }),
        });
        const body = (await r.json()) as { first: number };
        if (r.status === 200) acked.set(i, body.first);
        else failed++;
      } catch {
        failed++; // the server died under this request: not acknowledged
      }
      if (!killed && acked.size >= KILL_AFTER) {
        killed = true;
        killedAt = Date.now();
        srv.proc.kill('SIGKILL');
      }
    }
  }
  const t0 = Date.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  t.diagnostic(`${acked.size} acknowledged in ${Date.now() - t0} ms, ${failed} failed by the kill`);
  assert.ok(killed, 'the server was killed during the load');
  await srv.stop(); // already dead: waits for the exit
  assert.equal(srv.proc.signalCode, 'SIGKILL');
  assert.ok(acked.size >= KILL_AFTER && acked.size < TOTAL, `killed mid-load (acked ${acked.size}, failed ${failed})`);

  srv = await child({ dataDir, port: srv.port });
  try {
    const st = (await (await fetch(srv.url + '/state')).json()) as { epoch: string; position: number; agents: { id: string; activity: string }[] };
    const onFloor = new Map(st.agents.map((a) => [a.id, a.activity]));
    const lost = [...acked.keys()].filter((i) => onFloor.get(`crash-${i}`) !== `ack-${i}`);
    assert.deepEqual(lost, [], 'no acknowledged event is missing from /state');
    assert.ok(st.position >= acked.size);

    // The whole log, replayed from the start: gap-free, each acknowledged event at its position.
    const stream = await openSse(`${srv.url}/stream?lastEventId=${st.epoch}:0`);
    await stream.waitFor((f) => f.id === `${st.epoch}:${st.position}`, 20_000);
    stream.close();
    const frames = stream.frames.filter((f) => f.event === 'event');
    assert.deepEqual(
      frames.map((f) => Number(f.id!.split(':')[1])),
      Array.from({ length: st.position }, (_, k) => k + 1),
      'positions 1..head, no gap, no duplicate',
    );
    const atPosition = new Map(frames.map((f) => [Number(f.id!.split(':')[1]), JSON.parse(f.data).event.activity as string]));
    const misplaced = [...acked].filter(([i, p]) => atPosition.get(p) !== `ack-${i}`);
    assert.deepEqual(misplaced, [], 'each acknowledged event sits at the position it was acknowledged with');
    const seen = new Set(atPosition.values());
    assert.equal(seen.size, atPosition.size, 'no event was stored twice');

    // and the restarted server goes on at head + 1
    const r = await fetch(srv.url + '/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"type":"join","agent":"after-crash"}' });
    assert.equal(((await r.json()) as { first: number }).first, st.position + 1);
  } finally {
    await srv.stop();
  }
});

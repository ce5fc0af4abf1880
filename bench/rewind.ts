// Rewind over a large log (docs/floor.md, "Rewind"): appends `n` floor events
// (200 agents, 8 teams, as the server stores them) to one project's floor on
// SQLite, folding them as it goes and keeping a snapshot every 1,000 events
// the way the floor keeps them (history), then times what GET /rewind does
// for random positions (src/server/rewind.ts: the nearest snapshot, the fold
// forward, the floor as JSON text) as if snapshots were kept every N events,
// for several N; and time → position lookups. Prints one JSON line.
//
//   node dist/bench/rewind.js <n>

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FLOOR_PROTOCOL_VERSION, applyEvent, emptyFloor, floorFromJSON, floorToJSON, type FloorEvent, type FloorJSON } from '../src/core/floor.js';
import { normalizeFloorEvent } from '../src/core/floor-wire.js';
import { SqliteStore } from '../src/storage/sqlite.js';
import type { EventStore } from '../src/storage/types.js';
import { positionAtTime, rewind, type RewindSpec } from '../src/server/rewind.js';
import { syntheticEvents } from './events.js';

const n = Number(process.argv[2] ?? 1_000_000);
const BASE = 1_000;
const EVERIES = [1_000, 2_500, 5_000, 10_000, 20_000].filter((e) => e <= n);
const SAMPLES = 200;

let seed = 7;
const rnd = (k: number): number => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % k;
};

const q = (v: number[], p: number): number => {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'roost-rewind-bench-'));
  const store = new SqliteStore({ path: join(dir, 'roost.db') });
  try {
    const gen = syntheticEvents(200, 8, Date.now());
    const live = emptyFloor();
    const snapBytes: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < n; i += BASE) {
      const batch = [];
      const now = Date.now();
      for (let k = i; k < Math.min(n, i + BASE); k++) {
        const e = normalizeFloorEvent(gen(k) as unknown as Record<string, unknown>, now);
        applyEvent(live, e);
        batch.push({ type: e.type, body: JSON.stringify(e) });
      }
      const r = await store.append('floor', batch);
      const body = JSON.stringify({ position: r.last, floor: floorToJSON(live) });
      snapBytes.push(body.length);
      await store.putSnapshot('floor', r.last, body, { history: true });
    }
    const fillMs = performance.now() - t0;
    const head = await store.head('floor');
    const spec: RewindSpec<ReturnType<typeof emptyFloor>> = {
      stream: 'floor',
      empty: emptyFloor,
      load: (text) => {
        const b = JSON.parse(text) as { position: number; floor: FloorJSON };
        return { state: floorFromJSON(b.floor), position: b.position };
      },
      step: (state, entry) => {
        applyEvent(state, JSON.parse(entry.body) as FloorEvent);
        return state;
      },
    };
    const byEvery: Record<string, { p50: number; p99: number; max: number; snapshotMiBPerM: number }> = {};
    const meanSnap = snapBytes.reduce((a, b) => a + b, 0) / snapBytes.length;
    for (const every of EVERIES) {
      // The store as if only every `every`-th snapshot were kept.
      const sparse = Object.create(store) as EventStore;
      sparse.getSnapshot = (stream, at = Number.MAX_SAFE_INTEGER) => store.getSnapshot(stream, Math.floor(at / every) * every);
      const times: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const p = 1 + rnd(head);
        const s = performance.now();
        const r = await rewind(sparse, spec, { position: p });
        const text = JSON.stringify({ protocol: FLOOR_PROTOCOL_VERSION, epoch: store.epoch, position: r.position, at: r.at, head: r.head, first: r.first, ...floorToJSON(r.state) });
        times.push(performance.now() - s);
        if (r.position !== p || text.length < 10) throw new Error(`rewound to ${r.position}, not ${p}`);
      }
      byEvery[every] = { p50: q(times, 0.5), p99: q(times, 0.99), max: Math.max(...times), snapshotMiBPerM: (meanSnap * (1_000_000 / every)) / 2 ** 20 };
    }
    // Time → position: bisection over append times.
    const first = (await store.read('floor', 0, 1))[0].at;
    const last = (await store.read('floor', head - 1, 1))[0].at;
    const lookups: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t = first + rnd(Math.max(1, last - first + 1));
      const s = performance.now();
      await positionAtTime(store, 'floor', head, t);
      lookups.push(performance.now() - s);
    }
    console.log(JSON.stringify({ n, fillMs, agents: live.agents.size, snapshotBytes: meanSnap, byEvery, timeLookup: { p50: q(lookups, 0.5), p99: q(lookups, 0.99) } }));
  } finally {
    await store.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

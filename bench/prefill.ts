// Fills a fresh SQLite log with N floor events (realistic shapes, batched), for
// the restart workload. Runs in its own process.
import { SqliteStore } from '../src/storage/index.js';
import { FLOOR_STREAM } from '../src/server/floor.js';
import { join } from 'node:path';
import { syntheticEvents } from './events.js';

const [dir, countArg] = process.argv.slice(2);
const count = Number(countArg ?? 1_000_000);
const store = new SqliteStore({ path: join(dir, 'roost.db') });
const start = Date.now();
const gen = syntheticEvents(200, 8, start - 60_000);
let done = 0;
while (done < count) {
  const n = Math.min(5000, count - done);
  const batch = [];
  for (let i = 0; i < n; i++) {
    const e = gen(done + i);
    batch.push({ type: e.type, body: JSON.stringify(e) });
  }
  await store.append(FLOOR_STREAM, batch);
  done += n;
}
await store.close();
process.stdout.write(JSON.stringify({ events: done, ms: Date.now() - start }) + '\n');

// Pure fold throughput: folds N synthetic events (already parsed) and prints
// events/s; also parse+fold, which is what the server does per stored event.
import { applyEvent, emptyFloor } from '../src/core/floor.js';
import { syntheticEvents } from './events.js';

const n = Number(process.argv[2] ?? 1_000_000);
const gen = syntheticEvents(200, 8, Date.now());
const events = Array.from({ length: n }, (_, i) => gen(i));
const bodies = events.map((e) => JSON.stringify(e));

// Warm up the JIT on a separate state.
{
  const s = emptyFloor();
  for (let i = 0; i < 50_000; i++) applyEvent(s, events[i % n]);
}
let s = emptyFloor();
let t = performance.now();
for (let i = 0; i < n; i++) applyEvent(s, events[i]);
const foldMs = performance.now() - t;

s = emptyFloor();
t = performance.now();
for (let i = 0; i < n; i++) applyEvent(s, JSON.parse(bodies[i]));
const parseFoldMs = performance.now() - t;

process.stdout.write(JSON.stringify({ events: n, foldPerSec: (n / foldMs) * 1000, parseFoldPerSec: (n / parseFoldMs) * 1000, agents: s.agents.size }) + '\n');

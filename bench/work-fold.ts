// Pure Work fold throughput (issue 12, part 7): N messages posted to one
// conversation, folded in order, already parsed (what a replay of one busy
// chat costs). Linear: every message costs the same however long the chat.
// Also reports the first and the last tenth separately, so a fold that slows
// down as the conversation grows shows as a ratio well above 1.
import { applyWork, emptyWork } from '../src/core/work.js';

const n = Number(process.argv[2] ?? 1_000_000);
const by = { uid: 'ann', name: 'Ann' };
const events = Array.from({ length: n }, (_, i) => ({ type: 'message.posted', conversation: 'c-1', text: `message ${i}`, by, at: 1_700_000_000_000 + i }));
const created = { type: 'conversation.created', id: 'c-1', title: 'one long chat', by, at: 1_700_000_000_000 };

// Warm up the JIT on a separate state.
{
  const s = emptyWork();
  applyWork(s, created, 1);
  for (let i = 0; i < Math.min(n, 50_000); i++) applyWork(s, events[i], i + 2);
}
const s = emptyWork();
applyWork(s, created, 1);
const tenth = Math.max(1, Math.floor(n / 10));
const t0 = performance.now();
let tFirst = 0;
let tLastStart = 0;
for (let i = 0; i < n; i++) {
  if (i === tenth) tFirst = performance.now() - t0;
  if (i === n - tenth) tLastStart = performance.now();
  applyWork(s, events[i], i + 2);
}
const end = performance.now();
const ms = end - t0;
const messages = s.conversations.get('c-1')?.messages.length ?? 0;
if (messages !== n) throw new Error(`folded ${messages} messages, expected ${n}`);
process.stdout.write(JSON.stringify({ events: n, ms, perSec: (n / ms) * 1000, lastOverFirst: (end - tLastStart) / tFirst }) + '\n');

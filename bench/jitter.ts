// The machine's own hiccups: a busy loop that reads the monotonic clock and
// counts the gaps between two readings (time the process did not run: another
// process, or the host taking the virtual CPU). Any latency measured here has
// these gaps in it; `npm run bench` prints them beside the figures.
// Usage: node dist/bench/jitter.js <seconds>; prints one JSON line.

const seconds = Number(process.argv[2] ?? 3);
const end = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
let last = process.hrtime.bigint();
let over1 = 0;
let over3 = 0;
let lost = 0;
let max = 0;
for (;;) {
  const t = process.hrtime.bigint();
  const gap = Number(t - last) / 1e6;
  last = t;
  if (gap > 0.2) {
    lost += gap;
    if (gap > 1) over1++;
    if (gap > 3) over3++;
    if (gap > max) max = gap;
  }
  if (t > end) break;
}
process.stdout.write(JSON.stringify({ over1PerS: over1 / seconds, over3PerS: over3 / seconds, maxMs: max, lostPct: (100 * lost) / (seconds * 1000) }) + '\n');

// Caller-given approval rules (src/core/approval-rules.ts), in their own
// process: what a check costs where a RegExp would backtrack, and what a new
// rule per request costs (a caller sending a different rule each time churns
// the compiled-rule cache). The tests keep what a rule means and that no rule
// takes seconds; the figures are here.
import { needsApproval } from '../src/core/approvals.js';

function timed(f: () => number): { n: number; ms: number } {
  const t = performance.now();
  const n = f();
  return { n, ms: performance.now() - t };
}

// A wildcard of 60 stars against a 200-character near miss, 10,000 checks (one rule: compiled once).
const stars = Array.from({ length: 60 }, () => 'a').join('*') + '*b';
const long = 'a'.repeat(200);
const nearMiss = timed(() => {
  let n = 0;
  for (let i = 0; i < 10_000; i++) if (needsApproval(stars, long)) n++;
  return n;
});
if (nearMiss.n !== 0) throw new Error('the near miss matched');

// 50,000 distinct rules, one check each (every one compiled; the cache starts over when full).
const distinct = timed(() => {
  let n = 0;
  for (let i = 0; i < 50_000; i++) if (needsApproval(`Tool${i}|mcp__${i}__*`, i % 2 ? `mcp__${i}__x` : 'Bash')) n++;
  return n;
});
if (distinct.n !== 25_000) throw new Error(`distinct rules: ${distinct.n} matched, expected 25,000`);

// The rules a RegExp backtracks on for seconds: the slowest of their first checks.
let worstMs = 0;
for (const [rule, tool] of [
  ['(a|a)+b', 'a'.repeat(27)],
  ['(a+)+b', 'a'.repeat(40)],
  ['(.*a){20}', 'a'.repeat(30)],
  ['^(([a-z])+.)+[A-Z]([a-z])+$', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaa!'],
]) {
  const r = timed(() => (needsApproval(rule, tool) ? 1 : 0));
  worstMs = Math.max(worstMs, r.ms);
}

process.stdout.write(JSON.stringify({ nearMissUs: (nearMiss.ms * 1000) / 10_000, distinctUs: (distinct.ms * 1000) / 50_000, catastrophicMs: worstMs }) + '\n');

// Caller-given approval rules (`?approvals=`, `--approvals`): the documented
// forms keep meaning what Claude Code's matcher means, anything else asks for
// every tool, and no rule costs more than a scan of the tool name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { needsApproval } from '../src/core/approvals.js';
import { RULE_MAX_CHARS, claudeMatcher, compileRule, ruleMatches } from '../src/core/approval-rules.js';

/** Runs `f` and says how long it took, ms. */
function timed<T>(f: () => T): { value: T; ms: number } {
  const t = performance.now();
  const value = f();
  return { value, ms: performance.now() - t };
}

test('a catastrophic-backtracking rule answers at once, and asks (it is not in the syntax)', () => {
  // With a RegExp, this rule against 27 a's held the event loop for seconds.
  for (const [rule, tool] of [
    ['(a|a)+b', 'a'.repeat(27)],
    ['(a+)+b', 'a'.repeat(40)],
    ['(.*a){20}', 'a'.repeat(30)],
    ['^(([a-z])+.)+[A-Z]([a-z])+$', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaa!'],
  ]) {
    const r = timed(() => needsApproval(rule, tool));
    assert.equal(r.value, true, `${rule}: not understood, so every tool needs approval`);
    // (a generous bound: the machine may be busy; the RegExp took seconds)
    assert.ok(r.ms < 250, `${rule} took ${r.ms.toFixed(1)} ms`);
  }
});

test('wildcards never backtrack: many stars against a long near-miss name', () => {
  const rule = Array.from({ length: 60 }, () => 'a').join('*') + '*b';
  const tool = 'a'.repeat(200);
  const r = timed(() => {
    let n = 0;
    for (let i = 0; i < 1000; i++) if (needsApproval(rule, tool)) n++;
    return n;
  });
  assert.equal(r.value, 0);
  assert.ok(r.ms < 1000, `1,000 checks took ${r.ms.toFixed(1)} ms`);
});

test('the documented forms: names, alternatives, prefixes, all and off', () => {
  assert.equal(needsApproval('Bash', 'Bash'), true);
  assert.equal(needsApproval('Bash', 'BashOutput'), false, 'a name matches the whole tool name');
  assert.equal(needsApproval('Edit|Write', 'Write'), true);
  assert.equal(needsApproval('Edit|Write', 'Read'), false);
  assert.equal(needsApproval(' Edit | Write ', 'Edit'), true, 'spaces around alternatives are ignored');
  assert.equal(needsApproval('mcp__.*', 'mcp__github__create_issue'), true);
  assert.equal(needsApproval('mcp__.*', 'Read'), false);
  assert.equal(needsApproval('mcp__github__*', 'mcp__github__create_issue'), true);
  assert.equal(needsApproval('mcp__github__*', 'mcp__gitlab__create_issue'), false);
  assert.equal(needsApproval('Notebook.*', 'NotebookEdit'), true);
  assert.equal(needsApproval('mcp__.*__delete_.*', 'mcp__db__delete_row'), true);
  assert.equal(needsApproval('mcp__.*__delete_.*', 'mcp__db__insert_row'), false);
  assert.equal(needsApproval('*_file', 'write_file'), true);
  assert.equal(needsApproval('*_file', 'write_files'), false);
  for (const all of ['all', '*', '.*', ' all ']) assert.equal(needsApproval(all, 'Read'), true, all);
  for (const off of ['', 'off', 'none', undefined, null]) assert.equal(needsApproval(off, 'Bash'), false, String(off));
});

test('exclusions: every tool but these, and the bridge default written the old way means the same', () => {
  const readOnly = ['Read', 'Glob', 'Grep', 'LS', 'NotebookRead', 'TodoWrite', 'TaskList', 'TaskGet', 'TaskOutput'];
  const legacy = `(?!(?:${readOnly.join('|')})$).*`;
  const modern = readOnly.map((t) => `!${t}`).join('|');
  for (const rule of [legacy, modern]) {
    for (const t of readOnly) assert.equal(needsApproval(rule, t), false, `${rule}: ${t}`);
    for (const t of ['Bash', 'Edit', 'Write', 'ReadMore', 'mcp__x__y']) assert.equal(needsApproval(rule, t), true, `${rule}: ${t}`);
  }
  assert.equal(needsApproval('mcp__.*|!mcp__docs__*', 'mcp__github__push'), true);
  assert.equal(needsApproval('mcp__.*|!mcp__docs__*', 'mcp__docs__search'), false, 'an exclusion wins over an inclusion');
  assert.equal(needsApproval('mcp__.*|!mcp__docs__*', 'Bash'), false);
});

test('anything outside the syntax fails safe: every tool needs approval', () => {
  for (const rule of ['(unclosed', 'Edit|', '|', 'Bash||Edit', 'B[a]sh', 'Ba.h', 'Bash?', 'Bash+', '\\w+', '(Edit|Write)', '!', 'Edit Write', 'x'.repeat(RULE_MAX_CHARS + 1)]) {
    assert.equal(needsApproval(rule, 'Read'), true, JSON.stringify(rule.slice(0, 40)));
    assert.deepEqual(compileRule(rule), { kind: 'every' }, JSON.stringify(rule.slice(0, 40)));
  }
  assert.equal(needsApproval('Bash', 'B'.repeat(10_000)), true, 'an absurdly long tool name is asked about, not scanned');
});

test('the Claude Code matcher `roost hooks install` writes selects at least what the rule asks about', () => {
  assert.equal(claudeMatcher('Bash'), 'Bash');
  assert.equal(claudeMatcher('Edit|Write'), 'Edit|Write');
  assert.equal(claudeMatcher('mcp__github__*'), 'mcp__github__.*', 'a star inside a name is written .* (in a matcher, `_*` would mean "more underscores")');
  assert.equal(claudeMatcher('*_file|Bash'), '.*_file|Bash');
  assert.equal(claudeMatcher('all'), '*');
  assert.equal(claudeMatcher('!Read|!Grep'), '*', 'a matcher cannot leave tools out: the script does');
  assert.equal(claudeMatcher('off'), null);
  assert.equal(claudeMatcher('(a|a)+b'), null, 'refused at install time');
});

test('many distinct rules (a caller sending a new one per request) each keep their meaning while the cache churns', () => {
  // What a new rule per check costs is measured by `npm run bench -- approval-rules` (a µs figure, not a test's bound).
  let n = 0;
  for (let i = 0; i < 5_000; i++) if (needsApproval(`Tool${i}|mcp__${i}__*`, i % 2 ? `mcp__${i}__x` : 'Bash')) n++;
  assert.equal(n, 2_500, 'each rule still means itself while the cache churns');
  // And a rule used before the churn still means itself after it.
  assert.equal(needsApproval('Tool0|mcp__0__*', 'mcp__0__x'), true);
  assert.equal(needsApproval('Tool0|mcp__0__*', 'Bash'), false);
});

// Within the syntax (no exclusions), the matcher agrees with the regular
// expression Claude Code would build from the same matcher.
const piece = fc.constantFrom('a', 'b', 'ab', 'mcp', '__', '_', 'x-', ':');
const alternative = fc.array(fc.oneof(piece, fc.constantFrom('*', '.*')), { minLength: 1, maxLength: 5 }).map((xs) => xs.join(''));
const rule = fc.array(alternative, { minLength: 1, maxLength: 3 }).map((alts) => alts.join('|'));
const toolName = fc.array(fc.constantFrom('a', 'b', 'm', 'c', 'p', '_', 'x', '-', ':'), { maxLength: 10 }).map((xs) => xs.join(''));

test('property: within the syntax, a rule means what the equivalent anchored regular expression means', () => {
  fc.assert(
    fc.property(rule, toolName, (r, tool) => {
      if (['*', '.*', 'all'].includes(r.trim())) return;
      const source = r
        .split('|')
        .map((alt) => alt.replace(/\.\*|\*/g, '\u0000').replace(/-/g, '\\-').replace(/\u0000/g, '.*'))
        .join('|');
      const expected = new RegExp(`^(?:${source})$`).test(tool);
      assert.equal(ruleMatches(compileRule(r), tool), expected, `${r} vs ${JSON.stringify(tool)}`);
    }),
    { numRuns: 2000 },
  );
});

// Earned trust with the real Claude Code CLI (headless, against the scripted
// model stand-in), as issue 30 asks it to show: in one project, three
// `npm test` calls allowed by a person and the fourth allowed by trust with no
// person (the model sees the command's output); `git push` waits even so; a
// second session of the same team starts trusted; a person's revocation drops
// the level and the next call waits (a note on its allow reaches the model, a
// deny drops the level again); a session of another team waits, and a
// person's deny with a note reaches the model as the reason.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { need } from './support/env.js';
import { inProcess } from './support/server.js';
import { until } from './support/until.js';
import { claudeAvailable, claudeSetup, spawnClaude, type ClaudeSetup } from './support/claude.js';
import { and, hasResult, modelStandin, not, offersTool, step, text, toolResults, toolUse, type Step } from './support/model-standin.js';
import { approvalsOf, built, install } from './support/approvals-claude.js';

let roost: Awaited<ReturnType<typeof inProcess>>;
before(async () => {
  roost = await inProcess();
});
after(async () => {
  await roost?.close();
});

const OUTPUT = 'tests-passed-42';

/** A project folder whose `npm test` prints OUTPUT, with Roost's hooks for team `team` holding every Bash call. */
function project(name: string, team: string): ClaudeSetup {
  const setup = claudeSetup(name);
  writeFileSync(join(setup.project, 'package.json'), JSON.stringify({ name, version: '1.0.0', scripts: { test: `echo ${OUTPUT}` } }));
  install(setup.project, roost.url, '--approvals', 'Bash', '--window', '60s', '--team', team);
  return setup;
}

/** The model runs each command in turn with Bash (ids `${prefix}N`), then finishes. */
function commands(prefix: string, list: string[]): Step[] {
  const ids = list.map((_, i) => `${prefix}${i + 1}`);
  return [
    ...list.map((command, i) => step(toolUse('Bash', { command, description: 'run it' }, ids[i]), and(offersTool('Bash'), i === 0 ? () => true : hasResult(ids[i - 1]), not(hasResult(ids[i]))))),
    step(text('finished'), hasResult(ids[ids.length - 1])),
  ];
}

async function post(method: string, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(roost.url + path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}

/** The next pending call of `command` not in `seen`. */
async function nextPending(command: string, seen: Set<string>): Promise<any> {
  return until(`"${command}" waiting`, async () => (await approvalsOf(roost.url)).pending.find((a) => a.detail?.command === command && !seen.has(a.id)), 90_000);
}

const resultOf = (model: { requests: any[] }, id: string) => model.requests.flatMap(toolResults).find((r) => r.tool_use_id === id);

test('the real Claude Code CLI: three npm test allowed by a person, the fourth by trust; git push waits; the next session of the team starts trusted, another team waits and gets the note', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  assert.equal((await post('PUT', '/api/trust/agents', { on: true })).status, 200);

  // Session 1 of team alpha.
  const shop = project('shop', 'alpha');
  const m1 = await modelStandin(commands('tr_a', ['npm test', 'npm test', 'npm test', 'npm test', 'git push origin main']));
  try {
    const run = spawnClaude(shop, m1.url, 'run the tests four times, then push', { timeoutMs: 240_000 });
    const seen = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const a = await nextPending('npm test', seen);
      seen.add(a.id);
      assert.equal(a.actionClass, 'npm test');
      assert.equal((await post('POST', `/approvals/${a.id}/decision`, { decision: 'allow', by: 'Pat' })).status, 200);
    }
    // The fourth: nobody decides it.
    const push = await nextPending('git push origin main', seen);
    const r4 = resultOf(m1, 'tr_a4');
    assert.ok(r4 && r4.content.includes(OUTPUT) && !r4.is_error, `the model saw the fourth npm test's output: ${JSON.stringify(r4)}`);
    const { recent } = await approvalsOf(roost.url);
    const byTrust = recent.filter((a) => a.decidedBy === 'trust');
    assert.equal(byTrust.length, 1, 'exactly the fourth was allowed by trust');
    assert.equal(byTrust[0].trust.level, 2);
    assert.deepEqual(byTrust[0].trust.because.map((b: any) => b.by), ['Pat', 'Pat', 'Pat']);
    // git push waits even so; the person denies it.
    assert.match(push.barred, /git push/);
    assert.equal((await post('POST', `/approvals/${push.id}/decision`, { decision: 'deny', by: 'Pat', reason: 'not today' })).status, 200);
    const done = await run.done;
    assert.equal(done.code, 0, done.stderr);
    assert.match(resultOf(m1, 'tr_a5')?.content ?? '', /not today/, 'the note reaches the model');
  } finally {
    await m1.close();
  }

  // Session 2 of team alpha: starts trusted.
  const m2 = await modelStandin(commands('tr_b', ['npm test']));
  try {
    const done = await spawnClaude(shop, m2.url, 'run the tests', { timeoutMs: 120_000 }).done;
    assert.equal(done.code, 0, done.stderr);
    assert.ok(resultOf(m2, 'tr_b1')?.content.includes(OUTPUT), 'allowed by trust at once, in a new session');
  } finally {
    await m2.close();
  }

  // A person takes that back (Revoke on the call trust allowed): the level drops and the next npm test waits.
  // Allowed with a note, the model reads the note; then the person's deny drops the level once more.
  const trusted = (await approvalsOf(roost.url)).recent.find((a) => a.decidedBy === 'trust' && a.actionClass === 'npm test');
  assert.deepEqual([(await post('POST', `/approvals/${trusted.id}/revoke`, { reason: 'wrong suite' })).json.to], [1]);
  const m2b = await modelStandin(commands('tr_d', ['npm test', 'npm test']));
  try {
    const run = spawnClaude(shop, m2b.url, 'run the tests twice', { timeoutMs: 180_000 });
    const seen = new Set<string>();
    const first = await nextPending('npm test', seen);
    seen.add(first.id);
    assert.equal((await post('POST', `/approvals/${first.id}/decision`, { decision: 'allow', by: 'Pat', reason: 'only the unit suite from now on' })).status, 200);
    const second = await nextPending('npm test', seen);
    assert.equal((await post('POST', `/approvals/${second.id}/decision`, { decision: 'deny', by: 'Pat', reason: 'enough for today' })).status, 200);
    const done = await run.done;
    assert.equal(done.code, 0, done.stderr);
    assert.ok(resultOf(m2b, 'tr_d1')?.content.includes(OUTPUT), 'the allowed one ran');
    const after = m2b.requests.filter((r) => resultOf({ requests: [r] }, 'tr_d1'));
    assert.ok(after.some((r) => JSON.stringify(r).includes('only the unit suite from now on')), 'the note on an allow reaches the model');
    assert.match(resultOf(m2b, 'tr_d2')?.content ?? '', /enough for today/, 'the deny reason reaches the model');
  } finally {
    await m2b.close();
  }

  // Team beta: waits, and a deny with a note reaches the model as the reason.
  const other = project('other', 'beta');
  const m3 = await modelStandin(commands('tr_c', ['npm test']));
  try {
    const run = spawnClaude(other, m3.url, 'run the tests', { timeoutMs: 120_000 });
    const a = await nextPending('npm test', new Set());
    assert.equal(a.team, 'beta');
    assert.equal((await post('POST', `/approvals/${a.id}/decision`, { decision: 'deny', by: 'Pat', reason: 'use the staging runner instead' })).status, 200);
    const done = await run.done;
    assert.equal(done.code, 0, done.stderr);
    const r = resultOf(m3, 'tr_c1');
    assert.match(r?.content ?? '', /use the staging runner instead/);
  } finally {
    await m3.close();
  }
  const ledger = (await (await fetch(roost.url + '/api/trust')).json());
  assert.deepEqual(
    ledger.agents.holders.map((h: any) => [h.team, h.action_class, h.level]),
    [['alpha', 'git push', 0], ['alpha', 'npm test', 0], ['beta', 'npm test', 0]],
  );
});

// Code items flown by Claude Code through `roost bridge` when things go wrong
// (docs/flock.md, "Code items"): a session closed on the board mid-flight,
// and the server SIGKILLed and started again while the session works. The
// real bridge and the real Claude Code CLI against the scripted stand-ins,
// as in flock.bridge.claude.test.ts.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { need } from './support/env.js';
import { child, tempDir } from './support/server.js';
import { claudeAvailable } from './support/claude.js';
import { askedWithBash as asked, hasResult, modelStandin, step, text, toolResults, toolUse } from './support/model-standin.js';
import { until as waitUntil } from './support/until.js';
import { bridgeBuilt, killBridges, shopRepo } from './support/bridge.js';
import { flockModel } from './support/flock-model.js';
import { flockClient } from './support/flock-client.js';
import { pendingOf } from './support/approvals-http.js';
import { THREAD, bridgeOn, triagedAndFlying, withServer } from './support/flock-bridge.js';

const until = <T>(what: string, f: () => Promise<T | undefined | null | false> | T | undefined | null | false, ms = 90_000) => waitUntil<T>(what, f, ms);
after(killBridges);

test('a code item whose session is closed before its result lands ok:false and is skipped as a failure', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, bridgeBuilt(), 'a build (npm run build)')) return;
  const claude = await modelStandin([step(toolUse('Bash', { command: 'echo never > NEVER.md' }, 'toolu_never'), asked('CLOSE-ME'))]);
  try {
    await withServer(async ({ roost, c }) => {
      const repo = shopRepo('roost-flock-bridge-fail-');
      await bridgeOn(roost.url, repo, claude.url);
      const list_id = await c.start('code CLOSE-ME: a change that never lands', 'ann');
      const w = await c.watch(list_id);
      const item = `${list_id}-1`;
      const flying = await triagedAndFlying(c, w, item);
      const session = flying.board.session as string;
      await until('the Bash call waiting', async () => (await pendingOf(roost.url)).find((a) => a.kind === 'fleet' && a.scope?.session === session));
      // A member closes the session on the board while it waits: the flight fails, the list goes on.
      const closed = await fetch(`${roost.url}/fleet/${THREAD}`, { method: 'POST', headers: { 'content-type': 'application/json', 'roost-name': 'Paul' }, body: JSON.stringify({ type: 'session.end', id: session, reason: 'closed' }) });
      assert.equal(closed.status, 200);
      const landed = await w.next('crow.landed', (d) => d.item_id === item && d.crow === flying.crow, 30_000);
      assert.equal(landed.data.ok, false);
      assert.match(landed.data.error, /ended before a result/);
      const skipped = await w.next('item.skipped', (d) => d.item_id === item);
      assert.equal(skipped.data.reason, 'failure');
      await w.next('list.finished', undefined, 30_000);
      assert.equal((await pendingOf(roost.url)).filter((a) => a.scope?.session === session).length, 0, 'its request left the inbox with it');
      assert.ok(!existsSync(join(repo, '.roost-bridge', 'worktrees', session, 'NEVER.md')));
      w.close();
    });
  } finally {
    await claude.close();
  }
});

test('a restart of the server mid-flight: the new driver rejoins the same session, which is neither started nor prompted twice', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, bridgeBuilt(), 'a build (npm run build)')) return;
  const ANSWER = 'RESTART.md is in place.';
  // The answer after the tool result is held 8 s: the server is killed and started again meanwhile.
  const claude = await modelStandin([
    step(toolUse('Bash', { command: 'echo kept > RESTART.md' }, 'toolu_restart'), asked('RESTART-TASK')),
    step({ ...text(ANSWER), delayMs: 8000 }, hasResult('toolu_restart')),
  ]);
  const flock = await flockModel('anthropic');
  const dataDir = tempDir('roost-flock-bridge-restart-');
  const env = { ANTHROPIC_API_KEY: 'test-key', ROOST_FLOCK_LEASE_MS: '1500', ROOST_FLOCK_BANTER_WAIT_MS: '1000' };
  const args = ['--model', flock.spec];
  const a = await child({ dataDir, env, args });
  let b: Awaited<ReturnType<typeof child>> | null = null;
  try {
    const repo = shopRepo('roost-flock-bridge-restart-root-');
    // No approvals: the flight runs on its own while the server is away.
    await bridgeOn(a.url, repo, claude.url, ['--approvals', 'off']);
    let c = flockClient(a.url);
    const list_id = await c.start('code RESTART-TASK: keep a RESTART.md', 'ann');
    let w = await c.watch(list_id);
    const item = `${list_id}-1`;
    const flying = await triagedAndFlying(c, w, item);
    const session = flying.board.session as string;
    await until('Claude Code’s turn after its Bash call', () => claude.requests.some((r) => toolResults(r).some((x) => x.tool_use_id === 'toolu_restart')));
    w.close();
    await a.stop('SIGKILL');

    b = await child({ dataDir, env, args, port: a.port });
    c = flockClient(b.url);
    w = await c.watch(list_id);
    const landed = await w.next('crow.landed', (d) => d.item_id === item && d.crow === flying.crow, 60_000);
    assert.equal(landed.data.ok, true, JSON.stringify(landed.data));
    const answered = await w.next('item.answered', (d) => d.item_id === item);
    assert.equal(answered.data.answer, ANSWER);
    assert.equal((await c.verdict(item, 'output', true)).status, 204);
    await w.next('list.finished', undefined, 30_000);
    const all = w.events();
    w.close();
    const count = (ev: string, crow: string) => all.filter((e) => e.event === ev && e.data.item_id === item && e.data.crow === crow).length;
    assert.equal(count('crow.flying', flying.crow), 1);
    assert.equal(count('crow.landed', flying.crow), 1);
    // One session, started once and prompted once: Claude Code was asked the item once.
    const sessions = (await (await fetch(`${b.url}/fleet/${THREAD}`)).json()).sessions;
    assert.deepEqual(sessions.map((s: any) => [s.id, s.prompts]), [[session, 1]]);
    assert.equal(claude.requests.filter((r) => asked('RESTART-TASK')(r) && toolResults(r).length === 0).length, 1, 'the item was put to Claude Code once');
    assert.equal(readFileSync(join(repo, '.roost-bridge', 'worktrees', session, 'RESTART.md'), 'utf8'), 'kept\n');
  } finally {
    await killBridges();
    await a.stop('SIGKILL');
    await b?.stop();
    await claude.close();
    await flock.close();
  }
});

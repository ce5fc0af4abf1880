// A code item flown by a real coding agent (docs/flock.md, "Code items"): a
// real Roost server, the real bridge (`roost bridge`, a child process) and
// the real Claude Code CLI it starts, against the scripted Messages-API
// stand-in; the flock's Sentry, Elder and banter on a second, scripted
// stand-in (test/support/flock-model.ts). A list with one code item: the
// Sentry triages it `code`, a crow flies it as a board session in its own
// git worktree (its Bash call an approval in the one inbox), the session's
// last turn is the answer and its usage the landing's tokens; verdicts
// through POST /api/verdicts; everything read off the list's SSE stream.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { need } from './support/env.js';
import { child, inProcess, tempDir } from './support/server.js';
import { CLAUDE_BIN, claudeAvailable } from './support/claude.js';
import { askedWithBash as asked, hasResult, modelStandin, toolResults, step, text, toolUse, type ModelStandin, type Usage } from './support/model-standin.js';
import { git, until as waitUntil } from './support/until.js';
import { bridgeBuilt, killBridges, shopRepo, startBridge } from './support/bridge.js';
import { flockModel, type FlockModel } from './support/flock-model.js';
import { assertContractFrame, flockClient, type FlockClient, type ListWatch } from './support/flock-client.js';
import { decide, pendingOf } from './support/approvals-http.js';
import type { Roost } from '../src/server/index.js';

const THREAD = 'crew';
const until = <T>(what: string, f: () => Promise<T | undefined | null | false> | T | undefined | null | false, ms = 90_000) => waitUntil<T>(what, f, ms);
after(killBridges);

/** What Claude Code asked the stand-in, in tokens of every kind (the default 10 in, 5 out where a step says nothing). */
function tokensOf(model: ModelStandin, usages: Partial<Usage>[]): number {
  let n = 0;
  for (const r of model.requests) {
    const u = { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, ...(r.step >= 0 ? usages[r.step] : {}) };
    n += u.input_tokens + u.output_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
  }
  return n;
}

async function withServer(run: (x: { roost: Roost; c: FlockClient; flock: FlockModel }) => Promise<void>): Promise<void> {
  const flock = await flockModel('anthropic');
  const roost = await inProcess({ models: flock.roster(), flockBanterWaitMs: 2000 }, tempDir());
  try {
    await run({ roost, c: flockClient(roost.url), flock });
  } finally {
    await killBridges();
    await roost.close();
    await flock.close();
  }
}

function bridgeOn(url: string, repo: string, modelUrl: string) {
  return startBridge(['--server', url, '--token', 'bridge-token', '--root', repo, '--thread', THREAD, '--claude', CLAUDE_BIN], {
    HOME: tempDir('roost-flock-bridge-home-'),
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: 'test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  });
}

/** Approves the item's triage once it waits, and returns the crow.flying of its worker. */
async function triagedAndFlying(c: FlockClient, w: ListWatch, item: string): Promise<Record<string, any>> {
  const triaged = await w.next('item.triaged', (d) => d.item_id === item, 30_000);
  assert.equal(triaged.data.task_type, 'code');
  assert.equal(triaged.data.mode, 'solo');
  assert.equal(triaged.data.needs_approval, true);
  assert.equal((await c.verdict(item, 'triage', true)).status, 204);
  return (await w.next('crow.flying', (d) => d.item_id === item && d.crow !== 'Sentry', 30_000)).data;
}

test('a code item is flown by Claude Code through roost bridge: its worktree, its approval in the inbox, its answer and tokens', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, bridgeBuilt(), 'a build (npm run build)')) return;
  const usages: Partial<Usage>[] = [
    { input_tokens: 300, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    { input_tokens: 400, output_tokens: 30, cache_read_input_tokens: 50, cache_creation_input_tokens: 0 },
  ];
  const ANSWER = 'Added CROW.md to the shop: one line, "flown by a crow".';
  const claude = await modelStandin([
    step({ ...toolUse('Bash', { command: 'printf "flown by a crow\\n" > CROW.md', description: 'write CROW.md' }, 'toolu_crow_write'), usage: usages[0] }, asked('CROW-TASK')),
    step({ ...text(ANSWER), usage: usages[1] }, hasResult('toolu_crow_write')),
  ]);
  try {
    await withServer(async ({ roost, c, flock }) => {
      const repo = shopRepo('roost-flock-bridge-root-');
      await bridgeOn(roost.url, repo, claude.url);
      const list_id = await c.start('code CROW-TASK: add a CROW.md to the shop', 'ann');
      const w = await c.watch(list_id);
      const item = `${list_id}-1`;
      const flying = await triagedAndFlying(c, w, item);
      const crow = flying.crow as string;
      assert.equal(flying.board?.thread, THREAD, 'the flight names the board it runs on');
      const session = flying.board.session as string;
      assert.match(session, /^flock-[0-9a-f]{20}$/);

      // The session is the fleet board's, started by the flock; its Bash call waits in the one inbox.
      const ask = await until('the session’s Bash call in the inbox', async () => (await pendingOf(roost.url)).find((a) => a.kind === 'fleet' && a.scope?.session === session));
      assert.equal(ask.tool, 'Bash');
      const onBoard = (await (await fetch(`${roost.url}/fleet/${THREAD}`)).json()).sessions.find((s: any) => s.id === session);
      assert.equal(onBoard.name, `${crow} · ${item}`);
      assert.equal(onBoard.by, 'flock');
      assert.equal(onBoard.flavor, 'scoped');
      assert.equal((await decide(roost.url, ask.id, 'allow', 'Paul')).status, 200);

      const landed = await w.next('crow.landed', (d) => d.item_id === item && d.crow === crow, 90_000);
      assert.equal(landed.data.ok, true, JSON.stringify(landed.data));
      // The landing's tokens are the session's usage as Claude Code reported it: every request it made of the stand-in.
      assert.equal(landed.data.tokens, tokensOf(claude, usages), `requests: ${claude.requests.map((r) => r.step).join(',')}`);
      const answered = await w.next('item.answered', (d) => d.item_id === item);
      assert.equal(answered.data.answer, ANSWER, 'the session’s last turn is the answer');
      assert.deepEqual(answered.data.crows, [crow]);
      assert.equal(answered.data.needs_approval, true);
      assert.equal((await c.verdict(item, 'output', true)).status, 204);
      const verdict = await w.next('verdict', (d) => d.item_id === item && d.target === 'output');
      assert.equal(verdict.data.verdict, 'approved');
      const finished = await w.next('list.finished', undefined, 30_000);
      assert.ok(finished.data.tokens_used >= landed.data.tokens, 'the session’s tokens count against the list');
      for (const e of w.events()) assertContractFrame(e, list_id);
      assert.equal(w.events().filter((e) => e.event === 'item.answered').length, 1);
      w.close();

      // The work is in the session's own worktree, on its branch; the session stays open on the board for people to read.
      const worktree = join(repo, '.roost-bridge', 'worktrees', session);
      assert.equal(readFileSync(join(worktree, 'CROW.md'), 'utf8'), 'flown by a crow\n');
      assert.equal(git(worktree, 'rev-parse', '--abbrev-ref', 'HEAD'), `roost/${session}`);
      assert.ok(!existsSync(join(repo, 'CROW.md')), 'the member’s checkout is untouched');
      const after = (await (await fetch(`${roost.url}/fleet/${THREAD}`)).json()).sessions.find((s: any) => s.id === session);
      assert.equal(after.state, 'idle');
      assert.equal(after.prompts, 1);
      // The Sentry and the banter were the flock's model; the code was Claude Code's alone.
      assert.ok(!flock.asks().some((a) => a.system.includes(`You are ${crow},`) && !a.system.includes('Write one short line')), 'no model crow flew the code item');
    });
  } finally {
    await claude.close();
  }
});

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
    await startBridge(['--server', a.url, '--token', 'bridge-token', '--root', repo, '--thread', THREAD, '--claude', CLAUDE_BIN, '--approvals', 'off'], {
      HOME: tempDir('roost-flock-bridge-home-'),
      ANTHROPIC_BASE_URL: claude.url,
      ANTHROPIC_API_KEY: 'test',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
    });
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

test('with no bridge following a board, a code item is flown by a model crow', async () => {
  await withServer(async ({ c, flock }) => {
    const list_id = await c.start('code: rename the helper', 'ann');
    const w = await c.watch(list_id);
    const item = `${list_id}-1`;
    const flying = await triagedAndFlying(c, w, item);
    assert.equal(flying.board, undefined, 'no board: a model call');
    const answered = await w.next('item.answered', (d) => d.item_id === item);
    assert.equal(answered.data.answer, `${flying.crow} did: code: rename the helper`);
    assert.ok(flock.asks().some((a) => a.system.startsWith(`You are ${flying.crow},`)));
    w.close();
  });
});

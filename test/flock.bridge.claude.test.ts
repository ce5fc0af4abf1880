// A code item flown by a real coding agent (docs/flock.md, "Code items"): a
// real Roost server, the real bridge (`roost bridge`, a child process) and
// the real Claude Code CLI it starts, against the scripted Messages-API
// stand-in; the flock's Sentry, Elder and banter on a second, scripted
// stand-in (test/support/flock-model.ts). A list with one code item: the
// Sentry triages it `code`, a crow flies it as a board session in its own
// git worktree (its Bash call an approval in the one inbox), the session's
// last turn is the answer and its usage the landing's tokens; verdicts
// through POST /api/verdicts; everything read off the list's SSE stream.
// Failures and a restart mid-flight: flock.bridge-failures.claude.test.ts.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { need } from './support/env.js';
import { claudeAvailable } from './support/claude.js';
import { askedWithBash as asked, hasResult, modelStandin, step, text, toolUse, type Usage } from './support/model-standin.js';
import { git, until as waitUntil } from './support/until.js';
import { bridgeBuilt, killBridges, shopRepo } from './support/bridge.js';
import { assertContractFrame } from './support/flock-client.js';
import { decide, pendingOf } from './support/approvals-http.js';
import { THREAD, bridgeOn, tokensOf, triagedAndFlying, withServer } from './support/flock-bridge.js';

const until = <T>(what: string, f: () => Promise<T | undefined | null | false> | T | undefined | null | false, ms = 90_000) => waitUntil<T>(what, f, ms);
after(killBridges);

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

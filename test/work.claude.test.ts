// The real path: a Work command → the Space connector (src/bridge/space.ts)
// → the real Claude Code CLI (against the scripted model stand-in) → an
// execution and a result in the project, in FIFO order, through a restart of
// the connector (no duplicate agent, no command run twice).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { need } from './support/env.js';
import { CLAUDE_BIN, claudeAvailable, claudeSetup } from './support/claude.js';
import { allText, modelStandin, step, text } from './support/model-standin.js';
import { inProcess } from './support/server.js';
import { SpaceConnector } from '../src/bridge/space.js';

const asked = (s: string) => (r: any) => allText(r).includes(s) && !allText(r).includes(`ANSWERED-${s}`);

async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a command runs in a real Claude Code session of a Space and comes back as a result', { timeout: 120_000 }, async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  const model = await modelStandin([
    step(text('ANSWERED-FIRST: the login bug is in redirect.ts.'), asked('FIRST')),
    step({ ...text('ANSWERED-SECOND: added a test.'), delayMs: 300 }, asked('SECOND')),
    step(text('ANSWERED-THIRD: changelog updated.'), asked('THIRD')),
  ]);
  const roost = await inProcess();
  const setup = claudeSetup('shop');
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: setup.home, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'test', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' };
  const log: string[] = [];
  const opts = { server: roost.url, name: 'test-box', project: 'default', contribute: true, agents: 1, cwd: setup.project, claude: CLAUDE_BIN, env, log: (l: string) => log.push(l) };
  let space = new SpaceConnector(opts);
  try {
    await space.start();
    const snap = async () => (await (await fetch(`${roost.url}/api/v2/snapshot?project=default`)).json()) as any;
    const agent = await until('the agent', async () => (await snap()).agents.find((a: any) => a.state !== 'ended'));
    assert.equal(agent.origin, 'bridge');
    const send = async (textIn: string) => {
      const r = await fetch(`${roost.url}/api/v2/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ project: 'default', agent: agent.id, text: textIn }) });
      assert.equal(r.status, 200);
      return (await r.json()).id as string;
    };
    const a = await send('FIRST: where is the login bug?');
    const b = await send('SECOND: add a test');
    const first = await until('the first result', async () => (await snap()).results.find((r: any) => r.command === a));
    assert.equal(first.status, 'done');
    assert.match(first.text, /ANSWERED-FIRST: the login bug is in redirect\.ts\./);
    const second = await until('the second result', async () => (await snap()).results.find((r: any) => r.command === b));
    assert.match(second.text, /ANSWERED-SECOND/);
    const s = await snap();
    assert.ok(s.executions.find((x: any) => x.command === a).endedAt <= s.executions.find((x: any) => x.command === b).startedAt, 'one at a time, in queue order');
    const chat = s.conversations.find((c: any) => c.id === agent.conversation);
    assert.deepEqual(chat.messages.filter((m: any) => m.kind === 'result').map((m: any) => m.command), [a, b], 'results in queue order, each linked to its command');
    assert.equal(chat.messages.filter((m: any) => m.kind === 'result').length, 2);

    // The connector restarts: the same Space, its old session ended (chat kept), a new session; nothing ran twice.
    await space.stop();
    space = new SpaceConnector(opts);
    await space.start();
    const after = await snap();
    assert.equal(new Set(after.spaces.map((x: any) => x.id)).size, 1, 'the same Space');
    assert.equal(after.agents.find((x: any) => x.id === agent.id).state, 'ended');
    const fresh = after.agents.find((x: any) => x.state !== 'ended');
    assert.ok(fresh && fresh.id !== agent.id);
    const r3 = await fetch(`${roost.url}/api/v2/commands`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ project: 'default', agent: fresh.id, text: 'THIRD: update the changelog' }) });
    const c = (await r3.json()).id;
    const third = await until('the third result', async () => (await snap()).results.find((r: any) => r.command === c));
    assert.match(third.text, /ANSWERED-THIRD/);
    assert.equal((await snap()).results.length, 3, 'nothing ran twice');
  } catch (e) {
    console.error(log.join('\n'));
    throw e;
  } finally {
    await space.stop();
    await roost.close();
    await model.close();
  }
});

// The real path of Work through `roost bridge` (src/bridge): a command queued
// in a project → the bridge, the member's Space → the real Claude Code CLI
// (against the scripted model stand-in) → an execution and a result, in FIFO
// order; a restart of the bridge (same Space, same agent, nothing run twice);
// an approval a member decides on the board (blocked, then resumed) and one
// nobody decides (denied); a hand-started session, made callable by its
// owner, taking a command by a headless resume; and a bridge killed in the
// middle of a command.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { need } from './support/env.js';
import { CLAUDE_BIN, claudeAvailable, claudeSetup, type ClaudeSetup } from './support/claude.js';
import { and, hasResult, lastAsk, modelStandin, not, step, text, toolResults, toolUse, type ModelStandin, type RecordedRequest } from './support/model-standin.js';
import { inProcess } from './support/server.js';
import { until as waitUntil } from './support/until.js';
import { Bridge, type BridgeOptions } from '../src/bridge/index.js';
import { bridgeBuilt, killBridges, startBridge } from './support/bridge.js';
import { descendants, hasProc, running } from './support/procs.js';

const until = <T>(what: string, f: () => Promise<T | undefined | null | false>, ms = 30_000) => waitUntil<T>(what, f, ms, 100);
/** The first request of a turn (no tool result yet): a prompt written into Claude Code, not its next step. */
const fresh = (r: RecordedRequest) => toolResults(r).length === 0;
/** The member's last ask contains `s` (and it is a main conversation, not a side request). */
const asked = (s: string) => (r: RecordedRequest) => lastAsk(r).includes(s) && (r.body?.tools ?? []).length > 0;

function claudeEnv(setup: ClaudeSetup, model: ModelStandin): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: setup.home, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'test', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' };
}

/** A local-mode Roost, the model stand-in, and a bridge that is the Space `test-box`, contributed to `default`. */
async function world(t: any, script: Parameters<typeof modelStandin>[0], extra: Partial<BridgeOptions> = {}) {
  const model = await modelStandin(script);
  const roost = await inProcess();
  const setup = claudeSetup('shop');
  const log: string[] = [];
  const opts: BridgeOptions = {
    server: roost.url,
    root: setup.project,
    thread: 'default',
    name: 'Claude',
    claude: CLAUDE_BIN,
    approvals: 'Bash',
    windowMs: 60_000,
    space: 'test-box',
    contribute: true,
    env: claudeEnv(setup, model),
    log: (l) => log.push(l),
    ...extra,
  };
  const bridges: Bridge[] = [];
  const startBridge = async () => {
    const b = new Bridge(opts);
    bridges.push(b);
    await b.start();
    await b.ready;
    await b.work!.ready;
    return b;
  };
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(roost.url + path, { method, headers: body ? { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() } : {}, body: body ? JSON.stringify(body) : undefined });
    return { status: r.status, json: await r.json().catch((): any => null) };
  };
  const snap = async () => (await api('GET', '/api/v2/snapshot?project=default')).json;
  const send = async (agent: string, textIn: string) => {
    const r = await api('POST', '/api/v2/commands', { project: 'default', agent, text: textIn });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    return r.json.id as string;
  };
  const result = (command: string, ms?: number) => until(`the result of ${command}`, async () => (await snap()).results.find((r: any) => r.command === command), ms);
  const chat = async (agent: any) => (await snap()).conversations.find((c: any) => c.id === agent.conversation);
  t.after(async () => {
    for (const b of bridges) await b.stop();
    await roost.close();
    await model.close();
  });
  return { model, roost, setup, log, opts, startBridge, api, snap, send, result, chat };
}

async function guard<T>(log: string[], f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    console.error(log.join('\n'));
    throw e;
  }
}

test('Work commands run in a real Claude Code session of the bridge, one at a time in queue order, and a restart runs nothing twice', { timeout: 150_000 }, async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  const w = await world(t, [
    step({ ...text('ANSWERED-FIRST: the login bug is in redirect.ts.'), delayMs: 800 }, asked('FIRST')),
    step(text('ANSWERED-SECOND: added a test.'), asked('SECOND')),
    step({ ...text('ANSWERED-SLOW: never seen.'), delayMs: 4000 }, asked('SLOW')),
    step(text('ANSWERED-THIRD: changelog updated.'), asked('THIRD')),
  ], { agents: 1 });
  await guard(w.log, async () => {
    const bridge = await w.startBridge();
    const s0 = await w.snap();
    assert.equal(s0.spaces.length, 1);
    assert.equal(s0.spaces[0].name, 'test-box');
    const agent = await until('the standing agent', async () => (await w.snap()).agents.find((a: any) => a.state !== 'ended'));
    assert.equal(agent.origin, 'bridge');
    assert.equal(agent.callable, true, 'what the bridge runs is callable by editors');
    assert.match(agent.pane, /^pid \d+$/);
    // It is a board session too: the fleet board shows it.
    const board = await (await fetch(`${w.roost.url}/fleet/default`)).json();
    assert.ok(board.sessions.some((s: any) => s.name === 'test-box #1' && s.state !== 'ended'), 'the standing agent is on the board');

    const a = await w.send(agent.id, 'FIRST: where is the login bug?');
    const b = await w.send(agent.id, 'SECOND: add a test');
    const first = await w.result(a);
    assert.equal(first.status, 'done');
    assert.equal(first.text, 'ANSWERED-FIRST: the login bug is in redirect.ts.');
    const second = await w.result(b);
    assert.equal(second.text, 'ANSWERED-SECOND: added a test.');
    const s = await w.snap();
    const xa = s.executions.find((x: any) => x.command === a);
    const xb = s.executions.find((x: any) => x.command === b);
    assert.ok(xa.endedAt <= xb.startedAt, 'one at a time, in queue order');
    const c1 = await w.chat(agent);
    assert.deepEqual(c1.messages.filter((m: any) => m.kind === 'result').map((m: any) => m.command), [a, b], 'results in queue order, each linked to its command');
    // The second prompt went into the same conversation as the first.
    const secondReq = w.model.requests.find(asked('SECOND'))!;
    assert.ok(JSON.stringify(secondReq.body.messages).includes('ANSWERED-FIRST'), 'one Claude Code session, one conversation');

    // A slow command is running when the bridge stops: it fails visibly, and is not run again.
    const slow = await w.send(agent.id, 'SLOW: a long job');
    await until('the slow command to run', async () => (await w.snap()).executions.find((x: any) => x.command === slow && x.state === 'running'));
    await until('the model to be asked', async () => w.model.requests.some(asked('SLOW')));
    await bridge.stop();
    const stopped = await w.snap();
    assert.equal(stopped.results.find((r: any) => r.command === slow)?.status, 'failed');
    assert.equal(stopped.agents.find((x: any) => x.id === agent.id).state, 'ended');

    // The restart: the same Space, the same agent (its conversation resumed), the same chat.
    await w.startBridge();
    const back = await until('the agent back', async () => (await w.snap()).agents.find((x: any) => x.id === agent.id && x.state !== 'ended'));
    const after = await w.snap();
    assert.equal(after.spaces.length, 1, 'the same Space');
    assert.equal(after.agents.length, 1, 'the same agent, not a second one');
    assert.equal(back.conversation, agent.conversation, 'the same chat');
    assert.notEqual(back.pane, agent.pane, 'a new process');
    const c = await w.send(agent.id, 'THIRD: update the changelog');
    const third = await w.result(c);
    assert.equal(third.text, 'ANSWERED-THIRD: changelog updated.');
    const thirdReq = w.model.requests.find(asked('THIRD'))!;
    assert.ok(JSON.stringify(thirdReq.body.messages).includes('ANSWERED-SECOND'), 'the restarted bridge resumed the same conversation');
    const end = await w.snap();
    assert.equal(end.results.length, 4);
    assert.equal(end.results.filter((r: any) => r.status === 'done').length, 3);
    assert.equal(w.model.requests.filter(asked('SLOW')).length, 1, 'the interrupted command was not run again');
    assert.deepEqual(
      (await w.chat(agent)).messages.filter((m: any) => m.kind === 'system').map((m: any) => m.text.replace(/pid \d+/g, 'pid N')),
      ['test-box #1 appeared on test-box', 'ended: bridge stopped', 'moved from pid N to pid N', 'seen again'],
    );
  });
});

test('a tool that needs approval in a Work command: blocked, resumed once a member decides on the board; denied when nobody does', { timeout: 150_000 }, async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  const w = await world(t, [
    step(toolUse('Bash', { command: 'echo shipped > shipped.txt', description: 'ship it' }, 'toolu_ship'), and(asked('SHIP'), not(hasResult('toolu_ship')))),
    step((r) => text(`SHIP-DONE: ${toolResults(r).find((x) => x.tool_use_id === 'toolu_ship')?.is_error ? 'refused' : 'shipped'}`), hasResult('toolu_ship')),
    step(toolUse('Bash', { command: 'echo pushed > pushed.txt', description: 'push it' }, 'toolu_push'), and(asked('PUSH'), not(hasResult('toolu_push')))),
    step((r) => text(`PUSH-DONE: ${toolResults(r).find((x) => x.tool_use_id === 'toolu_push')?.content.slice(0, 200)}`), hasResult('toolu_push')),
  ], { agents: 1, windowMs: 3000 });
  await guard(w.log, async () => {
    await w.startBridge();
    const agent = await until('the agent', async () => (await w.snap()).agents.find((a: any) => a.state !== 'ended'));
    const boardId = (await (await fetch(`${w.roost.url}/fleet/default`)).json()).sessions.find((s: any) => s.state !== 'ended').id;

    // A member allows it on the board (the approvals inbox does the same post).
    const ship = await w.send(agent.id, 'SHIP: ship the release');
    const blocked = await until('the execution to block', async () => (await w.snap()).executions.find((x: any) => x.command === ship && x.state === 'blocked'));
    assert.match(blocked.blockedOn, /^needs approval: Bash \$ echo shipped > shipped\.txt/);
    assert.equal((await w.snap()).agents.find((a: any) => a.id === agent.id).state, 'blocked', 'the agent shows it is blocked');
    const pending = await until('the pending approval on the board', async () => {
      const s = (await (await fetch(`${w.roost.url}/fleet/default`)).json()).sessions.find((x: any) => x.id === boardId);
      return s?.approvals.find((a: any) => a.state === 'pending');
    });
    const decided = await fetch(`${w.roost.url}/fleet/default`, { method: 'POST', headers: { 'content-type': 'application/json', 'roost-name': 'Olive' }, body: JSON.stringify({ type: 'session.approval', id: boardId, rid: pending.rid, state: 'allowed' }) });
    assert.equal(decided.status, 200);
    const shipped = await w.result(ship);
    assert.equal(shipped.text, 'SHIP-DONE: shipped');
    const lines = (await w.chat(agent)).messages.filter((m: any) => m.command === ship).map((m: any) => `${m.kind}: ${m.text}`);
    assert.ok(lines.some((l: string) => l.startsWith('system: blocked: needs approval: Bash $ echo shipped')), 'the chat says it was blocked');
    assert.equal((await w.snap()).executions.find((x: any) => x.command === ship).state, 'done', 'resumed, then done');

    // Nobody decides within the window: denied (fail closed), the execution resumes and finishes.
    const push = await w.send(agent.id, 'PUSH: push to main');
    await until('the second block', async () => (await w.snap()).executions.find((x: any) => x.command === push && x.state === 'blocked'));
    const pushed = await w.result(push, 20_000);
    assert.match(pushed.text, /^PUSH-DONE: .*No decision in Roost within 3s: denied/);
    const board = (await (await fetch(`${w.roost.url}/fleet/default`)).json()).sessions.find((x: any) => x.id === boardId);
    assert.equal(board.approvals.find((a: any) => a.rid !== pending.rid)?.state, 'denied');
    // The project's log: each command started, blocked, resumed once decided, then finished.
    const log = (await w.roost.store.read('work:default', 0, 10_000)).map((e) => JSON.parse(e.body));
    for (const cmd of [ship, push])
      assert.deepEqual(
        log.filter((e) => e.command === cmd && e.type.startsWith('execution.')).map((e) => e.type),
        ['execution.started', 'execution.blocked', 'execution.resumed', 'execution.finished'],
      );
  });
});

test('a hand-started session, made callable by its owner, takes a command by a headless resume of the same conversation', { timeout: 150_000 }, async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  const w = await world(t, [step(text('HAND-ONE-ANSWER: hello by hand.'), asked('HAND-ONE')), step(text('HAND-TWO-ANSWER: done from Work.'), asked('HAND-TWO'))], { hooksPort: 0 });
  await guard(w.log, async () => {
    const bridge = await w.startBridge();
    const hookUrl = bridge.hands!.url;
    // The person runs Claude Code by hand, with hooks that tell the bridge (as `roost bridge --hooks-port`
    // asks them to). An interactive session stays open after its turn: so no SessionEnd hook here.
    const post = `require("http").request(process.env.HOOK,{method:"POST",headers:{"content-type":"application/json"}},(r)=>r.resume()).end(require("fs").readFileSync(0))`;
    const hook = { type: 'command', command: `node -e '${post}'` };
    const settings = { hooks: Object.fromEntries(['SessionStart', 'UserPromptSubmit', 'Stop'].map((e) => [e, [{ matcher: '*', hooks: [hook] }]])) };
    const session = randomUUID();
    const code = await new Promise<number | null>((ok) => {
      const c = spawn(CLAUDE_BIN, ['-p', 'HAND-ONE: say hello', '--session-id', session, '--settings', JSON.stringify(settings)], { cwd: w.setup.project, env: { ...w.opts.env, HOOK: hookUrl }, stdio: 'ignore' });
      c.on('exit', ok);
    });
    assert.equal(code, 0);
    const agentId = `${bridge.work!.id}:${session}`;
    const agent = await until('the hand-started agent, idle', async () => (await w.snap()).agents.find((a: any) => a.id === agentId && a.state === 'idle'));
    assert.deepEqual([agent.origin, agent.trustedLocal, agent.callable, agent.label], ['hook', true, false, 'shop (by hand)']);

    // Its owner opens it to teammates, then a command runs in the same conversation.
    assert.equal((await w.api('POST', `/api/v2/agents/${encodeURIComponent(agentId)}/callable?project=default`, { callable: true })).status, 200);
    const cmd = await w.send(agentId, 'HAND-TWO: finish it');
    const r = await w.result(cmd);
    assert.equal(r.status, 'done');
    assert.equal(r.text, 'HAND-TWO-ANSWER: done from Work.');
    const req = w.model.requests.find(asked('HAND-TWO'))!;
    assert.ok(JSON.stringify(req.body.messages).includes('HAND-ONE-ANSWER'), 'the command continued the hand-started conversation');
    const s = await w.snap();
    assert.equal(s.agents.length, 1, 'the same agent');
    assert.notEqual(s.agents[0].state, 'ended');
  });
});

test('a bridge killed mid-command: after its restart the command is reported interrupted, never run again, the agent is the same, and nothing the killed bridge started still runs', { timeout: 150_000 }, async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, bridgeBuilt(), 'a build (npm run build)')) return;
  if (!need(t, hasProc(), 'Linux /proc (to see which processes still run)')) return;
  t.after(killBridges);
  // The long job is a tool that runs for minutes: Claude Code waits for it, and its shell is a process of its own.
  const w = await world(t, [
    step(text('ANSWERED-WARM: ready.'), asked('WARM')),
    step(toolUse('Bash', { command: 'sleep 97' }), and(asked('LONG'), fresh)),
    step(text('ANSWERED-AFTER: picked up where we left off.'), asked('AFTER')),
  ]);
  const args = ['--server', w.roost.url, '--root', w.setup.project, '--space', 'test-box', '--contribute', '--agents', '1', '--claude', CLAUDE_BIN, '--approvals', 'off'];
  const strays: number[] = [];
  t.after(() => {
    for (const pid of strays) if (running(pid)) process.kill(pid, 'SIGKILL');
  });
  const env = { ...w.opts.env };
  let bridge = await startBridge(args, env);
  await guard([], async () => {
    try {
      const agent = await until('the standing agent', async () => (await w.snap()).agents.find((a: any) => a.state !== 'ended'));
      assert.equal((await w.result(await w.send(agent.id, 'WARM: get ready'))).text, 'ANSWERED-WARM: ready.');
      const long = await w.send(agent.id, 'LONG: a long job');
      await until('the model to be asked', async () => w.model.requests.some(asked('LONG')));
      const claude = Number(/^pid (\d+)$/.exec((await w.snap()).agents.find((a: any) => a.id === agent.id).pane)![1]);
      const tool = await until('the long tool to run', async () => descendants(claude).find((p) => /^sleep 97\b/.test(p.cmd)));
      strays.push(claude, tool.pid);
      await bridge.stop('SIGKILL');
      assert.equal((await w.snap()).executions.find((x: any) => x.command === long).state, 'running', 'nobody told the server yet');
      await new Promise((r) => setTimeout(r, 1000));
      assert.ok(running(claude) && running(tool.pid), 'the killed bridge took neither Claude Code nor its tool down with it');

      bridge = await startBridge(args, env);
      // Ended before the restarted bridge follows its thread (and before it resumes the same conversation).
      assert.equal(running(claude), false, `Claude Code of the killed bridge (pid ${claude}) still runs`);
      assert.equal(running(tool.pid), false, `its tool (pid ${tool.pid}: ${tool.cmd}) still runs`);
      assert.match(bridge.log(), /ended 1 Claude Code process\(es\) the previous bridge left running/);
      const r = await w.result(long);
      assert.equal(r.status, 'failed');
      assert.equal(r.text, 'interrupted: the bridge stopped before it finished');
      const back = await until('the agent back', async () => (await w.snap()).agents.find((x: any) => x.id === agent.id && x.state === 'idle'));
      assert.equal(back.conversation, agent.conversation);
      const after = await w.send(agent.id, 'AFTER: carry on');
      assert.equal((await w.result(after)).text, 'ANSWERED-AFTER: picked up where we left off.');
      const s = await w.snap();
      assert.equal(s.agents.length, 1, 'the same agent');
      assert.equal(w.model.requests.filter(and(asked('LONG'), fresh)).length, 1, 'the interrupted command was not run again');
      assert.ok(JSON.stringify(w.model.requests.find(asked('AFTER'))!.body.messages).includes('ANSWERED-WARM'), 'the same conversation, resumed');
    } catch (e) {
      console.error(bridge.log());
      throw e;
    } finally {
      await bridge.stop();
    }
  });
});

test("a standing agent whose state file is behind Claude Code's own (a crash between the two) still runs its commands", { timeout: 150_000 }, async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  const w = await world(t, [step(text('EARLIER-ANSWER: noted.'), asked('EARLIER')), step(text('ONE-ANSWER: fine.'), asked('ONE')), step(text('TWO-ANSWER: fine too.'), asked('TWO'))], { agents: 2 });
  // Slot 1 says "never used" of a conversation that exists; slot 2 says "used" of one that never did.
  const [exists, never] = [randomUUID(), randomUUID()];
  const code = await new Promise<number | null>((ok) => spawn(CLAUDE_BIN, ['-p', 'EARLIER: remember this', '--session-id', exists], { cwd: w.setup.project, env: w.opts.env, stdio: 'ignore' }).on('exit', ok));
  assert.equal(code, 0);
  mkdirSync(join(w.setup.project, '.roost-bridge'), { recursive: true });
  writeFileSync(join(w.setup.project, '.roost-bridge', 'state.json'), JSON.stringify({ bridge: 'btest', threads: {}, agents: [{ sid: exists, used: false }, { sid: never, used: true }] }));
  await guard(w.log, async () => {
    const bridge = await w.startBridge();
    const id = (sid: string) => `${bridge.work!.id}:${sid}`;
    await until('both agents', async () => (await w.snap()).agents.filter((a: any) => a.state === 'idle').length === 2);
    const one = await w.send(id(exists), 'ONE: go on');
    const two = await w.send(id(never), 'TWO: start');
    assert.equal((await w.result(one)).text, 'ONE-ANSWER: fine.');
    assert.equal((await w.result(two)).text, 'TWO-ANSWER: fine too.');
    assert.ok(JSON.stringify(w.model.requests.find(asked('ONE'))!.body.messages).includes('EARLIER-ANSWER'), 'slot 1 resumed the conversation that existed');
    assert.equal((await w.snap()).agents.length, 2);
    t.diagnostic(w.log.filter((l) => /resuming it|starting it/.test(l)).join(' / '));
  });
});

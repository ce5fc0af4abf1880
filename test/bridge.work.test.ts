// `roost bridge` as a member's Space when things go wrong around it, with a
// stand-in of Claude Code (test/support/fake-claude.ts): a command that
// finishes while the server is away and a bridge killed after it, a command
// interrupted twice, a stop with the server gone, an approval asked while the
// server is gone, and a second bridge on the same root.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { need } from './support/env.js';
import { ROOST_BIN, bridgeBuilt, killBridges, startBridge } from './support/bridge.js';
import { fakeClaude } from './support/fake-claude.js';
import { child, freePort, inProcess, tempDir } from './support/server.js';
import { until as waitUntil } from './support/until.js';

const until = <T>(what: string, f: () => Promise<T | undefined | null | false>, ms = 20_000) => waitUntil<T>(what, f, ms, 100);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
after(() => killBridges());

/** A contributed Space with one standing agent; `approvals` replaces the default of none. */
function bridgeArgs(url: string, root: string, claude: string, approvals = ['--approvals', 'off']): string[] {
  return ['--server', url, '--root', root, '--space', 'box', '--contribute', '--agents', '1', '--claude', claude, ...approvals];
}

function workApi(url: string) {
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(url + path, { method, headers: body ? { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() } : {}, body: body ? JSON.stringify(body) : undefined });
    return { status: r.status, json: await r.json().catch((): any => null) };
  };
  const snap = async () => (await api('GET', '/api/v2/snapshot?project=default')).json;
  return {
    snap,
    agent: () => until('the standing agent', async () => (await snap()).agents.find((a: any) => a.state !== 'ended')),
    send: async (agent: string, text: string) => {
      const r = await api('POST', '/api/v2/commands', { project: 'default', agent, text });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      return r.json.id as string;
    },
    running: (command: string) => until(`${command} running`, async () => (await snap()).executions.find((x: any) => x.command === command && x.state === 'running')),
    result: (command: string, ms?: number) => until(`the result of ${command}`, async () => (await snap()).results.find((r: any) => r.command === command), ms),
  };
}

/** A `roost serve` child on a known port (so it can come back on it), its Work API, and a bridge on a fresh root running the stand-in. */
async function serverAndBridge(approvals?: string[]) {
  const claude = fakeClaude();
  const root = tempDir('roost-bridge-root-');
  const port = await freePort();
  const srv = await child({ port });
  const w = workApi(srv.url);
  const b = await startBridge(bridgeArgs(srv.url, root, claude, approvals), {});
  return { claude, root, port, srv, w, b };
}

test('a command that finished while the server was away, its bridge then killed, is reported at the next start, and the agent takes the next one', { timeout: 90_000 }, async (t) => {
  if (!need(t, bridgeBuilt(), 'the built CLI (npm run build)')) return;
  const start = await serverAndBridge();
  const { claude, root, port, w } = start;
  let { srv, b } = start;
  try {
    const agent = await w.agent();
    const gate = join(tempDir(), 'go');
    const c1 = await w.send(agent.id, `first WAIT:${gate}`);
    await w.running(c1);
    await srv.stop('SIGKILL');
    writeFileSync(gate, '');
    await sleep(1500); // it finishes; the report cannot reach the server
    await b.stop('SIGKILL');
    srv = await child({ port, dataDir: srv.dataDir });
    b = await startBridge(bridgeArgs(srv.url, root, claude), {});
    const r1 = await w.result(c1);
    assert.equal(r1.status, 'done');
    assert.equal(r1.text, `done: first WAIT:${gate}`);
    const c2 = await w.send(agent.id, 'second');
    assert.equal((await w.result(c2)).text, 'done: second', 'the agent is not stuck');
    await until('answered reports forgotten in the state file', async () => JSON.parse(readFileSync(join(root, '.roost-bridge', 'state.json'), 'utf8')).reports.length === 0, 5000);
  } catch (e) {
    console.error(b.log());
    throw e;
  } finally {
    await b.stop();
    await srv.stop();
  }
});

test('a command interrupted before its start reached the server, then again while running, ends failed and the agent takes the next one', { timeout: 90_000 }, async (t) => {
  if (!need(t, bridgeBuilt(), 'the built CLI (npm run build)')) return;
  const claude = fakeClaude();
  const root = tempDir('roost-bridge-root-');
  const roost = await inProcess();
  t.after(() => roost.close());
  const w = workApi(roost.url);
  let b = await startBridge(bridgeArgs(roost.url, root, claude), {});
  try {
    const agent = await w.agent();
    await b.stop('SIGKILL');
    const gate = join(tempDir(), 'go');
    const c = await w.send(agent.id, `held WAIT:${gate}`);
    // The state file of a bridge killed after it wrote the command down, before its `started` was sent.
    const file = join(root, '.roost-bridge', 'state.json');
    const state = JSON.parse(readFileSync(file, 'utf8'));
    state.agents[0].running = c;
    state.agents[0].attempt = 'first';
    writeFileSync(file, JSON.stringify(state));
    b = await startBridge(bridgeArgs(roost.url, root, claude), {});
    await w.running(c); // reported interrupted (refused: it never started), then started for real
    await b.stop('SIGKILL');
    b = await startBridge(bridgeArgs(roost.url, root, claude), {});
    const r = await w.result(c);
    assert.equal(r.status, 'failed');
    assert.match(r.text, /interrupted/);
    const next = await w.send(agent.id, 'next');
    assert.equal((await w.result(next)).text, 'done: next', 'the agent is not stuck');
    writeFileSync(gate, '');
  } catch (e) {
    console.error(b.log());
    throw e;
  } finally {
    await b.stop();
  }
  assert.ok(existsSync(root));
});

test('output the bridge does not know stops that execution visibly (failed, with the reason in the agent’s chat); a message Claude Code prints and the bridge ignores does not; the agent takes the next command', { timeout: 90_000 }, async (t) => {
  if (!need(t, bridgeBuilt(), 'the built CLI (npm run build)')) return;
  const claude = fakeClaude();
  const root = tempDir('roost-bridge-root-');
  const roost = await inProcess();
  t.after(() => roost.close());
  const w = workApi(roost.url);
  const b = await startBridge(bridgeArgs(roost.url, root, claude), {});
  try {
    const agent = await w.agent();
    for (const [print, what] of [['odd', /a message of type "assistant_v9"/], ['noise', /a line that is not JSON: Warning: something printed/]] as const) {
      const c = await w.send(agent.id, `go PRINT:${print}`);
      const r = await w.result(c);
      assert.equal(r.status, 'failed', `${print}: ${r.text}`);
      assert.match(r.text, /output the bridge does not know/);
      assert.match(r.text, what);
      const snap = await w.snap();
      assert.equal(snap.executions.find((x: any) => x.command === c).state, 'failed');
      const chat = snap.conversations.find((x: any) => x.agent === agent.id);
      const said = chat.messages.filter((m: any) => m.command === c && m.kind === 'result').map((m: any) => m.text);
      assert.deepEqual(said, [r.text], 'the agent’s chat says why it stopped');
      assert.ok(!chat.messages.some((m: any) => m.text === `done: go PRINT:${print}`), 'nothing it said after the unknown line is taken');
    }
    const fine = await w.send(agent.id, 'go PRINT:rate');
    assert.deepEqual([(await w.result(fine)).status, (await w.result(fine)).text], ['done', 'done: go PRINT:rate'], 'a rate_limit_event is known and read by no one');
    const next = await w.send(agent.id, 'next');
    assert.equal((await w.result(next)).text, 'done: next', 'the agent is not stuck');
  } catch (e) {
    console.error(b.log());
    throw e;
  } finally {
    await b.stop();
  }
});

/** Sends `signals` to a bridge (one every 200 ms) and resolves with how long it took to exit. */
async function exitAfter(b: Awaited<ReturnType<typeof startBridge>>, signals: NodeJS.Signals[]): Promise<{ ms: number; code: number | null }> {
  const t0 = Date.now();
  const exited = new Promise<number | null>((ok) => b.proc.once('exit', (code) => ok(code)));
  for (const s of signals) {
    b.proc.kill(s);
    await sleep(200);
  }
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([exited, new Promise<'hung'>((ok) => (timer = setTimeout(() => ok('hung'), 30_000)))]);
  clearTimeout(timer);
  if (code === 'hung') {
    await b.stop('SIGKILL');
    assert.fail(`the bridge did not exit within 30 s of ${signals.join(', ')}: ${b.log()}`);
  }
  return { ms: Date.now() - t0, code };
}

test('Ctrl-C with the server gone: the bridge ends its sessions and exits within the 5 s it gives its posts; the finished report waits for the next start', { timeout: 90_000 }, async (t) => {
  if (!need(t, bridgeBuilt(), 'the built CLI (npm run build)')) return;
  const start = await serverAndBridge();
  const { claude, root, port, w } = start;
  let { srv, b } = start;
  try {
    const agent = await w.agent();
    const c = await w.send(agent.id, `long WAIT:${join(tempDir(), 'never')}`);
    await w.running(c);
    await srv.stop('SIGKILL');
    const { ms, code } = await exitAfter(b, ['SIGINT']);
    assert.equal(code, 0);
    assert.ok(ms < 9000, `exited ${ms} ms after SIGINT`);
    assert.match(b.log(), /closed a1-/);
    const state = JSON.parse(readFileSync(join(root, '.roost-bridge', 'state.json'), 'utf8'));
    assert.deepEqual(state.reports.map((r: any) => [r.command, r.status]), [[c, 'failed']], 'the unanswered report is kept');
    // The next start delivers it.
    srv = await child({ port, dataDir: srv.dataDir });
    b = await startBridge(bridgeArgs(srv.url, root, claude), {});
    const r = await w.result(c);
    assert.equal(r.status, 'failed');
    assert.match(r.text, /bridge stopped/);
    // A second signal does not wait at all.
    await srv.stop('SIGKILL');
    const twice = await exitAfter(b, ['SIGINT', 'SIGINT']);
    assert.ok(twice.ms < 2000, `exited ${twice.ms} ms after two SIGINTs`);
  } catch (e) {
    console.error(b.log());
    throw e;
  } finally {
    await b.stop('SIGKILL');
    await srv.stop();
  }
});

test('an approval asked while Roost is unreachable is denied while it is still away (the window counts from the ask), and the request, reaching the board late, is closed by the bridge’s denial', { timeout: 90_000 }, async (t) => {
  if (!need(t, bridgeBuilt(), 'the built CLI (npm run build)')) return;
  const start = await serverAndBridge(['--approvals', 'Bash', '--window', '2s']);
  const { port, w, b } = start;
  let { srv } = start;
  try {
    const agent = await w.agent();
    const gate = join(tempDir(), 'go');
    const c = await w.send(agent.id, `WAIT:${gate} ASK:Bash`);
    await w.running(c);
    await srv.stop('SIGKILL');
    writeFileSync(gate, ''); // Claude Code asks about a Bash call now, with the server gone
    // Away for 10 s: the 2 s window and the 5 s the bridge then gives a decision already in the
    // log both end while it is away. (Counted from when the request got through, as before, the
    // call would wait for the server and then a whole window more.)
    await sleep(10_000);
    srv = await child({ port, dataDir: srv.dataDir });
    const r = await w.result(c);
    const m = /^asked: deny after (\d+)ms: (.*)$/.exec(r.text);
    assert.ok(m, r.text);
    assert.ok(Number(m[1]) < 8000, `denied ${m[1]} ms after the ask: within the window and its 5 s, while the server was away`);
    assert.match(m[2], /could not be reached within 2s/);
    // The request reached the board once the server was back, with its denial right behind it.
    const board = async () => (await (await fetch(`${srv.url}/fleet/default`)).json());
    const approvals = await until('the late request and its denial on the board', async () => {
      const all = (await board()).sessions.flatMap((s: any) => s.approvals ?? []);
      return all.length > 0 && all.every((a: any) => a.state !== 'pending') && all;
    });
    assert.deepEqual(approvals.map((a: any) => [a.tool, a.state, a.by]), [['Bash', 'denied', 'Claude']], 'closed by the bridge’s own denial');
  } catch (e) {
    console.error(b.log());
    throw e;
  } finally {
    await b.stop();
    await srv.stop();
  }
});

test('a second bridge on the same root refuses to start and leaves the first one’s worktrees, state and sessions alone', { timeout: 60_000 }, async (t) => {
  if (!need(t, bridgeBuilt(), 'the built CLI (npm run build)')) return;
  const claude = fakeClaude();
  const root = tempDir('roost-bridge-root-');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, stdio: 'pipe' });
  git('init', '-q');
  writeFileSync(join(root, 'README'), 'hi\n');
  git('add', 'README');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'init');
  const roost = await inProcess();
  t.after(() => roost.close());
  const b = await startBridge(bridgeArgs(roost.url, root, claude), {});
  try {
    const r = await fetch(`${roost.url}/fleet/default/requests`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'request.start', session: 'fix' }) });
    const { id } = (await r.json());
    await b.waitFor(`started ${id}`);
    const worktree = join(root, '.roost-bridge', 'worktrees', id);
    assert.ok(existsSync(worktree));
    const stateOf = () => JSON.parse(readFileSync(join(root, '.roost-bridge', 'state.json'), 'utf8'));
    // The session's process is written to the state file just after the log line: read the state once it is there.
    await until('the session’s process in the state file', async () => (stateOf().children as { what: string }[]).some((c) => c.what.endsWith(id)), 10_000);
    const before = stateOf();

    const second = spawn(process.execPath, [ROOST_BIN, 'bridge', ...bridgeArgs(roost.url, root, claude)], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    second.stdout.on('data', (d) => (out += d));
    second.stderr.on('data', (d) => (out += d));
    const kill = setTimeout(() => second.kill('SIGKILL'), 20_000); // one that does not refuse is ended, and fails below
    const code = await new Promise<number | null>((ok) => second.once('exit', (c) => ok(c)));
    clearTimeout(kill);
    assert.notEqual(code, 0, out);
    assert.match(out, new RegExp(`another bridge \\(pid ${b.proc.pid}\\) runs with --root`));
    assert.ok(existsSync(worktree), 'the first bridge’s worktree is still there');
    const after = stateOf();
    assert.equal(after.owner.pid, b.proc.pid, 'it still owns the state file');
    assert.deepEqual([after.bridge, after.agents, after.children], [before.bridge, before.agents, before.children], 'its identity, agents and processes are kept');
    const board = (await (await fetch(`${roost.url}/fleet/default`)).json());
    assert.equal(board.sessions.find((s: any) => s.id === id)?.state === 'ended', false, 'its session still runs');
  } catch (e) {
    console.error(b.log());
    throw e;
  } finally {
    await b.stop();
  }
});

test('two bridges started on one root at the same instant: exactly one runs, the other refuses', { timeout: 60_000 }, async (t) => {
  if (!need(t, bridgeBuilt(), 'the built CLI (npm run build)')) return;
  const claude = fakeClaude();
  const root = tempDir('roost-bridge-root-');
  const roost = await inProcess();
  t.after(() => roost.close());
  const args = ['--server', roost.url, '--root', root, '--space', 'box', '--claude', claude, '--approvals', 'off'];
  // Several rounds: the window between reading the state file and writing the owner into it is a
  // few milliseconds, and a guard that only checks the file lets both through in most rounds.
  for (let round = 0; round < 3; round++) {
    const pair = [0, 1].map(() => {
      const proc = spawn(process.execPath, [ROOST_BIN, 'bridge', ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'pipe'] });
      const b = { proc, out: '' };
      proc.stdout.on('data', (d) => (b.out += d));
      proc.stderr.on('data', (d) => (b.out += d));
      return b;
    });
    try {
      // Each either refuses (exits) or comes up; wait until both have decided.
      await until(`both bridges of round ${round} to decide`, async () => pair.every((b) => b.proc.exitCode !== null || b.out.includes('following thread'))).catch((e) => {
        throw new Error(`${(e as Error).message}:\n${pair.map((b) => b.out).join('\n---\n')}`);
      });
      const refused = pair.filter((b) => b.proc.exitCode !== null);
      assert.equal(refused.length, 1, `round ${round}: exactly one refuses:\n${pair.map((b) => b.out).join('\n---\n')}`);
      assert.notEqual(refused[0].proc.exitCode, 0);
      assert.match(refused[0].out, /another bridge .*runs with --root/);
      const running = pair.find((b) => b.proc.exitCode === null)!;
      const state = JSON.parse(readFileSync(join(root, '.roost-bridge', 'state.json'), 'utf8'));
      assert.equal(state.owner.pid, running.proc.pid, 'the one that runs owns the state file');
    } finally {
      await Promise.all(
        pair.map((b) => (b.proc.exitCode !== null ? Promise.resolve() : new Promise((ok) => (b.proc.once('exit', ok), b.proc.kill('SIGTERM'))))),
      );
    }
  }
});

// The workstation bridge end to end: a real Roost server, the real bridge
// (`roost bridge`, a child process), the real Claude Code CLI it starts, and
// the scripted model stand-in. Members are told apart by `Roost-Name`.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, request, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { applySessionEvent, emptySessions } from '../src/core/fleet.js';
import { need } from './support/env.js';
import { inProcess, freePort, tempDir } from './support/server.js';
import { CLAUDE_BIN, claudeAvailable } from './support/claude.js';
import { openSse } from './support/sse.js';
import { modelStandin, step, text, toolUse, hasResult, and, not, toolResults } from './support/model-standin.js';
import { askedWithBash as asked, lastAsk } from './support/model-standin.js';
import { until as waitUntil, git } from './support/until.js';
import { bridgeBuilt, killBridges, shopRepo, startBridge as startBridgeProc, type BridgeProc } from './support/bridge.js';

const THREAD = 'crew';

const until = <T>(what: string, f: () => Promise<T | undefined | null | false> | T | undefined | null | false, ms = 45_000) => waitUntil<T>(what, f, ms);

const procs: BridgeProc[] = [];
after(killBridges);

function startBridge(server: string, root: string, home: string, modelUrl: string, extra: string[] = []): Promise<BridgeProc> {
  return startBridgeProc(['--server', server, '--token', 'bridge-token', '--root', root, '--thread', THREAD, '--claude', CLAUDE_BIN, ...extra], {
    HOME: home,
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: 'test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  }).then((b) => (procs.push(b), b));
}

async function post(url: string, path: string, body: unknown, name: string, key?: string): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'roost-name': name };
  if (key) headers['idempotency-key'] = key;
  const r = await fetch(`${url}/fleet/${THREAD}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}

async function board(url: string): Promise<any> {
  return (await fetch(`${url}/fleet/${THREAD}`)).json();
}

async function sessionOf(url: string, id: string): Promise<any> {
  return (await board(url)).sessions.find((s: any) => s.id === id);
}

/** The thread's log folded as every reader folds it: each stored event and its chat line. */
async function history(roost: { store: { read(s: string, a: number, n: number): Promise<{ body: string }[]> } }) {
  let s = emptySessions();
  const out: { event: any; chat: { text: string } | null }[] = [];
  for (const e of await roost.store.read(`sessions:${THREAD}`, 0, 100_000)) {
    const event = JSON.parse(e.body);
    const r = applySessionEvent(s, event);
    s = r.state;
    out.push({ event, chat: r.chat });
  }
  return out;
}

/**
 * A proxy between the bridge and the server that can lose an answer (the
 * request reaches the server, the reply never reaches the bridge) and cut or
 * refuse the bridge's stream: a bad network on demand.
 */
async function flakyProxy(target: string) {
  const streams = new Set<ServerResponse>();
  const state = { dropAnswer: null as null | ((body: string) => boolean), dropped: 0, refuseStreams: false, streamOpens: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const isStream = req.url!.endsWith('/stream');
      if (isStream && state.refuseStreams) {
        res.writeHead(503).end();
        return;
      }
      if (isStream) state.streamOpens++;
      const drop = req.method === 'POST' && state.dropAnswer?.(body);
      if (drop) state.dropAnswer = null;
      // The proxy speaks to the server under the server's own name, as a reverse
      // proxy in front of a local server must (local mode answers only its Host).
      const up = request(target + req.url, { method: req.method, headers: { ...req.headers, host: new URL(target).host } }, (ur) => {
        if (drop) {
          ur.resume();
          ur.on('end', () => {
            state.dropped++;
            res.socket?.destroy();
          });
          return;
        }
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
        if (isStream) {
          streams.add(res);
          res.on('close', () => streams.delete(res));
        }
      });
      up.on('error', () => res.socket?.destroy());
      res.on('close', () => up.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    state,
    openStreams: () => streams.size,
    cutStreams(): number {
      const n = streams.size;
      for (const r of streams) r.socket?.destroy();
      return n;
    },
    close: () => new Promise<void>((ok) => {
      server.closeAllConnections();
      server.close(() => ok());
    }),
  };
}

test('the bridge runs board sessions: worktree, turns, approvals, a lost connection, close, restart', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, bridgeBuilt(), 'a build (npm run build)')) return;
  const t0 = Date.now();

  // A repository with one commit, and a HOME of its own for Claude Code.
  const home = tempDir('roost-bridge-home-');
  const repo = shopRepo('roost-bridge-root-');

  const model = await modelStandin([
    step(text('Hi from the stand-in.'), asked('PROMPT-ONE')),
    step(toolUse('Bash', { command: 'echo note > note.txt && git add note.txt && git -c user.name=t -c user.email=t@example.com commit -qm "a note"', description: 'commit a note' }, 'toolu_commit'), and(asked('PROMPT-TWO'), not(hasResult('toolu_commit')))),
    // Streamed in pieces (as a model does): partial text is relayed while the answer grows, before its turn.
    step({ ...text('Committed the note.'), pieces: { count: 4, everyMs: 200 } }, hasResult('toolu_commit')),
    step({ ...text('Third answer, late.'), delayMs: 2500 }, asked('PROMPT-THREE')),
    step(text('Fourth answer.'), asked('PROMPT-FOUR')),
    step(toolUse('Bash', { command: 'echo never > never.txt', description: 'unanswered' }, 'toolu_late'), and(asked('PROMPT-FIVE'), not(hasResult('toolu_late')))),
    step(text('Understood, not run.'), hasResult('toolu_late')),
    step(text('Back again.'), asked('PROMPT-SIX')),
  ]);
  const port = await freePort();
  const dataDir = tempDir();
  let roost = await inProcess({ port }, dataDir);
  const url = roost.url;
  const net = await flakyProxy(url);
  try {
    let bridge = await startBridge(net.url, repo, home, model.url, ['--window', '30s']);

    // A request outside the bridge's root is refused, on the thread's stream.
    const bad = await post(url, '/requests', { type: 'request.start', id: 'bad-1', session: 'escape', root: '../..' }, 'Paul');
    assert.equal(bad.status, 200);
    await until('the refusal', async () => (await history(roost)).find((h) => h.event.type === 'request.refused' && h.event.id === 'bad-1'));
    assert.equal(await sessionOf(url, 'bad-1'), undefined, 'nothing started');

    // ---- start a scoped session from the API
    const started = await post(url, '/requests', { type: 'request.start', id: 's1', session: 'fix-login', flavor: 'scoped' }, 'Paul', 'start-s1');
    assert.equal(started.status, 200);
    assert.equal(started.json.id, 's1');
    const again = await post(url, '/requests', { type: 'request.start', id: 's1', session: 'fix-login', flavor: 'scoped' }, 'Paul', 'start-s1');
    assert.equal(again.json.duplicate, true, 'a retried start request is recognised by its key');
    const s1 = await until('s1 on the board, ready', async () => {
      const s = await sessionOf(url, 's1');
      return s?.state === 'idle' ? s : undefined;
    });
    assert.equal(s1.name, 'fix-login');
    assert.equal(s1.flavor, 'scoped');
    assert.equal(s1.by, 'Paul', 'the spawn names who asked');
    const wt = join(repo, '.roost-bridge', 'worktrees', 's1');
    assert.ok(existsSync(join(wt, 'README.md')), 'the session has its own worktree');
    assert.equal(git(wt, 'rev-parse', '--abbrev-ref', 'HEAD'), 'roost/s1');
    assert.equal(git(repo, 'status', '--porcelain'), '', 'the bridge’s folder stays out of the root’s git status');

    // ---- a prompt: a turn on the board, lines in the chat
    assert.equal((await post(url, '', { type: 'session.prompt', id: 's1', text: 'PROMPT-ONE say hi' }, 'Paul')).status, 200);
    await until('the first turn', async () => (await sessionOf(url, 's1'))?.result);
    let s = await sessionOf(url, 's1');
    assert.equal(s.prompts, 1);
    assert.equal(s.turns, 1);
    assert.match(s.result, /^done in /);
    const first = model.scripted().find((r) => lastAsk(r).includes('PROMPT-ONE'))!;
    assert.ok(JSON.stringify(first.body.system ?? '').includes(wt), 'Claude Code ran in the worktree');
    const chat = (await history(roost)).filter((h) => h.chat).map((h) => `${h.event.name}: ${h.chat!.text}`);
    assert.deepEqual(chat.slice(0, 3), ['Claude: started session “fix-login” on ' + repo.replace(home, '~'), 'Paul: asked fix-login: “PROMPT-ONE say hi”', 'Claude: [fix-login] Hi from the stand-in.']);

    // ---- a tool call waits; Ana allows, Bob's later deny changes nothing
    const sse = await openSse(`${url}/fleet/${THREAD}/stream`);
    assert.equal((await post(url, '', { type: 'session.prompt', id: 's1', text: 'PROMPT-TWO commit a note' }, 'Ana')).status, 200);
    const pending = await until('a pending approval', async () => {
      const x = await sessionOf(url, 's1');
      return x?.approvals.find((a: any) => a.state === 'pending');
    });
    assert.equal(pending.tool, 'Bash');
    assert.match(pending.digest, /git .*commit/);
    assert.equal((await sessionOf(url, 's1')).state, 'waiting');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(existsSync(join(wt, 'note.txt')), false, 'nothing runs before a decision');
    // The request is an approval of kind fleet in the one model, held by the bridge; Ana decides it through the one endpoint.
    const one = ((await (await fetch(`${url}/approvals`)).json()) as { pending: any[] }).pending.find((a) => a.kind === 'fleet' && a.scope.rid === pending.rid);
    assert.deepEqual([one?.scope.thread, one?.scope.session, one?.tool], [THREAD, 's1', 'Bash']);
    assert.match(one.holder, /^bridge:/, 'held by the bridge that follows the board');
    const allowed = await fetch(`${url}/approvals/${one.id}/decision`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'allow', by: 'Ana' }) });
    assert.equal(allowed.status, 200);
    const late = await post(url, '', { type: 'session.approval', id: 's1', rid: pending.rid, state: 'denied' }, 'Bob');
    assert.equal(late.status, 409, 'the first decision wins, whichever path the second takes');
    await until('the turn after the tool', async () => (await sessionOf(url, 's1'))?.turns === 3);
    s = await sessionOf(url, 's1');
    assert.deepEqual(s.approvals, [{ rid: pending.rid, tool: 'Bash', digest: pending.digest, state: 'allowed', by: 'Ana' }]);
    assert.equal(git(repo, 'log', '-1', '--format=%s', 'roost/s1'), 'a note', 'the allowed command ran and committed on the session’s branch');
    const result = model.requests.flatMap(toolResults).find((r) => r.tool_use_id === 'toolu_commit');
    assert.equal(result?.is_error, false);
    // Live tool frames ride the lossy channel: no id, never in the log.
    const liveFrame = await sse.waitFor((f) => f.event === 'live' && JSON.parse(f.data).tool === 'Bash');
    assert.equal(liveFrame.id, undefined);
    const partial = await sse.waitFor((f) => f.event === 'live' && JSON.parse(f.data).type === 'session.stream' && JSON.parse(f.data).text.startsWith('Comm'));
    assert.equal(partial.id, undefined, 'partial text rides the lossy channel too');
    assert.equal((await history(roost)).some((h) => ['session.tool', 'session.stream'].includes(h.event.type)), false);
    sse.close();

    // ---- the connection drops mid-turn (the server restarts): no turn lost or duplicated
    assert.equal((await post(url, '', { type: 'session.prompt', id: 's1', text: 'PROMPT-THREE take your time' }, 'Paul')).status, 200);
    await until('the model to get the third prompt', () => model.requests.some((r) => lastAsk(r).includes('PROMPT-THREE')));
    await roost.close(); // every connection cut; the turn completes while the server is away
    await new Promise((r) => setTimeout(r, 3500));
    roost = await inProcess({ port }, dataDir);
    await until('the late turn after the restart', async () => (await sessionOf(url, 's1'))?.turns === 4);
    // The bridge's stream is cut and refused while a member prompts: the
    // prompt arrives by replay once it reconnects. The answer to its turn post
    // is lost on the way back: the retry carries the same key, stored once.
    await until('the bridge back on its stream', () => net.openStreams() === 1);
    net.state.refuseStreams = true;
    assert.equal(net.cutStreams(), 1);
    const opens = net.state.streamOpens;
    assert.equal((await post(url, '', { type: 'session.prompt', id: 's1', text: 'PROMPT-FOUR still there?' }, 'Paul')).status, 200);
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(model.requests.some((r) => lastAsk(r).includes('PROMPT-FOUR')), false, 'the bridge is cut off: the prompt waits');
    net.state.dropAnswer = (body) => body.includes('"session.turn"');
    net.state.refuseStreams = false;
    await until('the fourth answer', async () => (await sessionOf(url, 's1'))?.turns === 5);
    assert.ok(net.state.streamOpens > opens, 'the bridge reconnected');
    assert.equal(net.state.dropped, 1, 'one turn post lost its answer and was retried');
    await new Promise((r) => setTimeout(r, 500));
    const h = await history(roost);
    const turnLines = h.filter((x) => x.event.type === 'session.turn' && x.chat).map((x) => x.chat!.text);
    assert.deepEqual(turnLines, ['[fix-login] Hi from the stand-in.', '[fix-login] Committed the note.', '[fix-login] Third answer, late.', '[fix-login] Fourth answer.']);
    assert.equal(h.filter((x) => x.event.type === 'session.turn').length, 5, 'five turns stored once each (one of them tool calls only)');

    // ---- close: the process ends, the worktree goes, the committed branch stays
    assert.equal((await post(url, '', { type: 'session.end', id: 's1', reason: 'closed' }, 'Paul')).status, 200);
    await until('the worktree removed', () => !existsSync(wt));
    assert.equal(git(repo, 'log', '-1', '--format=%s', 'roost/s1'), 'a note', 'the branch and its commit survive');
    s = await sessionOf(url, 's1');
    assert.equal(s.state, 'ended');
    assert.equal(s.reason, 'closed');
    const zombie = await post(url, '', { type: 'session.status', id: 's1', state: 'running', activity: 'zombie' }, 'Claude');
    assert.equal(zombie.status, 409);
    assert.deepEqual(await sessionOf(url, 's1'), s, 'a status frame after the end changes nothing');

    // ---- restart the bridge (killed, not stopped): what it ran is ended with a reason
    assert.equal((await post(url, '/requests', { type: 'request.start', id: 's2', session: 'ops', flavor: 'scoped' }, 'Bob')).status, 200);
    await until('s2 ready', async () => (await sessionOf(url, 's2'))?.state === 'idle');
    assert.ok(existsSync(join(repo, '.roost-bridge', 'worktrees', 's2')));
    await bridge.stop('SIGKILL');
    bridge = await startBridge(url, repo, home, model.url, ['--window', '2s']);
    s = await sessionOf(url, 's2');
    assert.equal(s.state, 'ended');
    assert.equal(s.reason, 'bridge restarted');
    assert.equal(existsSync(join(repo, '.roost-bridge', 'worktrees', 's2')), false, 'the leftover worktree is removed');
    assert.equal((await history(roost)).filter((x) => x.event.type === 'session.spawn').length, 2, 'replayed start requests are not run twice');

    // ---- nobody answers within the window: denied, and the board says so
    assert.equal((await post(url, '/requests', { type: 'request.start', id: 's3', session: 'quiet', flavor: 'plain' }, 'Paul')).status, 200);
    await until('s3 ready', async () => (await sessionOf(url, 's3'))?.state === 'idle');
    assert.equal((await post(url, '', { type: 'session.prompt', id: 's3', text: 'PROMPT-FIVE write never' }, 'Paul')).status, 200);
    await until('the answer after the denial', async () => (await sessionOf(url, 's3'))?.result);
    s = await sessionOf(url, 's3');
    assert.equal(s.approvals[0].state, 'denied');
    assert.equal(s.approvals[0].by, 'Claude');
    const closed = ((await (await fetch(`${url}/approvals?recent=100`)).json()) as { recent: any[] }).recent.find((a) => a.kind === 'fleet' && a.scope.rid === s.approvals[0].rid);
    assert.deepEqual([closed?.status, closed?.decidedBy], ['withdrawn', ''], "the bridge's own window denial: nobody decided");
    assert.equal(existsSync(join(repo, 'never.txt')), false, 'the unanswered command did not run');
    // s3's start came after the replayed ones on the stream, and frames are handled in order:
    // by now the restarted bridge has seen the replay, and ran none of it again.
    assert.deepEqual((await history(roost)).filter((x) => x.event.type === 'session.spawn').map((x) => x.event.id), ['s1', 's2', 's3'], 'replayed start requests are not run twice');
    const denied = model.requests.flatMap(toolResults).find((r) => r.tool_use_id === 'toolu_late');
    assert.equal(denied?.is_error, true);
    assert.match(denied.content, /No decision in Roost within 2s: denied/);

    // The session's process dies: the board says so; the next prompt resumes the conversation.
    const pid = bridge.proc.pid!;
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
    assert.equal(kids.length, 1, 'one Claude Code process: s3');
    process.kill(kids[0], 'SIGKILL');
    s = await until('s3 dead', async () => {
      const x = await sessionOf(url, 's3');
      return x?.state === 'dead' ? x : undefined;
    });
    assert.match(s.activity, /claude exited/);
    const turnsBefore = s.turns;
    assert.equal((await post(url, '', { type: 'session.prompt', id: 's3', text: 'PROMPT-SIX are you back?' }, 'Paul')).status, 200);
    await until('a turn after the restart', async () => (await sessionOf(url, 's3'))?.turns === turnsBefore + 1);
    const resumed = model.scripted().find((r) => lastAsk(r).includes('PROMPT-SIX'))!;
    assert.ok(JSON.stringify(resumed.body.messages).includes('PROMPT-FIVE'), 'the restarted process resumed the conversation');

    // A clean stop ends what it runs.
    await bridge.stop('SIGTERM');
    assert.equal((await sessionOf(url, 's3')).reason, 'bridge stopped');
    t.diagnostic(`bridge flow took ${Date.now() - t0} ms`);
  } catch (e) {
    // What the bridges said, to tell a bridge bug from a test bug.
    for (const p of procs) console.error(p.log());
    throw e;
  } finally {
    await roost.close().catch(() => undefined);
    await net.close();
    await model.close();
  }
});

// Approvals and hooks through the HTTP API (no agent CLI needed): the hook
// endpoint holds a tool call until a decision, the window or a vanished hook;
// decisions are first-wins (409 after), unknown ids 404; the audit trail
// survives a restart; the live stream; the command hook fails closed; and the
// observation path answers fast.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inProcess, tempDir, freePort } from './support/server.js';
import { until as waitUntil } from './support/until.js';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { Router } from '../src/server/http.js';
import { endReporter, spooled } from './support/hook-spool.js';
import { pendingOf as pending } from './support/approvals-http.js';
import { KEEP_CLOSED, REMEMBER_FORGOTTEN } from '../src/core/approvals.js';
import { approvalsStream } from '../src/server/approvals.js';

const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-code');
const fixture = (p: string) => JSON.parse(readFileSync(join(FIX, p), 'utf8'));
const PRE_BASH = fixture('hooks-real-2.1.197/09-PreToolUse-Bash.json');
const HOOK = join(PACKAGE_ROOT, 'bin', 'roost-hook.js');

async function postJson(url: string, body: unknown, signal?: AbortSignal): Promise<{ status: number; json: any }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null };
}


const until = <T>(what: string, f: () => Promise<T | undefined>, ms = 10_000) => waitUntil<T>(what, f, ms, 25);

test('a held tool call: pending in the inbox and waiting on the floor, then allowed; 409 for a second decision, 404 for an unknown id', async () => {
  const roost = await inProcess();
  try {
    const held = postJson(`${roost.url}/hooks/claude-code?approvals=Bash&window=60000&hold=1&team=Shop`, PRE_BASH);
    const [p] = await until('the held call pending', async () => {
      const l = await pending(roost.url);
      return l.length ? l : undefined;
    });
    assert.equal(p.tool, 'Bash');
    assert.equal(p.input, '$ exit 3');
    assert.equal(p.kind, 'tool');
    assert.equal(p.asker, 'claude-code:af2cb417-a638-4c48-b638-61268d8fb949');
    assert.equal(p.team, 'Shop');
    assert.equal(p.window, 60_000);
    const agent = await until('the agent waiting on the floor', async () => (roost.floor.state.agents.get(p.asker)?.status === 'waiting' ? roost.floor.state.agents.get(p.asker) : undefined));
    assert.match(agent.activity, /^Waiting for approval: Bash: \$ exit 3/);

    assert.equal((await postJson(`${roost.url}/approvals/nope/decision`, { decision: 'allow' })).status, 404);
    const bad = await postJson(`${roost.url}/approvals/${p.id}/decision`, { decision: 'yes' });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.kind, 'bad_request');
    const ok = await postJson(`${roost.url}/approvals/${p.id}/decision`, { decision: 'allow', by: 'alice' });
    assert.equal(ok.status, 200);
    const second = await postJson(`${roost.url}/approvals/${p.id}/decision`, { decision: 'deny' });
    assert.equal(second.status, 409);
    assert.equal(second.json.kind, 'conflict');
    assert.match(second.json.message, /already allowed by alice/);

    const answer = await held;
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.json, { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'Allowed in Roost by alice' } });
    assert.equal(roost.floor.state.agents.get(p.asker)!.status, 'working', 'back to work once allowed');
    const list = (await (await fetch(roost.url + '/approvals')).json());
    assert.deepEqual(list.pending, []);
    assert.equal(list.recent[0].status, 'allowed');
    assert.equal((await (await fetch(`${roost.url}/approvals/${p.id}`)).json()).decidedBy, 'alice');
  } finally {
    await roost.close();
  }
});

test('tools outside the rules are not held; the observation hook leaves a held call to the command hook', async () => {
  const roost = await inProcess();
  try {
    const read = { ...PRE_BASH, tool_name: 'Read', tool_input: { file_path: '/w/a.ts' } };
    const r = await postJson(`${roost.url}/hooks/claude-code?approvals=Bash`, read);
    assert.deepEqual(r.json, {}, 'no decision: Claude Code’s own flow goes on');
    assert.equal(roost.floor.state.agents.get('claude-code:af2cb417-a638-4c48-b638-61268d8fb949')!.activity, 'Read: read /w/a.ts');
    const obs = await postJson(`${roost.url}/hooks/claude-code?approvals=Bash`, PRE_BASH);
    assert.deepEqual(obs.json, {});
    assert.deepEqual(await pending(roost.url), [], 'the http observation hook never creates an approval');
    assert.equal((await postJson(`${roost.url}/hooks/vscode`, PRE_BASH)).status, 404);
    assert.equal((await postJson(`${roost.url}/hooks/claude-code`, [1, 2])).status, 400);
  } finally {
    await roost.close();
  }
});

test('unanswered within the window: denied with a reason, and the expiry is in the log', async () => {
  const roost = await inProcess();
  try {
    const t0 = Date.now();
    const r = await postJson(`${roost.url}/hooks/claude-code?approvals=all&window=1200&hold=1`, PRE_BASH);
    assert.ok(Date.now() - t0 >= 1100);
    assert.equal(r.json.hookSpecificOutput.permissionDecision, 'deny');
    assert.match(r.json.hookSpecificOutput.permissionDecisionReason, /No decision in Roost within 1200ms: denied/);
    const types = (await roost.store.read('approvals', 0)).map((e) => e.type);
    assert.deepEqual(types, ['approval.requested', 'approval.expired']);
  } finally {
    await roost.close();
  }
});

test('a hook that goes away withdraws its request; other tools answer in their own shape', async () => {
  const roost = await inProcess();
  try {
    const ac = new AbortController();
    const held = postJson(`${roost.url}/hooks/claude-code?approvals=all&window=60000&hold=1`, PRE_BASH, ac.signal).catch(() => null);
    const [p] = await until('the held call pending', async () => {
      const l = await pending(roost.url);
      return l.length ? l : undefined;
    });
    ac.abort();
    await held;
    await until('the request withdrawn', async () => ((await pending(roost.url)).length === 0 ? true : undefined));
    assert.equal((await postJson(`${roost.url}/approvals/${p.id}/decision`, { decision: 'allow' })).status, 409, 'nobody waits: too late to decide');

    const cursor = postJson(`${roost.url}/hooks/cursor?approvals=Bash&window=60000&hold=1`, fixture('hooks-doc-examples/cursor/beforeShellExecution.json'));
    const [c] = await until('the Cursor call pending', async () => {
      const l = await pending(roost.url);
      return l.length ? l : undefined;
    });
    assert.equal(c.source, 'cursor');
    await postJson(`${roost.url}/approvals/${c.id}/decision`, { decision: 'deny', by: 'bob', reason: 'not on main' });
    assert.deepEqual((await cursor).json, { permission: 'deny', user_message: 'Denied in Roost by bob: not on main', agent_message: 'Denied in Roost by bob: not on main' });
  } finally {
    await roost.close();
  }
});

test('the audit trail survives a restart; a request pending across it is withdrawn once no node holds its hook', async () => {
  const dataDir = tempDir();
  let roost = await inProcess({}, dataDir);
  const held = postJson(`${roost.url}/hooks/claude-code?approvals=all&window=60000&hold=1`, PRE_BASH);
  const [p] = await until('the held call pending', async () => {
    const l = await pending(roost.url);
    return l.length ? l : undefined;
  });
  await postJson(`${roost.url}/approvals/${p.id}/decision`, { decision: 'deny', by: 'carol' });
  await held;
  const orphan = postJson(`${roost.url}/hooks/claude-code?approvals=all&window=60000&hold=1`, { ...PRE_BASH, tool_use_id: 'toolu_9' }).catch(() => null);
  const [o] = await until('the orphan pending', async () => {
    const l = await pending(roost.url);
    return l.length === 1 ? l : undefined;
  });
  // A crash: the store closes first, so the hook's connection breaks with nothing written about it.
  await roost.store.close().catch(() => {});
  roost.server.closeAllConnections();
  await roost.close().catch(() => {});
  await orphan;
  const t0 = Date.now();
  roost = await inProcess({ holderGraceMs: 800 }, dataDir);
  try {
    const list = (await (await fetch(roost.url + '/approvals')).json());
    const old = list.recent.find((a: any) => a.id === p.id);
    assert.equal(old.status, 'denied');
    assert.equal(old.decidedBy, 'carol');
    assert.equal(list.pending[0]?.id, o.id, 'still pending just after the start: another node might hold it');
    await until('the orphan withdrawn', async () => ((await pending(roost.url)).length === 0 ? true : undefined), 5000);
    const ms = Date.now() - t0;
    const a = (await (await fetch(`${roost.url}/approvals/${o.id}`)).json());
    assert.equal(a.status, 'withdrawn');
    assert.match(a.reason, /no longer held by any Roost node/);
    assert.ok(ms >= 700 && ms < 3000, `withdrawn after the grace (${ms} ms)`);
  } finally {
    await roost.close();
  }
});

test('right after a restart, a decision for a request whose hook is gone waits out the grace and is refused (409)', async () => {
  const dataDir = tempDir();
  let roost = await inProcess({}, dataDir);
  const orphan = postJson(`${roost.url}/hooks/claude-code?approvals=all&window=60000&hold=1`, PRE_BASH).catch(() => null);
  const [o] = await until('the request pending', async () => {
    const l = await pending(roost.url);
    return l.length ? l : undefined;
  });
  await roost.store.close().catch(() => {});
  roost.server.closeAllConnections();
  await roost.close().catch(() => {});
  await orphan;
  roost = await inProcess({ holderGraceMs: 1500 }, dataDir);
  try {
    const t0 = Date.now();
    const late = await postJson(`${roost.url}/approvals/${o.id}/decision`, { decision: 'allow' });
    assert.equal(late.status, 409);
    assert.match(late.json.message, /already withdrawn/);
    assert.ok(Date.now() - t0 < 2500, 'answered once the grace was over');
  } finally {
    await roost.close();
  }
});

test('a hook’s report of a denial made on its own: creates the request closed as withdrawn, once; a later decision is 409', async () => {
  const roost = await inProcess();
  try {
    const key = 'k' + 'a'.repeat(31);
    const r = await postJson(`${roost.url}/hooks/claude-code/denied?request=${key}&at=1700000000000&team=Shop`, PRE_BASH);
    assert.equal(r.status, 200);
    assert.equal(r.json.status, 'withdrawn');
    const a = (await (await fetch(`${roost.url}/approvals/${r.json.id}`)).json());
    assert.equal(a.kind, 'tool');
    assert.equal(a.input, '$ exit 3');
    assert.equal(a.team, 'Shop');
    assert.match(a.reason, /denied it on its own at 2023-11-14T22:13:20.000Z: Roost could not be reached/);
    const again = await postJson(`${roost.url}/hooks/claude-code/denied?request=${key}`, PRE_BASH);
    assert.equal(again.json.id, r.json.id, 'the same report twice names the same request');
    assert.equal((await roost.store.read('approvals', 0)).length, 2, 'stored once: the request and its withdrawal');
    assert.equal((await postJson(`${roost.url}/approvals/${r.json.id}/decision`, { decision: 'allow' })).status, 409);
    assert.equal((await postJson(`${roost.url}/hooks/claude-code/denied`, PRE_BASH)).status, 400, 'the key is required');
    assert.equal((await postJson(`${roost.url}/hooks/claude-code/denied?request=short`, PRE_BASH)).status, 400);
    // A hook that held a request through this server and lost its connection reports the same request.
    const key2 = 'k' + 'b'.repeat(31);
    const ac = new AbortController();
    const held = postJson(`${roost.url}/hooks/claude-code?approvals=all&window=60000&hold=1&request=${key2}`, { ...PRE_BASH, tool_use_id: 'toolu_2' }, ac.signal).catch(() => null);
    const [p] = await until('the held call pending', async () => {
      const l = await pending(roost.url);
      return l.length ? l : undefined;
    });
    const rep = await postJson(`${roost.url}/hooks/claude-code/denied?request=${key2}`, { ...PRE_BASH, tool_use_id: 'toolu_2' });
    assert.equal(rep.json.id, p.id);
    assert.equal(rep.json.status, 'withdrawn');
    ac.abort();
    await held;
  } finally {
    await roost.close();
  }
});

test('the live stream: a snapshot, then each request and decision as it happens', async () => {
  const roost = await inProcess();
  try {
    const ac = new AbortController();
    const res = await fetch(roost.url + '/approvals/stream', { signal: ac.signal });
    const reader = res.body!.getReader();
    let buf = '';
    const frames: { event: string; data: any }[] = [];
    const next = async (n: number) => {
      while (frames.length < n) {
        const { value } = await reader.read();
        buf += new TextDecoder().decode(value);
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const raw = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const ev = /^event: (.*)$/m.exec(raw)?.[1];
          const data = /^data: (.*)$/m.exec(raw)?.[1];
          if (ev && data) frames.push({ event: ev, data: JSON.parse(data) });
        }
      }
    };
    await next(1);
    assert.equal(frames[0].event, 'snapshot');
    assert.deepEqual(frames[0].data.state.approvals, []);
    const held = postJson(`${roost.url}/hooks/claude-code?approvals=all&window=60000&hold=1`, PRE_BASH);
    await next(2);
    assert.equal(frames[1].data.event.type, 'approval.requested');
    await postJson(`${roost.url}/approvals/${frames[1].data.event.id}/decision`, { decision: 'allow' });
    await next(3);
    assert.equal(frames[2].data.event.type, 'approval.decided');
    assert.deepEqual(frames[2].data.effects, [{ kind: 'closed', id: frames[1].data.event.id, status: 'allowed' }]);
    await held;
    ac.abort();
  } finally {
    await roost.close();
  }
});

/** Where the hooks these tests run keep their reports (never the user's own folder). */
const SPOOL = join(tempDir('roost-hook-spool-'), 'reports');

function runHook(args: string[], stdin: string): Promise<{ out: string; ms: number; code: number | null }> {
  const t0 = performance.now();
  return new Promise((ok) => {
    const c = spawn(process.execPath, [HOOK, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ROOST_HOOK_SPOOL: SPOOL } });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('exit', (code) => ok({ out, code, ms: performance.now() - t0 }));
    c.stdin.end(stdin);
  });
}

test('the command hook: deny when approvals are required and the server is away; never blocks otherwise', async () => {
  const dead = `http://127.0.0.1:${await freePort()}`;
  const deny = await runHook(['claude-code', '--server', dead, '--approvals', 'Bash', '--window', '10m', '--skip-observe'], JSON.stringify(PRE_BASH));
  assert.equal(deny.code, 0);
  const a = JSON.parse(deny.out);
  assert.equal(a.hookSpecificOutput.permissionDecision, 'deny');
  assert.match(a.hookSpecificOutput.permissionDecisionReason, /could not be reached \(ECONNREFUSED\): denied because approvals are required/);
  // A tool outside the rules: no answer at all (Claude Code's own flow), at once.
  const free = await runHook(['claude-code', '--server', dead, '--approvals', 'Bash', '--skip-observe'], JSON.stringify({ ...PRE_BASH, tool_name: 'Read' }));
  assert.equal(free.out, '');
  const observe = await runHook(['claude-code', '--server', dead, '--observe'], JSON.stringify(fixture('hooks-real-2.1.197/01-SessionStart.json')));
  assert.equal(observe.out, '');
  assert.equal(observe.code, 0);
  // A payload it cannot read, with approvals on: deny, not a guess.
  const garbled = await runHook(['claude-code', '--server', dead, '--approvals', 'Bash', '--skip-observe'], '{"hook_event_name": "PreToo');
  assert.match(JSON.parse(garbled.out).hookSpecificOutput.permissionDecisionReason, /could not read the hook payload/);
  // Gemini CLI and Cursor get their own deny shapes.
  const gem = await runHook(['gemini-cli', '--server', dead, '--approvals', 'all'], JSON.stringify({ hook_event_name: 'BeforeTool', session_id: 'g', tool_name: 'run_shell_command', tool_input: { command: 'ls' } }));
  assert.equal(JSON.parse(gem.out).decision, 'deny');
  const cur = await runHook(['cursor', '--server', dead, '--approvals', 'Bash'], JSON.stringify(fixture('hooks-doc-examples/cursor/beforeShellExecution.json')));
  assert.equal(JSON.parse(cur.out).permission, 'deny');
  // The server answering with an error also denies.
  const roost = await inProcess();
  try {
    const broken = await runHook(['claude-code', '--server', roost.url + '/nowhere', '--approvals', 'Bash', '--skip-observe'], JSON.stringify(PRE_BASH));
    assert.equal(JSON.parse(broken.out).hookSpecificOutput.permissionDecision, 'deny');
  } finally {
    await roost.close();
  }
  // The denials made for want of a server wait to be reported (the refusal by a live server does not).
  assert.equal(spooled(SPOOL).length, 3, 'Claude Code, Gemini CLI and Cursor calls denied with no server');
  endReporter(SPOOL);
  console.log(`# command hook, server unreachable: deny in ${deny.ms.toFixed(0)} ms; no-approval exit in ${free.ms.toFixed(0)} ms; observe in ${observe.ms.toFixed(0)} ms (node start included)`);
});

test('observation hooks are answered without holding: 200 calls of a tool outside the rules each get {} at once', async () => {
  const roost = await inProcess();
  try {
    const payloads = readFileSync(join(FIX, 'hooks-real-2.1.197', '05-PreToolUse-Bash-subagent.json'), 'utf8');
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      const r = await fetch(`${roost.url}/hooks/claude-code`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payloads });
      assert.equal(r.status, 200);
      assert.deepEqual(await r.json(), {}, 'an observation is answered with nothing to decide');
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    // Timing targets live in the bench (bench row "hooks"), not here: this machine may be busy.
    console.log(`# http observation hook: p50 ${times[100].toFixed(1)} ms, p99 ${times[198].toFixed(1)} ms, max ${times[199].toFixed(1)} ms (durable append included)`);
    assert.deepEqual(await pending(roost.url), [], 'nothing was held');
    assert.ok(roost.floor.state.agents.size > 0, 'each call reached the floor');
  } finally {
    await roost.close();
  }
});

test('router: `:name` segments match one segment, decoded; exact routes win', async () => {
  const hits: string[] = [];
  const r = new Router()
    .on('GET', '/approvals/stream', () => void hits.push('exact'))
    .on('GET', '/approvals/:id', (_q, res, _u, p) => {
      hits.push('id=' + p.id);
      res.end();
    })
    .on('POST', '/approvals/:id/decision', (_q, res, _u, p) => {
      hits.push('decide=' + p.id);
      res.end();
    });
  const fake = (method: string, url: string) => {
    let status = 0;
    const res: any = { headersSent: false, setHeader() {}, writeHead: (s: number) => ((status = s), res), end() {}, destroy() {} };
    r.handle({ method, url, resume() {}, headers: {} } as any, res);
    return status;
  };
  fake('GET', '/approvals/stream');
  fake('GET', '/approvals/ap%2F1');
  fake('POST', '/approvals/x1/decision');
  assert.deepEqual(hits, ['exact', 'id=ap/1', 'decide=x1']);
  assert.equal(fake('GET', '/approvals/x1/decision'), 405);
  assert.equal(fake('POST', '/approvals//decision'), 404);
  assert.equal(fake('GET', '/approvals/a/b/c'), 404);
});

test('ids stay unique: a retry naming a closed request gets its approval back, and one the state let go long ago a 409 (the store keeps its key), never a new request', async () => {
  const roost = await inProcess();
  try {
    const named = { id: 'hook-named-1', asker: 'claude-code:s1', askerName: 'Builder', source: 'test', tool: 'Bash', input: '$ ls' };
    const first = await roost.approvals.request(named);
    assert.equal(first.created, true);
    await roost.approvals.decide(first.approval.id, 'deny', 'me');
    const again = await roost.approvals.request(named);
    assert.equal(again.created, false);
    assert.equal(again.approval.status, 'denied');
    // Push it out of what the fold keeps and of the forgotten ids it remembers (closed requests written to the log in bulk).
    const filler: { type: string; body: string }[] = [];
    for (let i = 0; i < KEEP_CLOSED + REMEMBER_FORGOTTEN + 5; i++) {
      const id = `filler-${i}`;
      filler.push({ type: 'approval.requested', body: JSON.stringify({ type: 'approval.requested', id, kind: 'tool', asker: 'a', tool: 'Bash', input: 'x', source: 'test', window: 60_000, ts: 1 }) });
      filler.push({ type: 'approval.decided', body: JSON.stringify({ type: 'approval.decided', id, decision: 'deny', by: 'me', ts: 2 }) });
    }
    let last = 0;
    for (let i = 0; i < filler.length; i += 2000) last = (await roost.store.append(approvalsStream('default'), filler.slice(i, i + 2000))).last;
    await until('the filler folded', async () => (roost.approvals.state.byId.has(`filler-${KEEP_CLOSED + REMEMBER_FORGOTTEN + 4}`) ? true : undefined));
    assert.ok(last > 0);
    assert.equal(roost.approvals.state.forgotten.has(named.id), false, 'the fold let it go');
    await assert.rejects(roost.approvals.request(named), (e: { status?: number }) => e.status === 409);
    assert.equal(roost.approvals.state.byId.has(named.id), false, 'no new request was opened');
  } finally {
    await roost.close();
  }
});

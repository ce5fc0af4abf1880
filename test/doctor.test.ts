// `roost doctor` (README, "roost doctor") against a machine of its own: a
// temporary HOME where `roost hooks install` put Claude Code's hooks (and
// Claude Code reported), and a Codex install whose hooks never reported while
// codex runs. The text a person reads, the JSON a script reads, and the exit
// code that says whether something needs fixing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inProcess, tempDir } from './support/server.js';
import { until } from './support/until.js';
import { client } from './support/work-server.js';

async function call(url: string, method: string, body: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}
import { PACKAGE_ROOT } from '../src/server/index.js';

const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-code');
const ROOST = join(PACKAGE_ROOT, 'bin', 'roost.js');

function roost(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  return new Promise((ok) => {
    execFile(process.execPath, [ROOST, ...args], { env: { ...env }, timeout: 60_000 }, (e, out, err) => ok({ code: e ? ((e as { code?: number }).code ?? 1) : 0, out, err }));
  });
}

test('roost doctor: Claude Code hooks installed and reporting, a Codex whose hooks never reported while it runs: text, --json and exit code 1; once codex stops, only advice and exit code 0', { timeout: 180_000 }, async () => {
  const server = await inProcess();
  const home = tempDir('roost-doctor-home-');
  const dir = tempDir('roost-doctor-project-');
  const bin = join(home, 'bin');
  mkdirSync(bin);
  // The real Claude Code CLI on PATH; a stand-in codex that answers --version and then runs on.
  symlinkSync(join(PACKAGE_ROOT, 'node_modules', '.bin', 'claude'), join(bin, 'claude'));
  writeFileSync(join(bin, 'codex'), `#!${process.execPath}\nif (process.argv[2] === '--version') { console.log('codex-cli 0.171.0'); process.exit(0); }\nsetInterval(() => {}, 1000);\n`);
  chmodSync(join(bin, 'codex'), 0o755);
  const env = { HOME: home, PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`, ROOST_SERVER: server.url };
  let codex: ReturnType<typeof spawn> | null = null;
  try {
    for (const tool of ['claude-code', 'codex']) {
      const r = await roost(['hooks', 'install', '--tool', tool, '--user'], env);
      assert.equal(r.code, 0, r.err);
    }
    // Claude Code reports (its SessionStart hook, as the real CLI sends it).
    const start = JSON.parse(readFileSync(join(FIX, 'hooks-real-2.1.197/01-SessionStart.json'), 'utf8'));
    const h = await fetch(server.url + '/hooks/claude-code', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(start) });
    assert.ok(h.ok, `hook accepted (${h.status})`);
    // Claude Code's hooks in the project too, with telemetry off: advice, no tokens or cost from there.
    assert.equal((await roost(['hooks', 'install', '--tool', 'claude-code', '--project', dir, '--no-telemetry'], env)).code, 0);
    // A bridge's Space in the project that reported its agent a moment ago, and one that never reported.
    const me = client(server.url, null);
    const lap = (await me.post('/api/v2/spaces', { name: 'lap' })).json.id;
    assert.equal((await me.post('/api/v2/projects/default/spaces', { space: lap })).status, 200);
    assert.equal((await me.post(`/api/v2/spaces/${lap}/agents`, { full: true, agents: [{ session: 'a1', origin: 'bridge' }] })).status, 200);
    assert.equal((await me.post('/api/v2/spaces', { name: 'desk' })).status, 200);
    // A team's day budget at 85%, the project's at 40%: one near its limit, one not.
    assert.equal((await call(server.url + '/usage/budgets', 'PUT', { scope: 'team', target: 'backend', period: 'day', usd: 1 })).status, 200);
    assert.equal((await call(server.url + '/usage/budget', 'PUT', { usd: 2.5 })).status, 200);
    await server.usage.record([{ key: 'doc-1', via: 'bridge', agent: 'claude-code:s-doc', session: 'claude-code:s-doc', team: 'backend', source: 'claude-code', model: 'claude-sonnet-4-5', input: 100, output: 10, cacheRead: 0, cacheWrite: 0, vendorUsd: 0.85, ts: Date.now() }]);
    codex = spawn(join(bin, 'codex'), [], { env, stdio: 'ignore' });
    await until('codex running', () => codex!.pid !== undefined, 10_000);

    const text = await roost(['doctor', '--project', dir], env);
    assert.equal(text.code, 1, `exit code 1: something needs fixing\n${text.out}${text.err}`);
    const out = text.out;
    assert.match(out, new RegExp(`^server +${server.url.replace(/[.]/g, '\\.')}: roost \\d+\\.\\d+\\.\\d+ \\(local mode, sqlite\\)`, 'm'));
    assert.match(out, /^Claude Code +\d+\.\d+\.\d+, not running$/m);
    assert.match(out, /^ {2}user +hooks installed in ~\/\.claude\/settings\.json → http:\/\/127\.0\.0\.1:\d+; approvals off; telemetry on$/m);
    assert.match(out, /^Codex +0\.171\.0, running \(1\)$/m);
    assert.match(out, /^ {2}user +hooks installed in ~\/\.codex\/hooks\.json → .*telemetry on$/m);
    assert.match(out, /^FAIL {2}Codex runs \(pid \d+\) but its hooks never reported$/m);
    assert.match(out, /open \/hooks in Codex/);
    assert.match(out, /^ {2}project +hooks installed in .*\/\.claude\/settings\.json → .*; telemetry off$/m);
    assert.match(out, /^warn {2}Claude Code's telemetry is off in .*\/\.claude\/settings\.json \(no tokens or cost\)$/m);
    assert.match(out, /^space +lap \(default\): last contact \d+ s ago$/m);
    assert.match(out, /^space +desk \(no project\): last contact never$/m);
    assert.match(out, /^warn {2}Space desk has reported no agent yet$/m);
    assert.doesNotMatch(out, /Space lap/, 'a Space that reported a moment ago is fine');
    assert.match(out, /^budget +default: 0\.85 \$ of 2\.50 \$ \(34%\)$/m);
    assert.match(out, /^warn {2}budget team:backend:day of project default: 0\.85 \$ of 1\.00 \$ today \(85%\)$/m);
    assert.match(out, /^1 to fix, \d+ to look at$/m);
    // Claude Code reported a moment ago.
    const claudeBlock = out.slice(out.indexOf('Claude Code'), out.indexOf('Codex'));
    assert.match(claudeBlock, /last report {2}\d+ s ago/);
    assert.doesNotMatch(out, /FAIL .*Claude Code/);

    const json = await roost(['doctor', '--json', '--project', dir], env);
    assert.equal(json.code, 1);
    const r = JSON.parse(json.out);
    assert.equal(r.ok, false);
    assert.equal(r.server.reachable, true);
    const claude = r.vendors.find((v: any) => v.tool === 'claude-code');
    const cx = r.vendors.find((v: any) => v.tool === 'codex');
    assert.equal(claude.hooks.find((x: any) => x.scope === 'user').installed, true);
    assert.equal(claude.hooks.find((x: any) => x.scope === 'project').installed, true);
    assert.equal(claude.hooks.find((x: any) => x.scope === 'project').telemetry, 'off');
    assert.equal(claude.hooks.find((x: any) => x.scope === 'user').telemetry, 'on');
    assert.deepEqual(
      r.spaces.map((x: any) => [x.name, x.projects, typeof x.lastContact]),
      [
        ['lap', ['default'], 'number'],
        ['desk', [], 'object'],
      ],
    );
    assert.ok(r.problems.some((p: any) => p.level === 'warn' && p.about === 'budget:default'), 'the near budget is advice');
    assert.equal(typeof claude.lastReport, 'number');
    assert.equal(cx.lastReport, null);
    assert.deepEqual(cx.cli.running, [codex.pid]);
    assert.equal(cx.cli.version, '0.171.0');
    assert.deepEqual(
      r.problems.filter((p: any) => p.level === 'fail').map((p: any) => p.about),
      ['codex'],
    );

    // Codex stops: what is left is advice (it never reported), exit code 0.
    codex.kill();
    await new Promise((ok) => codex!.once('exit', ok));
    codex = null;
    const calm = await roost(['doctor', '--project', dir], env);
    assert.equal(calm.code, 0, calm.out);
    assert.match(calm.out, /^warn {2}Codex's hooks are installed but it never reported/m);
    assert.match(calm.out, /^nothing to fix; \d+ to look at$/m);

    // The server down: that needs fixing.
    const gone = await roost(['doctor', '--server', 'http://127.0.0.1:9', '--project', dir], env);
    assert.equal(gone.code, 1);
    assert.match(gone.out, /NOT REACHABLE/);
  } finally {
    codex?.kill();
    await server.close();
  }
});

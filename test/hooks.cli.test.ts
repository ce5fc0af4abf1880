// `roost hooks install|uninstall|status` and `roost emit`, as a user runs them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { inProcess, tempDir } from './support/server.js';

const ROOST = join(PACKAGE_ROOT, 'bin', 'roost.js');

function roost(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  return new Promise((ok) => {
    execFile(process.execPath, [ROOST, ...args], { env: { ...process.env, ...env } }, (e, out, err) => ok({ code: e ? ((e as any).code ?? 1) : 0, out, err }));
  });
}

const USER_SETTINGS = {
  permissions: { allow: ['Bash(npm test)'] },
  hooks: {
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './scripts/check-bash.sh', timeout: 30 }] }],
    Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }],
  },
};

test('install merges with the user’s hooks, is idempotent, and uninstall takes out only Roost’s', async () => {
  const project = tempDir();
  mkdirSync(join(project, '.claude'));
  const path = join(project, '.claude', 'settings.json');
  writeFileSync(path, JSON.stringify(USER_SETTINGS, null, 2));

  const r1 = await roost(['hooks', 'install', '--project', project, '--server', 'http://127.0.0.1:5555']);
  assert.equal(r1.code, 0, r1.err);
  assert.match(r1.out, /approvals: off/);
  const once = readFileSync(path, 'utf8');
  const s = JSON.parse(once);
  assert.deepEqual(s.permissions, USER_SETTINGS.permissions, 'other settings untouched');
  assert.deepEqual(s.hooks.PreToolUse[0], USER_SETTINGS.hooks.PreToolUse[0], 'the user’s own hook stays first');
  assert.equal(s.hooks.PreToolUse[1].hooks[0].type, 'http');
  assert.equal(s.hooks.PreToolUse[1].hooks[0].url, 'http://127.0.0.1:5555/hooks/claude-code');
  assert.deepEqual(s.hooks.Stop[0], USER_SETTINGS.hooks.Stop[0]);
  assert.equal(s.hooks.SessionStart[0].hooks[0].type, 'command', 'SessionStart reaches command hooks only');
  assert.match(s.hooks.SessionStart[0].hooks[0].command, /roost-hook\.js claude-code --server http:\/\/127\.0\.0\.1:5555 --observe$/);
  for (const e of ['UserPromptSubmit', 'PostToolUse', 'PostToolUseFailure', 'Notification', 'SubagentStart', 'SubagentStop', 'SessionEnd']) assert.ok(s.hooks[e], e);

  await roost(['hooks', 'install', '--project', project, '--server', 'http://127.0.0.1:5555']);
  assert.equal(readFileSync(path, 'utf8'), once, 'installing twice changes nothing');

  // Re-install with approvals: updated in place, still one set.
  await roost(['hooks', 'install', '--project', project, '--server', 'http://127.0.0.1:5555', '--approvals', 'Edit|Write', '--window', '90s', '--team', 'Pay ments']);
  const a = JSON.parse(readFileSync(path, 'utf8'));
  const pre = a.hooks.PreToolUse;
  assert.equal(pre.length, 3, 'the user’s group, Roost’s observation group, Roost’s approval group');
  assert.equal(pre[2].matcher, 'Edit|Write');
  assert.equal(pre[2].hooks[0].timeout, 120, 'the hook timeout is the window plus a margin');
  assert.match(pre[2].hooks[0].command, /--team 'Pay ments' --skip-observe --approvals 'Edit\|Write' --window 90s$/);
  assert.equal(pre[1].hooks[0].url, 'http://127.0.0.1:5555/hooks/claude-code?team=Pay+ments&approvals=Edit%7CWrite&window=90000');

  const st = await roost(['hooks', 'status', '--project', project]);
  assert.match(st.out, /installed for claude-code/);
  assert.match(st.out, /approvals: Edit\|Write/);
  assert.match(st.out, /http:\/\/127\.0\.0\.1:5555 \(unreachable\)/);

  const un = await roost(['hooks', 'uninstall', '--project', project]);
  assert.match(un.out, /removed 15 roost hooks/);
  assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), USER_SETTINGS, 'back to exactly what the user had');
  assert.match((await roost(['hooks', 'status', '--project', project])).out, /not installed/);
  assert.match((await roost(['hooks', 'uninstall', '--project', project])).out, /no roost hooks/);
});

test('--user writes the user’s settings; a broken settings file is refused and left alone', async () => {
  const home = tempDir();
  const r = await roost(['hooks', 'install', '--user'], { HOME: home });
  assert.equal(r.code, 0, r.err);
  const s = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8'));
  assert.equal(s.hooks.Stop[0].hooks[0].url, 'http://127.0.0.1:4319/hooks/claude-code');

  const project = tempDir();
  mkdirSync(join(project, '.claude'));
  writeFileSync(join(project, '.claude', 'settings.json'), '{ "hooks": ');
  const bad = await roost(['hooks', 'install', '--project', project]);
  assert.notEqual(bad.code, 0);
  assert.match(bad.err, /not valid JSON.*Nothing was changed/);
  assert.equal(readFileSync(join(project, '.claude', 'settings.json'), 'utf8'), '{ "hooks": ');
  const badWindow = await roost(['hooks', 'install', '--project', project, '--window', 'soon']);
  assert.match(badWindow.err, /--window must be a duration/);
});

test('Codex, Gemini CLI and Cursor: their own files, command hooks, approvals where a hook may decide', async () => {
  const project = tempDir();
  for (const tool of ['codex', 'gemini-cli', 'cursor']) {
    const r = await roost(['hooks', 'install', '--tool', tool, '--project', project, '--approvals', 'all', '--window', '5m']);
    assert.equal(r.code, 0, r.err);
  }
  const codex = JSON.parse(readFileSync(join(project, '.codex', 'hooks.json'), 'utf8'));
  assert.match(codex.hooks.PermissionRequest[0].hooks[0].command, /roost-hook\.js codex .*--approvals all --window 5m/);
  assert.equal(codex.hooks.PermissionRequest[0].hooks[0].timeout, 330);
  const gem = JSON.parse(readFileSync(join(project, '.gemini', 'settings.json'), 'utf8'));
  assert.match(gem.hooks.BeforeTool[0].hooks[0].command, /roost-hook\.js gemini-cli .*--approvals all/);
  assert.equal(gem.hooks.BeforeTool[0].hooks[0].timeout, 330_000, 'Gemini CLI counts in milliseconds');
  const cur = JSON.parse(readFileSync(join(project, '.cursor', 'hooks.json'), 'utf8'));
  assert.equal(cur.version, 1);
  assert.match(cur.hooks.beforeShellExecution[0].command, /roost-hook\.js cursor .*--approvals all/);
  assert.match(cur.hooks.stop[0].command, /--observe$/);
  for (const tool of ['codex', 'gemini-cli', 'cursor']) await roost(['hooks', 'uninstall', '--tool', tool, '--project', project]);
  assert.deepEqual(JSON.parse(readFileSync(join(project, '.cursor', 'hooks.json'), 'utf8')), { version: 1 });
  assert.deepEqual(JSON.parse(readFileSync(join(project, '.codex', 'hooks.json'), 'utf8')), {});
  assert.equal(existsSync(join(project, '.claude')), false, 'nothing written for a tool not asked for');
});

test('roost emit: the common fields as flags, the rest as JSON, errors said plainly', async () => {
  const server = await inProcess();
  try {
    const r = await roost([
      'emit', '--server', server.url, '--type', 'tool', '--agent', 'bot-1', '--team', 'Payments', '--tool', 'Read',
      '--activity', 'Reading invoices', '--role', 'lead', '--json', '{"name":"Invoice Bot"}',
    ]);
    assert.equal(r.code, 0, r.err);
    const a = server.floor.state.agents.get('bot-1')!;
    assert.equal(a.name, 'Invoice Bot');
    assert.equal(a.role, 'lead');
    assert.equal(a.tool, 'Read');
    assert.equal(a.status, 'working');
    assert.equal(a.source, 'cli');
    assert.equal(server.floor.state.teams.get(a.team)!.name, 'Payments');
    await roost(['emit', '--server', server.url, '--type', 'tool', '--agent', 'bot-1', '--subagent', 'reviewer:k1', '--tool', 'Grep']);
    const helper = [...server.floor.state.agents.values()].find((x) => x.parent === 'bot-1')!;
    assert.equal(helper.role, 'reviewer');
    assert.equal(helper.tool, 'Grep');
    await roost(['emit', '--server', server.url, '--type', 'message', '--agent', 'bot-1', '--to', 'a, b', '--text', 'hi']);
    assert.ok(server.floor.state.agents.has('a') && server.floor.state.agents.has('b'));

    const badJson = await roost(['emit', '--server', server.url, '--agent', 'x', '--json', '{nope']);
    assert.notEqual(badJson.code, 0);
    assert.match(badJson.err, /--json is not valid JSON/);
    const badStatus = await roost(['emit', '--server', server.url, '--agent', 'x', '--status', 'sleeping']);
    assert.notEqual(badStatus.code, 0);
    assert.match(badStatus.err, /server said 400: "status" must be one of/);
  } finally {
    await server.close();
  }
});

test('shared mode: the token comes from an environment variable, is sent by every hook, and never lands in the file', async () => {
  const { createServer } = await import('node:http');
  const { spawn } = await import('node:child_process');
  const seen: (string | undefined)[] = [];
  const stub = createServer((req, res) => {
    seen.push(req.headers.authorization);
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((ok) => stub.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${(stub.address() as { port: number }).port}`;
  try {
    const project = tempDir();
    const r = await roost(['hooks', 'install', '--project', project, '--server', url, '--token-env', 'ROOST_TOKEN', '--approvals', 'Bash']);
    assert.equal(r.code, 0, r.err);
    const text = readFileSync(join(project, '.claude', 'settings.json'), 'utf8');
    const s = JSON.parse(text);
    assert.deepEqual(s.hooks.Stop[0].hooks[0].headers, { Authorization: 'Bearer $ROOST_TOKEN' });
    assert.deepEqual(s.hooks.Stop[0].hooks[0].allowedEnvVars, ['ROOST_TOKEN']);
    assert.match(s.hooks.SessionStart[0].hooks[0].command, /--token-env ROOST_TOKEN/);
    assert.match(s.hooks.PreToolUse[1].hooks[0].command, /--token-env ROOST_TOKEN/);
    // The command hook sends the variable's value as a bearer token.
    const cmd = s.hooks.SessionStart[0].hooks[0].command as string;
    await new Promise<void>((ok) => {
      const c = spawn('sh', ['-c', cmd], { env: { ...process.env, ROOST_TOKEN: 'tok_abc' }, stdio: ['pipe', 'ignore', 'ignore'] });
      c.on('exit', () => ok());
      c.stdin.end(JSON.stringify({ hook_event_name: 'SessionStart', session_id: 's1', cwd: '/w/x' }));
    });
    assert.deepEqual(seen, ['Bearer tok_abc']);
    assert.ok(!text.includes('tok_abc'));
    const bad = await roost(['hooks', 'install', '--project', project, '--token-env', 'not a name']);
    assert.match(bad.err, /--token-env must be an environment variable name/);
  } finally {
    stub.close();
  }
});

test('--mcp registers `roost mcp` with Claude Code, Codex and Gemini CLI, and uninstall takes out only that', async () => {
  const { parse } = await import('smol-toml');
  const project = tempDir();
  mkdirSync(join(project, '.claude'));
  const path = join(project, '.claude', 'settings.json');
  writeFileSync(path, JSON.stringify(USER_SETTINGS, null, 2));
  writeFileSync(join(project, '.mcp.json'), JSON.stringify({ mcpServers: { other: { command: 'other-mcp' } } }));
  const server = 'http://127.0.0.1:5555';
  const r = await roost(['hooks', 'install', '--project', project, '--server', server, '--mcp', '--team', 'shop', '--token-env', 'ROOST_TOKEN']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /mcp: roost registered in .*\.mcp\.json/);
  const mcpJson = JSON.parse(readFileSync(join(project, '.mcp.json'), 'utf8'));
  assert.deepEqual(mcpJson.mcpServers.other, { command: 'other-mcp' }, 'the project’s other server stays');
  assert.equal(mcpJson.mcpServers.roost.command, process.execPath);
  assert.deepEqual(mcpJson.mcpServers.roost.args, [ROOST, 'mcp', '--server', server, '--team', 'shop', '--token-env', 'ROOST_TOKEN']);
  const s = JSON.parse(readFileSync(path, 'utf8'));
  assert.deepEqual(s.enabledMcpjsonServers, ['roost'], 'loads without the project-servers prompt');
  assert.deepEqual(s.permissions.allow, ['Bash(npm test)', 'mcp__roost'], 'Roost’s tools run without a permission prompt');
  await roost(['hooks', 'install', '--project', project, '--server', server, '--mcp', '--team', 'shop', '--token-env', 'ROOST_TOKEN']);
  assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), s, 'installing twice changes nothing');
  const un = await roost(['hooks', 'uninstall', '--project', project]);
  assert.match(un.out, /mcp: roost unregistered/);
  assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), USER_SETTINGS, 'back to exactly what the user had');
  assert.deepEqual(JSON.parse(readFileSync(join(project, '.mcp.json'), 'utf8')), { mcpServers: { other: { command: 'other-mcp' } } });

  // A .mcp.json that held only Roost's server goes away with it; a `roost` server the person wrote is left alone.
  const p2 = tempDir();
  await roost(['hooks', 'install', '--project', p2, '--mcp']);
  assert.ok(existsSync(join(p2, '.mcp.json')));
  await roost(['hooks', 'uninstall', '--project', p2]);
  assert.equal(existsSync(join(p2, '.mcp.json')), false);
  writeFileSync(join(p2, '.mcp.json'), JSON.stringify({ mcpServers: { roost: { command: 'my-own-roost' } } }));
  const mine = await roost(['hooks', 'install', '--project', p2, '--mcp']);
  assert.match(mine.out, /mcp: left as it is/);
  assert.equal(JSON.parse(readFileSync(join(p2, '.mcp.json'), 'utf8')).mcpServers.roost.command, 'my-own-roost');
  assert.equal(JSON.parse(readFileSync(join(p2, '.claude', 'settings.json'), 'utf8')).enabledMcpjsonServers, undefined);

  // User scope: ~/.claude.json's mcpServers (Claude Code's user scope), the rest of that file kept.
  const home = tempDir();
  writeFileSync(join(home, '.claude.json'), JSON.stringify({ numStartups: 3, projects: {} }));
  await roost(['hooks', 'install', '--user', '--mcp'], { HOME: home });
  const cj = JSON.parse(readFileSync(join(home, '.claude.json'), 'utf8'));
  assert.equal(cj.numStartups, 3);
  assert.deepEqual(cj.mcpServers.roost.args.slice(1), ['mcp', '--server', 'http://127.0.0.1:4319']);
  assert.deepEqual(JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8')).permissions.allow, ['mcp__roost']);
  await roost(['hooks', 'uninstall', '--user'], { HOME: home });
  assert.deepEqual(JSON.parse(readFileSync(join(home, '.claude.json'), 'utf8')), { numStartups: 3, projects: {} });

  // Codex: [mcp_servers.roost] between Roost's markers, beside the [otel] block; Gemini CLI: mcpServers.roost.
  const p3 = tempDir();
  mkdirSync(join(p3, '.codex'));
  writeFileSync(join(p3, '.codex', 'config.toml'), 'model = "o4"\n');
  for (const tool of ['codex', 'gemini-cli']) assert.equal((await roost(['hooks', 'install', '--tool', tool, '--project', p3, '--server', server, '--mcp'])).code, 0);
  const toml = readFileSync(join(p3, '.codex', 'config.toml'), 'utf8');
  const cfg = parse(toml) as any;
  assert.equal(cfg.model, 'o4');
  assert.equal(cfg.mcp_servers.roost.command, process.execPath);
  assert.deepEqual(cfg.mcp_servers.roost.args, [ROOST, 'mcp', '--server', server]);
  assert.ok(cfg.otel, 'the telemetry block is there too');
  await roost(['hooks', 'install', '--tool', 'codex', '--project', p3, '--server', server, '--mcp']);
  assert.equal(readFileSync(join(p3, '.codex', 'config.toml'), 'utf8'), toml, 'installing twice changes nothing');
  const gem = JSON.parse(readFileSync(join(p3, '.gemini', 'settings.json'), 'utf8'));
  assert.deepEqual(gem.mcpServers.roost, { command: process.execPath, args: [ROOST, 'mcp', '--server', server] });
  for (const tool of ['codex', 'gemini-cli']) assert.match((await roost(['hooks', 'uninstall', '--tool', tool, '--project', p3])).out, /mcp: roost unregistered/);
  assert.equal(readFileSync(join(p3, '.codex', 'config.toml'), 'utf8'), 'model = "o4"\n');
  assert.deepEqual(JSON.parse(readFileSync(join(p3, '.gemini', 'settings.json'), 'utf8')), {});
});

// Shared mode from the command line: beyond loopback without an account the
// server refuses and says how to make the first owner; `roost admin
// create-owner` makes one; the server then starts in shared mode and the
// owner signs in. Runs the built CLI (npm run build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { child, freePort, tempDir } from './support/server.js';

const ROOST = join(PACKAGE_ROOT, 'bin', 'roost.js');

function roost(args: string[], stdin?: string): Promise<{ code: number; out: string; err: string }> {
  return new Promise((ok) => {
    const p = spawn(process.execPath, [ROOST, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('exit', (code) => ok({ code: code ?? 1, out, err }));
    p.stdin.end(stdin ?? '');
  });
}

test('beyond loopback without accounts: refused with the way out; create-owner; then shared mode', async () => {
  const data = tempDir();
  const port = await freePort();
  const refused = await roost(['serve', '--host', '0.0.0.0', '--port', String(port), '--data', data]);
  assert.equal(refused.code, 1);
  assert.match(refused.err, /refusing to start in shared mode on 0\.0\.0\.0: no account exists yet/);
  assert.match(refused.err, /roost admin create-owner --login NAME --data /);
  const alsoShared = await roost(['serve', '--shared', '--port', String(port), '--data', data]);
  assert.equal(alsoShared.code, 1, '--shared on loopback needs an account too');

  const short = await roost(['admin', 'create-owner', '--login', 'ann', '--password-stdin', '--data', data], 'short\n');
  assert.equal(short.code, 1);
  assert.match(short.err, /at least 8 characters/);
  const made = await roost(['admin', 'create-owner', '--login', 'ann', '--name', 'Ann Lee', '--password-stdin', '--data', data], 'correct horse battery\n');
  assert.equal(made.code, 0, made.err);
  assert.match(made.out, /created ann .*owner of project "default"/);

  const srv = await child({ dataDir: data, args: ['--shared'] });
  try {
    assert.equal((await fetch(srv.url + '/state')).status, 401, 'shared mode: nobody is the owner by default');
    const bad = await fetch(srv.url + '/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'ann', password: 'correct horse' }) });
    assert.equal(bad.status, 401);
    const r = await fetch(srv.url + '/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'ann', password: 'correct horse battery' }) });
    assert.equal(r.status, 200);
    const cookie = /roost_session=[^;]+/.exec(r.headers.get('set-cookie') ?? '')![0];
    const me = (await (await fetch(srv.url + '/auth/me', { headers: { cookie } })).json());
    assert.deepEqual([me.mode, me.user.name, me.user.admin, me.projects], ['shared', 'Ann Lee', true, [{ id: 'default', name: 'Default', role: 'owner' }]]);
    assert.equal((await fetch(srv.url + '/state', { headers: { cookie } })).status, 200);
    const h = (await (await fetch(srv.url + '/health')).json());
    assert.deepEqual([h.ok, h.mode, 'agents' in h], [true, 'shared', false], '/health stays public and says nothing about a project');
  } finally {
    await srv.stop();
  }

  // Behind a TLS proxy: --public-url https://... makes the session cookie Secure (ROOST_PUBLIC_URL alike).
  const behind = await child({ dataDir: data, args: ['--shared', '--public-url', 'https://roost.example'] });
  try {
    const r = await fetch(behind.url + '/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'ann', password: 'correct horse battery' }) });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('set-cookie') ?? '', /; Secure/);
  } finally {
    await behind.stop();
  }
  const badUrl = await roost(['serve', '--shared', '--port', String(port), '--data', data, '--public-url', 'https://roost.example/app']);
  assert.equal(badUrl.code, 1);
  assert.match(badUrl.err, /the public URL must be an http or https origin/);
});

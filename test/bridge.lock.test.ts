// One bridge per root, held by the kernel (src/bridge/root-lock.ts): the lock
// is taken once, freed by a release, and freed by the death of its holder,
// SIGKILL included, with nothing left behind to clean up; a bridge whose start
// fails lets it go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { lockRoot } from '../src/bridge/root-lock.js';
import { need } from './support/env.js';

const LINUX = process.platform === 'linux';
const NOT_LINUX = 'abstract Unix sockets are Linux-only (elsewhere the state file’s owner check guards a root)';

test('a root is locked once: a second taker is refused until the first releases; other roots are their own', async (t) => {
  if (!need(t, LINUX, NOT_LINUX)) return;
  // Only a name: the lock's name is hashed from it, and nothing is created there.
  const root = `/nowhere/roost-lock-test-${process.pid}/a`;
  const first = await lockRoot(root);
  assert.ok(first, 'the first taker gets the lock');
  assert.equal(await lockRoot(root), null, 'a second taker is refused');
  const other = await lockRoot(root + '-other');
  assert.ok(other, 'another root has its own lock');
  await first.release();
  await first.release(); // twice is harmless
  const again = await lockRoot(root);
  assert.ok(again, 'released, it can be taken again');
  await again.release();
  await other.release();
});

test('a holder killed with SIGKILL frees the root at once', { timeout: 30_000 }, async (t) => {
  if (!need(t, LINUX, NOT_LINUX)) return;
  const root = `/nowhere/roost-lock-test-${process.pid}/b`;
  const lockModule = fileURLToPath(new URL('../src/bridge/root-lock.ts', import.meta.url));
  const holder = spawn(
    process.execPath,
    ['--import', 'tsx', '-e', `import(${JSON.stringify(lockModule)}).then(async (m) => { const l = await m.lockRoot(${JSON.stringify(root)}); console.log(l ? 'held' : 'refused'); setInterval(() => {}, 1000); })`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    const said = await new Promise<string>((ok, fail) => {
      let out = '';
      holder.stdout.on('data', (d) => {
        out += d;
        if (out.includes('\n')) ok(out.trim());
      });
      holder.once('exit', (c) => fail(new Error(`the holder exited (${c}) before taking the lock`)));
    });
    assert.equal(said, 'held');
    assert.equal(await lockRoot(root), null, 'held by the other process');
    await new Promise((ok) => (holder.once('exit', ok), holder.kill('SIGKILL')));
    const mine = await lockRoot(root);
    assert.ok(mine, 'free as soon as the holder is gone');
    await mine.release();
  } finally {
    holder.kill('SIGKILL');
  }
});

test('a bridge whose start fails leaves its root free for the next one in the same process', { timeout: 30_000 }, async (t) => {
  if (!need(t, LINUX, NOT_LINUX)) return;
  const { createServer } = await import('node:http');
  const { realpathSync } = await import('node:fs');
  const { Bridge } = await import('../src/bridge/bridge.js');
  const { tempDir } = await import('./support/server.js');
  // A "server" that refuses every request for good (404 is not retried).
  const refuser = createServer((req, res) => {
    req.resume();
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"no such thing"}');
  });
  await new Promise<void>((ok) => refuser.listen(0, '127.0.0.1', ok));
  t.after(() => refuser.close());
  const root = tempDir('roost-lock-root-');
  const bridge = new Bridge({
    server: `http://127.0.0.1:${(refuser.address() as { port: number }).port}`,
    root,
    thread: 'default',
    name: 'Claude',
    claude: 'claude',
    approvals: 'Bash',
    windowMs: 60_000,
    space: 'box',
    log: () => {},
  });
  await assert.rejects(bridge.start());
  const lock = await lockRoot(realpathSync(root));
  assert.ok(lock, 'the failed start did not keep the root');
  await lock.release();
});

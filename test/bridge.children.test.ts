// What a restarted bridge does with the processes a killed one left behind
// (src/bridge/children.ts): only the recorded ones (same pid and start) and
// what they started are ended, SIGTERM first, SIGKILL for those that ignore it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { endLeftovers, startOf } from '../src/bridge/children.js';
import { need } from './support/env.js';
import { descendants, hasProc, running } from './support/procs.js';
import { until } from './support/until.js';

/** A node process that ignores SIGTERM and starts `sleep 61` in a process group of its own (as Claude Code runs its shell). */
function stubborn(): ChildProcess {
  const code = `process.on('SIGTERM', () => {}); require('child_process').spawn('sleep', ['61'], { detached: true, stdio: 'ignore' }); setInterval(() => {}, 1000);`;
  return spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
}

test('a restarted bridge ends what the killed one recorded, and what that started; a pid now used by another process is left alone', { timeout: 30_000 }, async (t) => {
  if (!need(t, hasProc(), 'Linux /proc (to see which processes still run)')) return;
  const a = stubborn();
  const b = stubborn();
  const pids: number[] = [];
  t.after(() => {
    for (const pid of pids) if (running(pid)) process.kill(pid, 'SIGKILL');
  });
  const sleepOf = async (p: ChildProcess) => (await until('its tool to run', async () => descendants(p.pid!).find((d) => /^sleep 61$/.test(d.cmd)), 10_000, 50)).pid;
  const [sa, sb] = [await sleepOf(a), await sleepOf(b)];
  pids.push(a.pid!, b.pid!, sa, sb);
  assert.ok(startOf(a.pid) && startOf(a.pid) === startOf(a.pid), 'a start is stable');
  // b's record has another start: the pid was reused by a process the bridge never started.
  const t0 = Date.now();
  const ended = await endLeftovers(
    [
      { pid: a.pid!, start: startOf(a.pid)!, what: 'claude s-1' },
      { pid: b.pid!, start: 'not-this-one', what: 'claude s-2' },
      { pid: 2 ** 22 + 7, start: 'gone', what: 'claude s-3' },
    ],
    600,
  );
  assert.deepEqual(ended.map((e) => e.what), ['claude s-1'], 'only the recorded process that still runs');
  assert.ok(Date.now() - t0 >= 600, 'it ignored SIGTERM: SIGKILL came after the grace period');
  assert.equal(running(a.pid!), false, 'the recorded process is gone');
  assert.equal(running(sa), false, 'and so is what it started, in its own process group');
  assert.equal(running(b.pid!), true, 'a reused pid is not ours to end');
  assert.equal(running(sb), true);
  assert.deepEqual(await endLeftovers([{ pid: a.pid!, start: 'x', what: 'claude s-1' }]), [], 'nothing left: nothing to do');
});

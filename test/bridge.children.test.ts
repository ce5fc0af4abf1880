// What a restarted bridge does with the processes a killed one left behind
// (src/bridge/children.ts): only the recorded ones (same pid and start) and
// what they started are ended, SIGTERM first, SIGKILL for those that ignore it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { TAG_VAR, endLeftovers, endTagged, sessionTag, startOf, tagged } from '../src/bridge/children.js';
import { need } from './support/env.js';
import { descendants, hasProc, matching, running } from './support/procs.js';
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

/**
 * A detached loop (its own session, re-parented to init once its parent exits) that ignores
 * SIGTERM and forks every 10 ms, each child a `sleep` that ignores SIGTERM too; with `tag`.
 */
function forker(tag: string, marker: string, everyS = 0.01): void {
  const script = `trap "" TERM; while :; do sleep ${marker} & sleep ${everyS}; done`;
  const c = spawn('bash', ['-c', `setsid bash -c '${script}' </dev/null >/dev/null 2>&1 &`], { env: { PATH: process.env.PATH, [TAG_VAR]: tag }, stdio: 'ignore' });
  c.unref();
}

test('a sweep by tag ends a loop that forks every 10 ms, every time (8 of 8), and leaves other tags alone', { timeout: 60_000 }, async (t) => {
  if (!need(t, hasProc(), 'Linux /proc (environments and which processes still run)')) return;
  const bridge = 'b' + String(process.pid);
  const marker = (i: number) => `301.${process.pid}${i}`;
  const other = `302.${process.pid}`;
  t.after(async () => {
    for (let n = 0; n < 50; n++) {
      const left = [...[...Array(8).keys()].flatMap((i) => matching(marker(i))), ...matching(other)];
      if (!left.length) break;
      for (const pid of left) if (running(pid)) process.kill(pid, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  forker(sessionTag('bother', 's1'), other, 0.5);
  const times: number[] = [];
  for (let i = 0; i < 8; i++) {
    forker(sessionTag(bridge, `s${i}`), marker(i));
    await until('the loop to fork', () => matching(marker(i)).length >= 5, 10_000, 20);
    const sweep = await endTagged({ session: sessionTag(bridge, `s${i}`) }, 300);
    times.push(sweep.ms);
    assert.deepEqual(sweep.resisting, [], `round ${i}: nothing resisted`);
    assert.ok(sweep.ended >= 5, `round ${i}: the loop and its children were ended (${sweep.ended})`);
    assert.deepEqual(matching(marker(i)), [], `round ${i}: nothing of the loop runs`);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(matching(marker(i)), [], `round ${i}: and nothing came back`);
  }
  assert.ok(matching(other).length >= 1, 'another bridge’s tagged loop still runs');
  assert.ok(tagged({ bridge: 'bother' }).length >= 1);
  assert.equal((await endTagged({ bridge: 'bother' }, 100)).resisting.length, 0, 'a sweep by bridge ends any session’s tag of it');
  assert.deepEqual(matching(other), []);
  t.diagnostic(`sweeps of a fork loop (300 ms SIGTERM grace): ${times.join(', ')} ms`);
});

// No reader sees an agent waiting with nothing to decide (issue 18, "the
// counts agree"): a held tool call and an agent's question each write a
// request to the approvals stream and "waiting" to the floor stream, two
// appends. The log is replayed in commit order, and at every position the
// agent is shown waiting exactly when a request of its own is pending, and
// never "waiting in its terminal" on the way in or out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inProcess } from './support/server.js';
import { until } from './support/until.js';
import { decide, pendingOf } from './support/approvals-http.js';
import { applyEvent, emptyFloor, type FloorEvent } from '../src/core/floor.js';
import { applyApproval, emptyApprovals } from '../src/core/approvals.js';
import { shownStatus, waitingHere } from '../src/core/attention.js';
import type { LogEntry } from '../src/storage/types.js';

const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-code');
const PRE_BASH = JSON.parse(readFileSync(join(FIX, 'hooks-real-2.1.197/09-PreToolUse-Bash.json'), 'utf8'));
const AGENT = 'claude-code:af2cb417-a638-4c48-b638-61268d8fb949';

/** What a reader of both streams would show for `agent` after each commit, in order. */
function replay(log: LogEntry[], floorStream: string, approvalsStream: string, agent: string): { at: string; shown: string; pending: boolean }[] {
  const floor = emptyFloor();
  const approvals = emptyApprovals();
  const seen: { at: string; shown: string; pending: boolean }[] = [];
  for (const e of log) {
    if (e.stream === floorStream) applyEvent(floor, JSON.parse(e.body) as FloorEvent);
    else if (e.stream === approvalsStream) applyApproval(approvals, JSON.parse(e.body), e.position);
    else continue;
    const a = floor.agents.get(agent);
    const here = waitingHere(approvals);
    seen.push({ at: `${e.stream}#${e.position} ${e.type}`, shown: a ? shownStatus(a, e.at, 3_600_000, here) : 'absent', pending: here.has(agent) });
  }
  return seen;
}

function assertNeverApart(seen: { at: string; shown: string; pending: boolean }[]): void {
  for (const s of seen) {
    assert.notEqual(s.shown, 'terminal', `shown waiting in its terminal at ${s.at}: ${JSON.stringify(seen)}`);
    if (s.shown !== 'absent') assert.equal(s.shown === 'waiting', s.pending, `shown ${s.shown} with${s.pending ? '' : ' no'} request pending at ${s.at}`);
  }
}

test('a held tool call: shown waiting exactly while its request is pending, at every position of the log (allowed, denied, withdrawn)', async () => {
  const roost = await inProcess();
  const log: LogEntry[] = [];
  roost.store.onCommit((_stream, _head, entries) => log.push(...(entries ?? [])));
  try {
    const hook = (signal?: AbortSignal) =>
      fetch(`${roost.url}/hooks/claude-code?approvals=Bash&window=60000&hold=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(PRE_BASH), signal }).then((r) => r.json());
    const heldOnFloor = async () => {
      const p = await until('the call pending', async () => (await pendingOf(roost.url))[0], 10_000);
      await until('the floor showing it waiting', () => roost.floor.state.agents.get(AGENT)?.status === 'waiting', 10_000);
      return p;
    };
    // The agent's first word is this call: the request and the agent come together.
    let answer = hook();
    assert.equal((await decide(roost.url, (await heldOnFloor()).id, 'allow', 'ann')).status, 200);
    assert.equal((await answer).hookSpecificOutput.permissionDecision, 'allow');
    answer = hook();
    assert.equal((await decide(roost.url, (await heldOnFloor()).id, 'deny', 'ann')).status, 200);
    assert.equal((await answer).hookSpecificOutput.permissionDecision, 'deny');
    const ac = new AbortController();
    const gone = hook(ac.signal).catch(() => null);
    await heldOnFloor();
    ac.abort();
    await gone;
    await until('the floor told it stopped waiting', () => roost.floor.state.agents.get(AGENT)?.status === 'idle', 10_000);

    const seen = replay(log, roost.floor.stream, roost.approvals.stream, AGENT);
    const shown = seen.map((s) => s.shown);
    assert.deepEqual(
      shown.filter((s, i) => s !== shown[i - 1]),
      ['absent', 'waiting', 'working', 'waiting', 'thinking', 'waiting', 'idle'],
      'each call: waiting, then what its decision made it',
    );
    assertNeverApart(seen);
  } finally {
    await roost.close();
  }
});

test("an agent's question: shown waiting exactly while it is pending, at every position of the log", async () => {
  const roost = await inProcess();
  const log: LogEntry[] = [];
  roost.store.onCommit((_stream, _head, entries) => log.push(...(entries ?? [])));
  try {
    const asked = fetch(`${roost.url}/ask`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'asker', question: 'Ship it?' }) }).then((r) => r.json());
    const p = await until('the question pending', async () => (await pendingOf(roost.url))[0], 10_000);
    await until('the floor showing it waiting', () => roost.floor.state.agents.get('asker')?.status === 'waiting', 10_000);
    await decide(roost.url, p.id, 'allow', 'ann');
    assert.equal((await asked).answer, 'yes');
    const seen = replay(log, roost.floor.stream, roost.approvals.stream, 'asker');
    const shown = seen.map((s) => s.shown);
    assert.deepEqual(shown.filter((s, i) => s !== shown[i - 1]), ['absent', 'waiting', 'working', 'thinking']);
    assertNeverApart(seen);
  } finally {
    await roost.close();
  }
});

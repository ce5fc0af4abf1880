// The fleet fold, rule by rule, where the contract's vectors stop: the
// decisions written down in docs/fleet.md (names, caps, a full board,
// approvals, end reasons, the chat lines the vectors don't give), the edge
// check the server answers with, and the transport's identity stamp.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  SESSION_LIMITS,
  applySessionEvent,
  emptySessions,
  foldSessions,
  projectSession,
  reduceSessions,
  sessionEventConflict,
  type SessionsState,
} from '../src/core/fleet.js';
import { checkSessionEvent, normalizeSessionEvent, withSessionIdentity } from '../src/core/fleet-wire.js';

const T = 1_700_000_000_000;
const spawn = (id: string, extra: Record<string, unknown> = {}) => ({ type: 'session.spawn', id, session: `task-${id}`, root: 'r', by: 'Paul', name: 'Claude', ts: T, ...extra });
const end = (id: string, ts = T + 1, reason = 'closed') => ({ type: 'session.end', id, reason, name: 'Paul', ts });
const pending = (id: string, rid: string, extra: Record<string, unknown> = {}) => ({ type: 'session.approval', id, rid, tool: 'Bash', digest: 'rm -rf build', state: 'pending', name: 'Claude', ts: T + 2, ...extra });
const decide = (id: string, rid: string, state: 'allowed' | 'denied', name: string) => ({ type: 'session.approval', id, rid, state, name, ts: T + 3 });

function board(...events: unknown[]): SessionsState {
  return foldSessions(emptySessions(), events);
}

test('fleet.ts imports nothing at all, so a browser or a script can load it alone', () => {
  const code = readFileSync(new URL('../src/core/fleet.ts', import.meta.url), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  assert.doesNotMatch(code, /\bimport\b|\brequire\s*\(|\bexport\b[^;]*\bfrom\s*['"]/);
  assert.doesNotMatch(code, /Date\.now|Math\.random|performance\.now|new Date\(/, 'no clock and no randomness inside the fold');
});

test('a spawn without a name shows its id; without a root its chat line says only what started', () => {
  const s = reduceSessions(emptySessions(), { type: 'session.spawn', id: 'k7', name: 'Claude', ts: T });
  assert.equal(s.sessions[0].name, 'k7');
  assert.deepEqual(projectSession({ type: 'session.spawn', id: 'k7', name: 'Claude', ts: T }, emptySessions()), { text: 'started session “k7”', action: true });
});

test('board fields are clamped to the contract caps and kept on one line, never splitting a character', () => {
  const s = board(
    spawn('s1', { session: 'n'.repeat(79) + '😀' + 'tail', root: 'x'.repeat(400), by: 'b'.repeat(100) }),
    { type: 'session.status', id: 's1', state: 'running', activity: 'line one\nline two\u001b[2J' + 'a'.repeat(300), ts: T + 5 },
  );
  const x = s.sessions[0];
  assert.equal(x.name, 'n'.repeat(79), 'an emoji that would be cut in half is dropped whole');
  assert.equal(x.root.length, 300);
  assert.equal(x.by.length, 80);
  assert.equal(x.activity.length, 200);
  assert.ok(x.activity.startsWith('line one line two [2J'), x.activity);
});

test('a board of 50 live sessions refuses a 51st; once some have ended, the one that ended first makes room', () => {
  let s = emptySessions();
  for (let i = 0; i < 50; i++) s = reduceSessions(s, spawn(`s${i}`));
  assert.equal(s.sessions.length, 50);
  const full = reduceSessions(s, spawn('late'));
  assert.equal(full, s, 'no live session is pushed off the board');
  assert.deepEqual(sessionEventConflict(s, spawn('late'))?.status, 409);

  s = foldSessions(s, [end('s30', T + 10), end('s5', T + 20)]);
  s = reduceSessions(s, spawn('late'));
  assert.equal(s.sessions.length, 50);
  assert.ok(!s.sessions.some((x) => x.id === 's30'), 's30 ended first, so it is forgotten first');
  assert.ok(s.sessions.some((x) => x.id === 's5'));
  assert.equal(s.sessions.at(-1)?.id, 'late', 'new sessions go at the end of the board');
});

test('status: dead is a state a session can leave, ended is not a status, and any status clears a stale activity', () => {
  let s = board(spawn('s1'));
  s = reduceSessions(s, { type: 'session.status', id: 's1', state: 'dead', activity: 'claude exited 1', ts: T + 1 });
  assert.equal(s.sessions[0].state, 'dead');
  s = reduceSessions(s, { type: 'session.status', id: 's1', state: 'running', ts: T + 2 });
  assert.equal(s.sessions[0].state, 'running');
  assert.equal(s.sessions[0].activity, '');
  assert.equal(reduceSessions(s, { type: 'session.status', id: 's1', state: 'ended', ts: T + 3 }), s, 'only session.end ends a session');
  assert.match(checkSessionEvent({ type: 'session.status', id: 's1', state: 'ended' }) ?? '', /session\.end/);
});

test('after the end, nothing lands: no prompt, turn, result, approval or re-spawn', () => {
  const s = board(spawn('s1'), end('s1'));
  for (const e of [
    { type: 'session.prompt', id: 's1', text: 'still there?', name: 'Ana', ts: T + 5 },
    { type: 'session.turn', id: 's1', text: 'late turn', name: 'Claude', ts: T + 5 },
    { type: 'session.result', id: 's1', summary: 'late', name: 'Claude', ts: T + 5 },
    pending('s1', 'a1'),
    spawn('s1'),
  ]) {
    assert.equal(reduceSessions(s, e), s, e.type);
    assert.equal(projectSession(e, s), null, `${e.type} says nothing in the chat`);
    assert.ok(sessionEventConflict(s, e), `${e.type} is refused at the API`);
  }
});

test('prompts and turns: an empty prompt is nothing; a turn without text counts but stays silent', () => {
  let s = board(spawn('s1'));
  assert.equal(reduceSessions(s, { type: 'session.prompt', id: 's1', text: '  \n ', name: 'Ana', ts: T }), s);
  const r = applySessionEvent(s, { type: 'session.turn', id: 's1', name: 'Claude', ts: T });
  assert.equal(r.state.sessions[0].turns, 1);
  assert.equal(r.chat, null);
  s = r.state;
  const p = applySessionEvent(s, { type: 'session.prompt', id: 's1', session: 'forged-name', text: 'run\nthe tests', name: 'Ana', ts: T });
  assert.deepEqual(p.chat, { text: 'asked task-s1: “run\nthe tests”', action: true }, 'the board’s name, not the payload’s; line breaks kept');
  assert.equal(p.state.sessions[0].prompts, 1);
});

test('result: the latest summary wins; an empty one changes nothing', () => {
  let s = board(spawn('s1'), { type: 'session.result', id: 's1', summary: 'first', ts: T }, { type: 'session.result', id: 's1', summary: 'second', ts: T });
  assert.equal(s.sessions[0].result, 'second');
  assert.equal(reduceSessions(s, { type: 'session.result', id: 's1', summary: '', ts: T }), s);
  s = reduceSessions(s, { type: 'session.result', id: 's1', summary: 'y'.repeat(600), ts: T });
  assert.equal(s.sessions[0].result.length, SESSION_LIMITS.result);
});

test('approvals: a re-post never replaces, the decider is the transport name, and the chat says who decided what', () => {
  let s = board(spawn('s1'), pending('s1', 'a1'));
  assert.equal(reduceSessions(s, pending('s1', 'a1', { tool: 'Write', digest: 'forged' })), s);
  assert.deepEqual(projectSession(pending('s1', 'a2'), s), { text: '[task-s1] needs approval to run Bash: rm -rf build', action: false });

  const allow = { ...decide('s1', 'a1', 'allowed', 'Ana'), by: 'Mallory', tool: 'forged tool' };
  const r = applySessionEvent(s, allow);
  assert.deepEqual(r.state.sessions[0].approvals, [{ rid: 'a1', tool: 'Bash', digest: 'rm -rf build', state: 'allowed', by: 'Ana' }]);
  assert.deepEqual(r.chat, { text: 'allowed Bash in task-s1', action: true }, 'the tool named is the one the bridge posted');
  s = r.state;

  const late = decide('s1', 'a1', 'denied', 'Bob');
  assert.equal(reduceSessions(s, late), s);
  assert.equal(projectSession(late, s), null, 'a decision that lost says nothing');
  assert.deepEqual(sessionEventConflict(s, late), { status: 409, kind: 'conflict', message: 'approval "a1" was already allowed by Ana' });
  assert.deepEqual(sessionEventConflict(s, decide('s1', 'a9', 'denied', 'Bob'))?.status, 404);
  assert.deepEqual(sessionEventConflict(s, decide('nope', 'a1', 'denied', 'Bob'))?.status, 404);
});

test('end drops pending approvals but keeps decided ones as history; its chat line names the reason', () => {
  const s = board(spawn('s1'), pending('s1', 'a1'), pending('s1', 'a2'), decide('s1', 'a1', 'denied', 'Bob'));
  const r = applySessionEvent(s, end('s1', T + 9, 'bridge restarted'));
  assert.deepEqual(r.state.sessions[0].approvals.map((a) => [a.rid, a.state]), [['a1', 'denied']]);
  assert.equal(r.state.sessions[0].reason, 'bridge restarted');
  assert.deepEqual(r.chat, { text: 'ended session “task-s1” (bridge restarted)', action: true });
  assert.deepEqual(projectSession({ type: 'session.end', id: 's1' }, s), { text: 'closed session “task-s1”', action: true }, 'no reason reads as closed');
});

test('a session keeps at most 100 approvals: the oldest decided goes first; 100 pending refuse a new one', () => {
  let s = board(spawn('s1'));
  for (let i = 0; i < 100; i++) s = reduceSessions(s, pending('s1', `a${i}`));
  assert.equal(reduceSessions(s, pending('s1', 'extra')), s, 'all pending: the new request is dropped (its window denies it)');
  assert.equal(sessionEventConflict(s, pending('s1', 'extra'))?.status, 409);
  s = foldSessions(s, [decide('s1', 'a40', 'allowed', 'Ana'), decide('s1', 'a7', 'denied', 'Bob')]);
  s = reduceSessions(s, pending('s1', 'extra'));
  const rids = s.sessions[0].approvals.map((a) => a.rid);
  assert.equal(rids.length, 100);
  assert.ok(!rids.includes('a7') && rids.includes('a40') && rids.at(-1) === 'extra', 'a7 is the oldest decided on the card');
});

test('the edge check names what is wrong, and accepts what the bridge and the browser send', () => {
  const bad: [unknown, RegExp][] = [
    ['hello', /JSON object, got a string/],
    [[], /JSON object, got an array/],
    [{ id: 's1' }, /"type" is required/],
    [{ type: 'session.stream', id: 's1', text: 'partial' }, /ephemeral/],
    [{ type: 'session.nope', id: 's1' }, /unknown type "session.nope"/],
    [{ type: 'session.spawn' }, /"id" is required/],
    [{ type: 'session.spawn', id: 'has space' }, /"id" must be 1 to 64 letters/],
    [{ type: 'session.spawn', id: 'x'.repeat(65) }, /"id" must be 1 to 64/],
    [{ type: 'session.spawn', id: 's1', session: 7 }, /"session" must be a string, got a number/],
    [{ type: 'session.spawn', id: 's1', session: 'n'.repeat(81) }, /"session" is longer than 80/],
    [{ type: 'session.spawn', id: 's1', flavor: 'root-of-everything' }, /"flavor" must be one of scoped, plain/],
    [{ type: 'session.status', id: 's1', state: 'zombie' }, /"state" is required and must be one of running, idle, waiting, dead/],
    [{ type: 'session.prompt', id: 's1', text: ' ' }, /"text" is required/],
    [{ type: 'session.prompt', id: 's1', text: 't'.repeat(SESSION_LIMITS.text + 1) }, /"text" is longer than 20000/],
    [{ type: 'session.approval', id: 's1', state: 'allowed' }, /"rid" is required/],
    [{ type: 'session.approval', id: 's1', rid: 'a/1', state: 'allowed' }, /"rid" must be/],
    [{ type: 'session.approval', id: 's1', rid: 'a1', state: 'maybe' }, /"state" is required and must be one of pending, allowed, denied/],
    [{ type: 'session.result', id: 's1' }, /"summary" is required/],
    [{ type: 'session.end', id: 's1', reason: 'r'.repeat(121) }, /"reason" is longer than 120/],
  ];
  for (const [e, re] of bad) assert.match(checkSessionEvent(e) ?? '(accepted)', re, JSON.stringify(e).slice(0, 80));
  const good = [
    { type: 'session.spawn', id: 's1', session: 'fix-login', flavor: 'plain', root: '~/src/app', worktree: 'wt', by: 'Paul' },
    { type: 'session.status', id: 's1', state: 'waiting', activity: 'go test' },
    { type: 'session.prompt', id: 's1', text: 'go on', name: 12, uid: null, ts: 'forged' },
    { type: 'session.turn', id: 's1' },
    { type: 'session.approval', id: 's1', rid: 'a1', state: 'pending', tool: 'Bash', digest: 'ls' },
    { type: 'session.result', id: 's1', summary: 'done' },
    { type: 'session.end', id: 's1' },
  ];
  for (const e of good) assert.equal(checkSessionEvent(e), null, e.type);
});

test('identity comes from the transport: name, uid and ts are overwritten, a forged uid is removed', () => {
  const forged = { type: 'session.approval', id: 's1', rid: 'a1', state: 'allowed', name: 'Ana', uid: 'u_ana', ts: 1 };
  const e = withSessionIdentity(forged, { name: 'Mallory', uid: 'u_mal', ts: T });
  assert.deepEqual(e, { ...forged, name: 'Mallory', uid: 'u_mal', ts: T });
  assert.equal(forged.name, 'Ana', 'the payload object is not changed');
  assert.ok(!('uid' in withSessionIdentity(forged, { name: 'owner', ts: T })));
  // The decision is attributed to whoever the transport says decided.
  const s = board(spawn('s1'), pending('s1', 'a1'), e);
  assert.equal(s.sessions[0].approvals[0].by, 'Mallory');
});

test('the stored form keeps the wire fields only', () => {
  assert.deepEqual(normalizeSessionEvent({ type: 'session.prompt', id: 's1', text: 'hi', name: 'Ana', ts: T, extra: { big: true }, __proto__x: 1 }), {
    type: 'session.prompt',
    id: 's1',
    text: 'hi',
    name: 'Ana',
    ts: T,
  });
});

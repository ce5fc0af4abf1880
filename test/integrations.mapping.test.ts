// The hook mapping (src/integrations) against every fixture: the real
// Claude Code 2.1.197 run, the documented examples of every hook event, the
// Codex and Cursor payloads, and hostile variants of all of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { applyEvent, emptyFloor, LIMITS, type FloorEvent, type FloorState } from '../src/core/floor.js';
import { checkFloorEvent } from '../src/core/floor-wire.js';
import {
  BACKGROUND_WAIT,
  decisionAnswer,
  isDecisionPoint,
  mapClaudeCode,
  mapHook,
  type AgentTool,
  type FloorView,
} from '../src/integrations/index.js';

const FIX = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'claude-code');
const load = (p: string) => JSON.parse(readFileSync(join(FIX, p), 'utf8'));
const REAL = readdirSync(join(FIX, 'hooks-real-2.1.197')).sort().map((f) => ({ f, p: load(join('hooks-real-2.1.197', f)) }));
const DOCS = readdirSync(join(FIX, 'hooks-doc-examples'))
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => ({ f, p: load(join('hooks-doc-examples', f)) }));

function view(s: FloorState): FloorView {
  return {
    agent: (id) => s.agents.get(id),
    helpers: (id) => [...s.agents.values()].filter((a) => a.parent === id).sort((a, b) => a.seq - b.seq).map((a) => ({ id: a.id, role: a.role, status: a.status, leftAt: a.leftAt })),
  };
}

/** Maps and folds payloads in order, as the server does; returns the floor and every event. */
function play(payloads: unknown[], tool: AgentTool = 'claude-code', team?: string) {
  const s = emptyFloor();
  const all: FloorEvent[] = [];
  let ts = 1_000;
  for (const p of payloads) {
    const m = mapHook(tool, p, { view: view(s), team });
    for (const e of m.events) {
      assert.equal(checkFloorEvent(e), null, `${JSON.stringify(e).slice(0, 200)} passes the edge check`);
      all.push(e);
      applyEvent(s, { ...e, ts: (ts += 10) });
    }
  }
  return { s, all };
}

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
/** A real CLI's recorded payloads (scripts/record-vendor-hooks.ts), in the order they fired. */
function realRun(folder: string): { f: string; p: any }[] {
  return readdirSync(join(FIXTURES, folder))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ f, p: JSON.parse(readFileSync(join(FIXTURES, folder, f), 'utf8')) }));
}
const CODEX = realRun('codex-real-0.171.0');
const GEMINI = realRun('gemini-cli-real-0.61.0');

/** Each agent's statuses in the order they changed ('left' once it walked out). */
function timeline(payloads: unknown[], tool: AgentTool): Map<string, string[]> {
  const s = emptyFloor();
  const hist = new Map<string, string[]>();
  let ts = 1_000;
  for (const p of payloads) {
    for (const e of mapHook(tool, p, { view: view(s) }).events) {
      applyEvent(s, { ...e, ts: (ts += 10) });
      for (const a of s.agents.values()) {
        const h = hist.get(a.id) ?? [];
        const st = a.leftAt !== null ? 'left' : a.status;
        if (h[h.length - 1] !== st) h.push(st);
        hist.set(a.id, h);
      }
    }
  }
  return hist;
}

const SID = 'claude-code:af2cb417-a638-4c48-b638-61268d8fb949';
const HELPER = `${SID}/aee40cbed211f02d2`;

test('the real 2.1.197 run: the session, its general-purpose helper beside it, the helper’s Bash on its desk', () => {
  const { s, all } = play(REAL.map((r) => r.p).slice(0, 11)); // up to Stop
  const lead = s.agents.get(SID)!;
  const helper = s.agents.get(HELPER)!;
  assert.ok(lead && helper);
  assert.equal(lead.source, 'claude-code');
  assert.equal(s.teams.get(lead.team)!.name, 'shop', 'team from the project folder');
  assert.equal(lead.name, 'shop · af2cb417');
  assert.equal(helper.parent, SID);
  assert.equal(helper.role, 'general-purpose');
  assert.equal(helper.team, lead.team);
  assert.equal(helper.status, 'done', 'SubagentStop marks the helper done');
  assert.equal(helper.tool, 'Bash');
  const bash = all.filter((e) => e.type === 'tool' && e.tool === 'Bash').map((e) => (e.agent as { id: string }).id);
  assert.deepEqual(bash, [HELPER, SID], 'the subagent’s Bash on the helper, the failing one on the session');
  assert.equal(lead.status, 'done', 'Stop with no helper running: done');
  assert.equal(lead.activity, 'All done.');
  // The failure is told, not hidden, but the agent is not in error: it goes on.
  const failed = all.find((e) => typeof e.activity === 'string' && e.activity.startsWith('Failed: Bash'));
  assert.match(String(failed?.activity), /Failed: Bash: \$ exit 3 · Exit code 3/);

  const end = play(REAL.map((r) => r.p));
  assert.equal(end.s.agents.get(SID)!.status, 'offline');
  assert.notEqual(end.s.agents.get(SID)!.leftAt, null, 'SessionEnd: the session walks out');
  assert.notEqual(end.s.agents.get(HELPER)!.leftAt, null, 'and its helpers with it');
});

test('a configured team name wins over the folder', () => {
  const { s } = play([REAL[0].p], 'claude-code', 'Payments');
  assert.equal(s.teams.get(s.agents.get(SID)!.team)!.name, 'Payments');
});

test('every documented hook event maps to valid floor events (or, by design, to none)', () => {
  const silent = new Set(['ConfigChange', 'CwdChanged', 'DirectoryAdded', 'FileChanged', 'InstructionsLoaded', 'MessageDisplay', 'WorktreeRemove']);
  const expected: Record<string, { type: string; status?: string }> = {
    'SessionStart.json': { type: 'join', status: 'idle' },
    'Setup.json': { type: 'status' },
    'UserPromptSubmit.json': { type: 'status', status: 'thinking' },
    'UserPromptExpansion.json': { type: 'status', status: 'thinking' },
    'PreToolUse.json': { type: 'tool', status: 'working' },
    'PermissionRequest.json': { type: 'tool', status: 'waiting' },
    'PermissionDenied.json': { type: 'status', status: 'thinking' },
    'PostToolUse.json': { type: 'status', status: 'thinking' },
    'PostToolUseFailure.json': { type: 'status', status: 'thinking' },
    'PostToolBatch.json': { type: 'status', status: 'thinking' },
    'Notification.json': { type: 'status', status: 'waiting' },
    'Elicitation.json': { type: 'status', status: 'waiting' },
    'Elicitation.url.json': { type: 'status', status: 'waiting' },
    'ElicitationResult.json': { type: 'status', status: 'thinking' },
    'SubagentStart.json': { type: 'join', status: 'working' },
    'SubagentStop.json': { type: 'status', status: 'done' },
    'Stop.json': { type: 'status', status: 'done' },
    'StopFailure.json': { type: 'status', status: 'error' },
    'PreCompact.json': { type: 'status', status: 'thinking' },
    'PostCompact.json': { type: 'status' },
    'TaskCreated.json': { type: 'task' },
    'TaskCompleted.json': { type: 'task' },
    'TeammateIdle.json': { type: 'status', status: 'idle' },
    'WorktreeCreate.json': { type: 'status' },
    'SessionEnd.json': { type: 'leave', status: 'offline' },
  };
  for (const { f, p } of DOCS) {
    const m = mapClaudeCode(p);
    for (const e of m.events) assert.equal(checkFloorEvent(e), null, `${f}: ${JSON.stringify(e)}`);
    if (silent.has(p.hook_event_name)) {
      assert.deepEqual(m.events, [], `${f} is not shown on the floor`);
      continue;
    }
    const want = expected[f];
    assert.ok(want, `${f} has an expectation`);
    assert.equal(m.events.length, 1, f);
    assert.equal(m.events[0].type, want.type, f);
    assert.equal(m.events[0].status, want.status, f);
  }
  // The documented Stop has a shell running in the background: that is no helper, so done.
  assert.equal(mapClaudeCode(load('hooks-doc-examples/Stop.json')).events[0].status, 'done');
  // The task's subject goes on the whiteboard.
  assert.equal(mapClaudeCode(load('hooks-doc-examples/TaskCompleted.json')).events[0].task, 'Done: Implement user authentication');
  // A subagent's events land on the helper, with the session as parent.
  const sub = mapClaudeCode(load('hooks-doc-examples/SubagentStart.json')).events[0];
  assert.equal(sub.parent, 'claude-code:abc123');
  assert.equal(mapClaudeCode(load('hooks-doc-examples/SubagentStart.json')).agentName, 'Explore, helper of ... · abc123', 'the inbox says whose helper asks');
  assert.equal((sub.agent as { id: string }).id, 'claude-code:abc123/agent-abc123');
});

test('a Stop while a background subagent still runs keeps the session working until the helper stops', () => {
  const [start, prompt, , subStart, subPre] = REAL.map((r) => r.p);
  const stop = { ...REAL[10].p };
  const subStop = REAL[6].p;
  const { s } = play([start, prompt, subStart, subPre, stop]);
  assert.equal(s.agents.get(SID)!.status, 'working', 'not done while its helper runs');
  assert.ok(s.agents.get(SID)!.activity.startsWith(BACKGROUND_WAIT));
  // The helper finishes: now the session is done.
  const m = mapClaudeCode(subStop, { view: view(s) });
  for (const e of m.events) applyEvent(s, { ...e, ts: 99_999 });
  assert.equal(s.agents.get(HELPER)!.status, 'done');
  assert.equal(s.agents.get(SID)!.status, 'done');
  // Background agent tasks the payload lists count too, even before the floor has seen the helper.
  const lone = mapClaudeCode({ ...stop, background_tasks: [{ id: 't1', type: 'local_agent', status: 'running' }] }).events[0];
  assert.equal(lone.status, 'working');
});

test('hostile payloads: missing fields, wrong types, huge inputs and unknown events never throw and stay within the caps', () => {
  const huge = 'x'.repeat(1_000_000);
  const cases: unknown[] = [null, undefined, 42, 'SessionStart', [], {}, { hook_event_name: 'PreToolUse' }, { session_id: 123, hook_event_name: 'Stop' }];
  for (const { p } of [...REAL, ...DOCS]) {
    cases.push({ ...p, session_id: undefined });
    cases.push({ ...p, hook_event_name: 'NoSuchEvent' + p.hook_event_name });
    cases.push({ ...p, tool_input: { command: huge, file_path: huge }, prompt: huge, message: huge, last_assistant_message: huge, agent_type: huge, cwd: huge, error: huge });
    cases.push({ ...p, tool_name: { evil: true }, agent_id: 7, background_tasks: 'nope', tool_input: 'not an object' });
    cases.push({ ...p, session_id: huge, agent_id: huge });
  }
  for (const c of cases) {
    for (const tool of ['claude-code', 'codex', 'gemini-cli', 'cursor'] as AgentTool[]) {
      const m = mapHook(tool, c);
      for (const e of m.events) {
        assert.equal(checkFloorEvent(e), null);
        assert.ok(JSON.stringify(e).length < 10_000, 'no event carries a huge field');
        if (typeof e.activity === 'string') assert.ok(e.activity.length <= LIMITS.activity);
        const id = typeof e.agent === 'string' ? e.agent : (e.agent as { id: string }).id;
        assert.ok(id.length <= LIMITS.id);
      }
    }
  }
  assert.deepEqual(mapClaudeCode({ ...REAL[0].p, hook_event_name: 'SomethingNew' }).events, []);
  fc.assert(
    fc.property(fc.jsonValue(), fc.constantFrom<AgentTool>('claude-code', 'codex', 'gemini-cli', 'cursor'), (v, tool) => {
      const m = mapHook(tool, v);
      for (const e of m.events) assert.equal(checkFloorEvent(e), null);
    }),
    { numRuns: 500 },
  );
});

test('Codex, Gemini CLI and Cursor payloads land on the same floor', () => {
  const codex = mapHook('codex', load('hooks-doc-examples/codex/PermissionRequest.json'));
  assert.equal(codex.events[0].status, 'waiting');
  assert.equal(codex.tool, 'Bash');
  assert.equal(codex.input, '$ rm -f /tmp/example');
  assert.equal(codex.agent, 'codex:session-id');
  const notify = mapHook('codex', load('hooks-doc-examples/codex/notify.agent-turn-complete.json'));
  assert.equal(notify.agent, 'codex:b5f6c1c2-1111-2222-3333-444455556666');
  assert.equal(notify.events[0].status, 'done');
  assert.match(String(notify.events[0].activity), /Rename complete/);
  assert.equal(notify.team, 'example');

  const cursor = mapHook('cursor', load('hooks-doc-examples/cursor/beforeShellExecution.json'));
  assert.equal(cursor.agent, 'cursor:conv-123');
  assert.equal(cursor.tool, 'Bash', 'one rule (Bash) covers both tools’ shells');
  assert.equal(cursor.input, '$ npm install express');
  assert.equal(cursor.team, 'project');
  assert.equal(cursor.events[0].type, 'tool');

  const gem = play(
    [
      { hook_event_name: 'SessionStart', session_id: 'g1', cwd: '/w/api', source: 'startup' },
      { hook_event_name: 'BeforeAgent', session_id: 'g1', cwd: '/w/api', prompt: 'fix the bug' },
      { hook_event_name: 'BeforeTool', session_id: 'g1', cwd: '/w/api', tool_name: 'run_shell_command', tool_input: { command: 'npm test' } },
      { hook_event_name: 'AfterTool', session_id: 'g1', cwd: '/w/api', tool_name: 'run_shell_command', tool_input: { command: 'npm test' }, tool_response: { error: 'exit 1' } },
      { hook_event_name: 'AfterAgent', session_id: 'g1', cwd: '/w/api', prompt_response: 'Fixed.' },
    ],
    'gemini-cli',
  );
  const g = gem.s.agents.get('gemini:g1')!;
  assert.equal(g.source, 'gemini-cli');
  assert.equal(g.status, 'done');
  assert.equal(g.activity, 'Fixed.');
  assert.ok(gem.all.some((e) => String(e.activity).startsWith('Failed: run_shell_command: $ npm test')));
});

test('the real Codex 0.171.0 run: the session in the folder’s team, the spawned subagent as its helper with its own Bash, statuses to the end', () => {
  const session = CODEX.filter((r) => !r.f.includes('denied')).map((r) => r.p);
  const sid = `codex:${session[0].session_id}`;
  const { s, all } = play(session, 'codex');
  const lead = s.agents.get(sid)!;
  assert.ok(lead, 'the session stands on the floor');
  assert.equal(lead.source, 'codex');
  assert.equal(s.teams.get(lead.team)!.name, 'shop');
  const helpers = [...s.agents.values()].filter((a) => a.parent === sid);
  assert.equal(helpers.length, 1, 'spawn_agent’s subagent is one helper');
  const helper = helpers[0];
  assert.equal(helper.role, 'default', 'Codex’s agent_type');
  assert.equal(helper.team, lead.team);
  const toolsOn = (id: string) => all.filter((e) => e.type === 'tool' && (e.agent as { id: string }).id === id).map((e) => `${e.tool} ${e.activity}`);
  assert.deepEqual(toolsOn(sid), ['Bash Bash: $ cat README.md', 'Bash Bash: $ ls no-such-file', 'spawn_agent spawn_agent: SUBTASK: list the files', 'wait_agent wait_agent: targets: ["' + helper.id.split('/').pop() + '"], timeout_ms: 30000']);
  assert.deepEqual(toolsOn(helper.id), ['Bash Bash: $ ls'], 'the subagent’s command on its own desk');
  const hist = timeline(session, 'codex');
  assert.deepEqual(hist.get(sid), ['idle', 'thinking', 'working', 'thinking', 'working', 'thinking', 'working', 'thinking', 'working', 'thinking', 'done', 'left']);
  // Started → its task as a prompt → Bash → result → SubagentStop → out with the session.
  assert.deepEqual(hist.get(helper.id), ['working', 'thinking', 'working', 'thinking', 'done', 'left']);
  assert.equal(helper.activity, 'Files listed.');

  // Where Codex asks for permission (an escalated command), the hook may decide.
  const asked = CODEX.find((r) => r.f.includes('PermissionRequest'))!.p;
  assert.equal(isDecisionPoint('codex', asked), true);
  const m = mapHook('codex', asked);
  assert.equal(m.tool, 'Bash');
  assert.match(m.input, /^\$ touch made\.txt/);
  assert.equal(m.events[0].status, 'waiting');
});

test('the real Gemini CLI 0.61.0 run: a read, a shell command, a failure and a delegated task; PreCompress before every turn shows nothing', () => {
  const session = GEMINI.filter((r) => !r.f.includes('denied')).map((r) => r.p);
  const sid = `gemini:${session[0].session_id}`;
  const { s, all } = play(session, 'gemini-cli');
  const lead = s.agents.get(sid)!;
  assert.ok(lead);
  assert.equal(lead.source, 'gemini-cli');
  assert.equal(s.teams.get(lead.team)!.name, 'shop');
  assert.ok(!all.some((e) => /Compacting/.test(String(e.activity))), 'PreCompress fires every turn on the real CLI and is not shown');
  const helpers = [...s.agents.values()].filter((a) => a.parent === sid);
  assert.equal(helpers.length, 1, 'invoke_agent opens one helper desk');
  const helper = helpers[0];
  assert.equal(helper.role, 'generalist');
  const toolsOn = (id: string) => all.filter((e) => e.type === 'tool' && (e.agent as { id: string }).id === id).map((e) => e.tool);
  assert.deepEqual(toolsOn(sid), ['read_file', 'run_shell_command', 'run_shell_command', 'invoke_agent']);
  assert.deepEqual(toolsOn(helper.id), ['read_file', 'complete_task'], 'the subagent’s calls on its desk');
  assert.ok(all.some((e) => e.activity === 'Failed: run_shell_command: $ ls no-such-file · exit code 2'), 'the exit code in the tool text is a failure');
  assert.equal(helper.activity, 'It says hello.', 'the subagent’s answer');
  const hist = timeline(session, 'gemini-cli');
  assert.deepEqual(hist.get(sid), ['idle', 'thinking', 'working', 'thinking', 'working', 'thinking', 'working', 'thinking', 'working', 'thinking', 'done', 'left']);
  assert.deepEqual(hist.get(helper.id), ['working', 'thinking', 'working', 'thinking', 'done', 'left']);

  const denied = GEMINI.filter((r) => r.f.includes('denied')).map((r) => r.p);
  const before = denied.find((p) => p.hook_event_name === 'BeforeTool');
  assert.equal(isDecisionPoint('gemini-cli', before), true);
  assert.equal(mapHook('gemini-cli', before).input, '$ echo hi > out.txt');
});

test('hook names that are Object.prototype keys are unknown names, for every tool (Cursor’s threw)', () => {
  for (const tool of ['claude-code', 'codex', 'gemini-cli', 'cursor'] as AgentTool[]) {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      const m = mapHook(tool, { hook_event_name: name, session_id: 's1', conversation_id: 'c1', cwd: '/w/x' });
      assert.deepEqual(m.events, [], `${tool} ${name}`);
    }
  }
});

test('decision points and answers in each tool’s own shape', () => {
  assert.equal(isDecisionPoint('claude-code', { hook_event_name: 'PreToolUse' }), true);
  assert.equal(isDecisionPoint('claude-code', { hook_event_name: 'PostToolUse' }), false);
  assert.equal(isDecisionPoint('codex', { hook_event_name: 'PermissionRequest' }), true);
  assert.equal(isDecisionPoint('gemini-cli', { hook_event_name: 'BeforeTool' }), true);
  assert.equal(isDecisionPoint('cursor', { hook_event_name: 'beforeShellExecution' }), true);
  assert.equal(isDecisionPoint('cursor', { hook_event_name: 'afterShellExecution' }), false);
  // Byte for byte the documented deny answer.
  assert.deepEqual(decisionAnswer('claude-code', { hook_event_name: 'PreToolUse' }, 'deny', 'Destructive command blocked by hook'), load('hooks-doc-examples/outputs/PreToolUse.deny.json'));
  assert.deepEqual(decisionAnswer('codex', { hook_event_name: 'PermissionRequest' }, 'allow', 'ok'), { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
  assert.deepEqual(decisionAnswer('gemini-cli', {}, 'deny', 'no'), { decision: 'deny', reason: 'no' });
  assert.deepEqual(decisionAnswer('cursor', {}, 'deny', 'no'), { permission: 'deny', user_message: 'no', agent_message: 'no' });
});

test("a decision's note goes where each real CLI's hook carries it to the model (recorded payloads)", () => {
  const real = (dir: string, f: string) => JSON.parse(readFileSync(join(FIX, '..', dir, f), 'utf8'));
  const claudePre = load('hooks-real-2.1.197/09-PreToolUse-Bash.json');
  const codexAsk = real('codex-real-0.171.0', '19-PermissionRequest-denied.json');
  const geminiBefore = real('gemini-cli-real-0.61.0', '04-BeforeTool.json');
  assert.equal(isDecisionPoint('codex', codexAsk), true);
  assert.equal(isDecisionPoint('gemini-cli', geminiBefore), true);
  const why = 'Denied in Roost by Pat: use the staging runner';
  const ok = 'Allowed in Roost by Pat: only the unit suite';
  // Claude Code 2.1.197: the deny's reason is permissionDecisionReason (the model reads it); an allow's note is additionalContext.
  assert.deepEqual(decisionAnswer('claude-code', claudePre, 'deny', why, ''), { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: why } });
  assert.deepEqual(decisionAnswer('claude-code', claudePre, 'allow', ok, ok), { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: ok, additionalContext: ok } });
  assert.equal((decisionAnswer('claude-code', claudePre, 'allow', 'Allowed by trust in Roost') as any).hookSpecificOutput.additionalContext, undefined, 'no note, no context');
  // Codex 0.171.0 PermissionRequest: the denial's message is what the model reads; its output schema allows no other
  // keys (hookSpecificOutput: hookEventName, decision; decision: behavior, message, interrupt, updatedInput, updatedPermissions).
  const codexDeny = decisionAnswer('codex', codexAsk, 'deny', why, '') as any;
  assert.deepEqual(codexDeny, { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: why } } });
  const codexAllow = decisionAnswer('codex', codexAsk, 'allow', ok, ok) as any;
  assert.deepEqual(codexAllow, { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
  // Gemini CLI 0.61.0 BeforeTool: a deny's `reason` is sent to the model ("Tool execution blocked: <reason>"); it reads no context before a tool runs.
  assert.deepEqual(decisionAnswer('gemini-cli', geminiBefore, 'deny', why, ''), { decision: 'deny', reason: why });
  assert.deepEqual(decisionAnswer('gemini-cli', geminiBefore, 'allow', ok, ok), { decision: 'allow', reason: ok });
});

test('src/integrations imports only src/core and itself', () => {
  const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'integrations');
  for (const f of readdirSync(dir)) {
    const code = readFileSync(join(dir, f), 'utf8');
    for (const m of code.matchAll(/\bfrom\s*['"]([^'"]+)['"]/g)) {
      assert.ok(m[1].startsWith('./') || m[1].startsWith('../core/'), `${f} imports ${m[1]}`);
    }
  }
});

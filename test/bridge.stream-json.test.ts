// Claude Code's stream-json output as the bridge reads it
// (src/bridge/claude-stream.ts), over real output of the CLI (2.1.197):
// a run with a subagent and a failing command, and a run with
// `--include-partial-messages` (text streamed in pieces, a tool call between
// two answers). What a member sees comes out of this reading: the turns, the
// activity, the tool frames, the partial text and the result's summary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { newUsage, readLine, readMessage, resultSummary, SessionOutput, type ClaudeMessage, type ModelFigures, type OutputSink } from '../src/bridge/claude-stream.js';

function fixture(name: string): unknown[] {
  return readFileSync(new URL(`./fixtures/claude-code/${name}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as unknown);
}

/** Everything the reader hands out, in order, as one line each. */
function recorder(): { sink: OutputSink; seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    sink: {
      toolCall: (name, digest, subagent) => seen.push(`${subagent ? 'subagent ' : ''}call ${name} ${digest}`),
      toolResult: (name, text, isError) => seen.push(`result ${name}${isError ? ' (error)' : ''}: ${text.slice(0, 30)}`),
      text: (text) => seen.push(`text ${text}`),
      partial: (text) => seen.push(`partial ${text}`),
      turn: (text, final) => seen.push(`turn${final ? ' (final)' : ''} ${text}`),
      result: (m) => seen.push(`done ${resultSummary(m)}`),
    },
  };
}

test('every line of real stream-json output reads as a typed message, and nothing else does', () => {
  for (const name of ['stream-json-session-2.1.197.jsonl', 'stream-json-partial-2.1.197.jsonl']) {
    const lines = fixture(name);
    const read = lines.map(readMessage);
    assert.equal(read.filter((m) => m === null).length, 0, `${name}: every line is one of the five kinds`);
    const kinds = new Set(read.map((m) => m!.type));
    assert.ok(kinds.has('assistant') && kinds.has('user') && kinds.has('result') && kinds.has('system'), name);
  }
  const result = readMessage(fixture('stream-json-session-2.1.197.jsonl').at(-1)) as Extract<ClaudeMessage, { type: 'result' }>;
  assert.deepEqual({ ...result }, { type: 'result', subtype: 'success', is_error: false, duration_ms: 2547, num_turns: 3, total_cost_usd: 0.002, result: 'All done.', denials: 0, errors: [], models: [{ model: 'claude-opus-4-8[1m]', input: 50, output: 70, cacheRead: 0, cacheWrite: 0, costUsd: 0.002 }] });
  // Hostile or garbled lines are dropped, never guessed at.
  for (const x of [null, 7, 'assistant', [], { type: 'nope' }]) assert.equal(readMessage(x), null);
  const odd = readMessage({ type: 'assistant', message: { id: 5, content: [{ type: 'text', text: 3 }, { type: 'thinking', thinking: 'hm' }, { type: 'tool_use', name: 'Bash' }, 'x'] } });
  assert.deepEqual(odd, { type: 'assistant', parent_tool_use_id: null, message: { id: '5', content: [{ type: 'tool_use', id: '', name: 'Bash', input: undefined }] } });
  assert.deepEqual(readMessage({ type: 'user', message: { content: 'a prompt' }, parent_tool_use_id: 'toolu_1' }), { type: 'user', parent_tool_use_id: 'toolu_1', message: { content: [{ type: 'text', text: 'a prompt' }] } });
});

test('a line in a format the bridge does not know is told apart from a message it ignores; real output has none', () => {
  for (const name of ['stream-json-session-2.1.197.jsonl', 'stream-json-partial-2.1.197.jsonl']) {
    const lines = readFileSync(new URL(`./fixtures/claude-code/${name}`, import.meta.url), 'utf8').split('\n').filter((l) => l.trim());
    for (const l of lines) assert.ok(!('unknown' in (readLine(l) ?? {})), `${name}: ${l.slice(0, 80)}`);
  }
  const cases: [string, string | null][] = [
    ['{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}', null],
    ['{"type":"tool_progress","tool_use_id":"t","tool_name":"Bash","elapsed_time_seconds":3}', null],
    ['{"type":"keep_alive"}', null],
    ['Warning: something on stdout', 'a line that is not JSON: Warning: something on stdout'],
    ['[1,2]', 'a line that is not a message: [1,2]'],
    ['{"type":"assistant_v9"}', 'a message of type "assistant_v9"'],
    ['{"no":"type"}', 'a message without a type: {"no":"type"}'],
    ['{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool"}}', 'a control request the bridge cannot answer (can_use_tool)'],
  ];
  for (const [line, unknown] of cases) assert.deepEqual(readLine(line), unknown === null ? null : { unknown }, line);
  assert.equal((readLine('{"type":"system","subtype":"init"}') as ClaudeMessage).type, 'system');
});

test('a run with a subagent: the subagent shows as activity only; the main turns, tool frames and the summary', () => {
  const { sink, seen } = recorder();
  const out = new SessionOutput(sink);
  for (const line of fixture('stream-json-session-2.1.197.jsonl')) {
    const m = readMessage(line);
    if (m) out.read(m);
  }
  assert.deepEqual(seen, [
    'call Agent general-purpose: review cart',
    'subagent call Bash $ echo sub-hello',
    'result Bash: sub-hello',
    'turn ',
    'result Agent: sub doneagentId: aee40cbed211f',
    'call Bash $ exit 3',
    'turn ',
    'result Bash (error): Exit code 3',
    'text All done.',
    'turn (final) All done.',
    'done done in 2.5 s, 3 turns, $0.0020',
  ]);
});

test('a run with partial messages: a turn of text and a tool call, then the answer; partial text comes in pieces, each before its own turn', async () => {
  const { sink, seen } = recorder();
  const out = new SessionOutput(sink);
  // Paced as the CLI printed it: a text delta every 100 ms, everything else at once.
  for (const line of fixture('stream-json-partial-2.1.197.jsonl')) {
    const m = readMessage(line);
    if (!m) continue;
    if (m.type === 'stream_event' && m.event.type === 'content_block_delta') await new Promise((r) => setTimeout(r, 100));
    out.read(m);
  }
  await new Promise((r) => setTimeout(r, 300));
  const durable = seen.filter((s) => !s.startsWith('partial '));
  assert.deepEqual(durable, [
    'text Let me look at the files first.',
    'call Bash $ echo one two',
    'turn Let me look at the files first.',
    'result Bash: one two',
    'text There are two words: one and two.',
    'turn (final) There are two words: one and two.',
    'done done in 1.9 s, 2 turns, $0.0003',
  ]);
  // Each turn's partial text, added up, begins its own text, and none follows it.
  const before: string[] = [];
  let partial = '';
  for (const s of seen) {
    if (s.startsWith('partial ')) partial += s.slice('partial '.length);
    else if (s.startsWith('turn')) before.push(partial), (partial = '');
  }
  assert.equal(partial, '', 'nothing partial after the last turn');
  assert.ok(before[0].length > 0 && 'Let me look at the files first.'.startsWith(before[0]), before[0]);
  assert.ok(before[1].length > 0 && 'There are two words: one and two.'.startsWith(before[1]), before[1]);
  assert.ok(seen.filter((s) => s.startsWith('partial ')).length >= 4, 'several pieces');
});

test('partial text still buffered when its turn completes is dropped, never handed out after the turn', async () => {
  const { sink, seen } = recorder();
  const out = new SessionOutput(sink);
  // Read all at once: every delta is still buffered when its turn completes.
  for (const line of fixture('stream-json-partial-2.1.197.jsonl')) {
    const m = readMessage(line);
    if (m) out.read(m);
  }
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(seen.filter((s) => s.startsWith('partial ')), []);
  assert.equal(seen.filter((s) => s.startsWith('turn')).length, 2);
});

test('newUsage: what a result adds to the process’s modelUsage so far, per model; a model whose figures went down starts again', () => {
  const seen = new Map<string, ModelFigures>();
  const f = (model: string, input: number, output: number, costUsd?: number): ModelFigures => ({ model, input, output, cacheRead: 0, cacheWrite: 0, ...(costUsd !== undefined ? { costUsd } : {}) });
  assert.deepEqual(newUsage(seen, [f('a', 10, 5, 0.01)]), [f('a', 10, 5, 0.01)]);
  assert.deepEqual(newUsage(seen, [f('a', 10, 5, 0.01), f('b', 3, 1)]), [f('b', 3, 1)], 'nothing new for a; b is new');
  const d = newUsage(seen, [f('a', 25, 9, 0.03), f('b', 3, 1)]);
  assert.equal(d.length, 1);
  assert.deepEqual({ ...d[0], costUsd: Math.round(d[0].costUsd! * 1e6) }, { ...f('a', 15, 4), costUsd: 20_000 });
  assert.deepEqual(newUsage(seen, [f('a', 4, 2, 0.001)]), [f('a', 4, 2, 0.001)], 'a new process: taken whole');
});

// Two sub-agents of the same type in one session each have their own usage
// (issue 31: "a session's cost equals the sum of its own and its sub-agents'
// calls"). Claude Code's OTLP `api_request` names a sub-agent only by its
// type (`agent.name`), so with two `general-purpose` helpers the roll-up used
// to show one helper with both helpers' calls. Real server over HTTP; the
// recorded hook payloads of Claude Code 2.1.197 (a second helper is the
// first's payloads with another `agent_id`), then the OTLP records of each
// helper's requests, exported late (after both helpers finished), as the CLI
// batches them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { answer, inProcess } from './support/server.js';

const fixture = (name: string) => {
  const p = JSON.parse(readFileSync(new URL(`./fixtures/claude-code/hooks-real-2.1.197/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;
  // No transcript is read here: OTLP is this session's source.
  delete p.transcript_path;
  delete p.agent_transcript_path;
  return p;
};
const SID = fixture('01-SessionStart.json').session_id as string;
const SESSION = `claude-code:${SID}`;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

let seq = 0;
function apiRequest(at: number, t: { sub?: string; input: number; output: number }): unknown {
  const s = (key: string, v: string) => ({ key, value: { stringValue: v } });
  seq++;
  return {
    timeUnixNano: String(at * 1e6),
    attributes: [
      s('session.id', SID),
      s('event.name', 'api_request'),
      s('event.timestamp', new Date(at).toISOString()),
      { key: 'event.sequence', value: { intValue: seq } },
      s('prompt.id', 'p1'),
      s('model', 'claude-sonnet-4-5'),
      ...(t.sub ? [s('agent.name', t.sub)] : []),
      s('input_tokens', String(t.input)),
      s('output_tokens', String(t.output)),
      s('cache_read_tokens', '0'),
      s('cache_creation_tokens', '0'),
      { key: 'cost_usd', value: { doubleValue: t.input / 1e6 } },
    ],
  };
}
const logs = (records: unknown[]) => ({ resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] }, scopeLogs: [{ logRecords: records }] }] });

test('two general-purpose sub-agents, one after the other: each its own usage, the session the sum of the three', async () => {
  const srv = await inProcess();
  try {
    const hook = async (p: Record<string, unknown>) => {
      const r = await answer(await fetch(`${srv.url}/hooks/claude-code?team=shop`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(p) }));
      assert.equal(r.status, 200, JSON.stringify(r.json));
    };
    const helper = (agentId: string, name: string) => ({ ...fixture(name), agent_id: agentId });
    const records: unknown[] = [];
    await hook(fixture('01-SessionStart.json'));
    await hook(fixture('02-UserPromptSubmit.json'));
    records.push(apiRequest(Date.now(), { input: 1000, output: 100 }));
    await pause(30);
    // The first helper: its start, a tool call, two requests, its stop.
    await hook(helper('aaaa0000000000001', '04-SubagentStart.json'));
    await pause(30);
    records.push(apiRequest(Date.now(), { sub: 'general-purpose', input: 300, output: 30 }));
    await hook(helper('aaaa0000000000001', '05-PreToolUse-Bash-subagent.json'));
    await pause(30);
    records.push(apiRequest(Date.now(), { sub: 'general-purpose', input: 400, output: 40 }));
    await pause(30);
    await hook(helper('aaaa0000000000001', '07-SubagentStop.json'));
    await pause(30);
    records.push(apiRequest(Date.now(), { input: 150, output: 15 }));
    await pause(30);
    // The second helper, of the same type.
    await hook(helper('bbbb0000000000002', '04-SubagentStart.json'));
    await pause(30);
    records.push(apiRequest(Date.now(), { sub: 'general-purpose', input: 250, output: 25 }));
    await pause(30);
    await hook(helper('bbbb0000000000002', '07-SubagentStop.json'));
    await pause(30);
    records.push(apiRequest(Date.now(), { input: 2000, output: 200 }));

    // Exported late, in one batch, once both helpers are done.
    const r = await answer(await fetch(`${srv.url}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(logs(records)) }));
    assert.equal(r.status, 200, JSON.stringify(r.json));

    const state = (await (await fetch(`${srv.url}/usage`)).json()).state;
    const helpers = state.agents.filter((a: any) => a.parent === SESSION).sort((a: any, b: any) => (a.id < b.id ? -1 : 1));
    assert.deepEqual(
      helpers.map((h: any) => [h.id, h.own.input, h.own.output, h.own.requests]),
      [
        [`${SESSION}/aaaa0000000000001`, 700, 70, 2],
        [`${SESSION}/bbbb0000000000002`, 250, 25, 1],
      ],
      'each helper has its own calls, keyed by its own id (not its type)',
    );
    const lead = state.agents.find((a: any) => a.id === SESSION);
    assert.deepEqual([lead.own.input, lead.own.output, lead.own.requests], [3150, 315, 3]);
    const session = new Map<string, any>(state.sessions).get(SESSION);
    assert.equal(session.requests, 6);
    assert.equal(session.costMicros, lead.own.costMicros + helpers[0].own.costMicros + helpers[1].own.costMicros, 'the session costs its own and its two helpers’ calls');
    assert.equal(session.costMicros, 4100, 'the vendor’s cost of the six requests');
  } finally {
    await srv.close();
  }
});

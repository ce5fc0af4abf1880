// What a search hit opens (GET /api/search `open`, docs/search.md): a floor
// hit names nothing more (its agent and position open the timeline); an
// approval's decision names the approval (its page), a Work message its
// conversation, a nest message its nest; ids that are not ids are left out.
// A Work command's result, and what its agent said, open the agent's chat.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess, post } from './support/server.js';
import { decide } from './support/approvals-http.js';
import { client } from './support/work-server.js';

const get = async (url: string) => {
  const r = await fetch(url);
  return { status: r.status, json: await r.json() };
};

test('search hits say what they open: the approval, the conversation, the nest, the list item, the fleet thread and session', async () => {
  const roost = await inProcess();
  try {
    const u = roost.url;
    await post(u, { type: 'tool', agent: 'ada', team: 'Pay', tool: 'Edit', activity: 'okapi floor' });
    const { approval } = await roost.approvals.request({ asker: 'ada', askerName: 'Ada', source: 'test', tool: 'Bash', input: '$ okapi' });
    assert.equal((await decide(u, approval.id, 'deny', 'alice')).status, 200);
    await roost.store.append('work:default', [{ type: 'message.posted', body: JSON.stringify({ type: 'message.posted', conversation: 'c-42', text: 'okapi in work', by: { uid: 'u1', name: 'Uma' } }) }]);
    await roost.store.append('work:default', [
      { type: 'conversation.created', body: JSON.stringify({ type: 'conversation.created', id: 'c-43', title: 'okapi room', by: { uid: 'u1', name: 'Uma' } }) },
      { type: 'conversation.linked', body: JSON.stringify({ type: 'conversation.linked', side: 'project', project: 'default', target: 'c-44', title: 'okapi request', request: 'find the okapi', by: { uid: 'u1', name: 'Uma' } }) },
    ]);
    await roost.store.append('flock', [
      { type: 'nest.message', body: JSON.stringify({ type: 'nest.message', nest_id: 'pay-nest', msg_id: 'm1', kind: 'say', author: 'uma', text: 'okapi in the nest', tagged_by: 'human' }) },
      { type: 'nest.message', body: JSON.stringify({ type: 'nest.message', nest_id: '../../etc <b>', msg_id: 'm2', kind: 'say', author: 'uma', text: 'okapi elsewhere', tagged_by: 'human' }) },
      { type: 'crow.landed', body: JSON.stringify({ type: 'crow.landed', list_id: 'L9', item_id: 'L9-2', crow: 'Munin', ok: true, tokens: 5, output: 'okapi found by a crow' }) },
    ]);
    // A fleet board's turn, posted as a bridge does: it opens its thread at its session.
    const fleet = await fetch(`${u}/fleet/t-7`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'roost-name': 'Claude', 'roost-client': 'bridge', 'roost-bridge': 'b0123456789' },
      body: JSON.stringify([
        { type: 'session.spawn', id: 'fix-1', session: 'fix', root: '/code' },
        { type: 'session.turn', id: 'fix-1', text: 'okapi on the board' },
      ]),
    });
    assert.equal(fleet.status, 200, await fleet.text());
    const hits = (await get(`${u}/api/search?q=okapi&limit=100`)).json.hits as { family: string; kind: string; snippet: string; open: Record<string, string> }[];
    const of = (f: (h: (typeof hits)[number]) => boolean) => hits.find(f)?.open;
    assert.deepEqual(of((h) => h.family === 'floor'), {});
    assert.deepEqual(of((h) => h.kind === 'approval.requested'), { approval: approval.id });
    assert.deepEqual(of((h) => h.kind === 'message.posted'), { conversation: 'c-42' });
    assert.deepEqual(of((h) => h.kind === 'conversation.created'), { conversation: 'c-43' });
    assert.deepEqual(of((h) => h.kind === 'conversation.linked'), { conversation: 'c-44' }, 'a request started in the project opens its conversation');
    assert.deepEqual(of((h) => h.family === 'flock' && h.snippet.includes('nest')), { nest: 'pay-nest' });
    assert.deepEqual(of((h) => h.family === 'flock' && h.snippet.includes('elsewhere')), {}, 'not an id: nothing to open');
    assert.deepEqual(of((h) => h.family === 'flock' && h.snippet.includes('crow')), { item: 'L9-2' }, 'a list item’s event opens the item');
    assert.deepEqual(of((h) => h.family === 'fleet'), { thread: 't-7', session: 'fix-1' });
  } finally {
    await roost.close();
  }
});

test("a Work command's result, what its agent said and the command itself are found, and open the agent's chat in Work", async () => {
  const roost = await inProcess();
  try {
    const u = roost.url;
    const me = client(u, null);
    const space = (await me.post('/api/v2/spaces', { name: 'lap' })).json.id;
    assert.equal((await me.post('/api/v2/projects/default/spaces', { space })).status, 200);
    assert.equal((await me.post(`/api/v2/spaces/${space}/agents`, { full: true, agents: [{ session: 'a1', origin: 'bridge' }] })).status, 200);
    const agent = `${space}:a1`;
    const cmd = await me.post('/api/v2/commands', { project: 'default', agent, text: 'count the quokka tests' });
    assert.equal(cmd.status, 200, JSON.stringify(cmd.json));
    const report = (body: Record<string, unknown>) => me.post(`/api/v2/spaces/${space}/executions`, { command: cmd.json.id, ...body });
    assert.equal((await report({ event: 'started' })).status, 200);
    assert.equal((await report({ event: 'output', text: 'Counting quokka tests in src/' })).status, 200);
    assert.equal((await report({ event: 'finished', status: 'failed', result: '412 quokka tests, 2 failing: refund.spec, ledger.spec' })).status, 200);
    const conversation = (await me.get(`/api/v2/agents/${encodeURIComponent(agent)}?project=default`)).json.item.conversation as string;
    const hits = (await get(`${u}/api/search?q=quokka`)).json.hits as { kind: string; agent: string; status?: string; snippet: string; open: Record<string, string> }[];
    assert.deepEqual(
      hits.map((h) => [h.kind, h.agent, h.open]),
      [
        ['execution.finished', agent, { conversation }],
        ['execution.output', agent, { conversation }],
        ['command.queued', agent, { conversation }],
      ],
      "the result, the agent's line and the command, newest first, each under the agent and opening its chat",
    );
    assert.match(hits[0].snippet, /412 «quokka» tests, 2 failing/);
    // What the hit opens is the chat that shows the result, as its agent's line.
    const opened = (await me.get(`/api/v2/conversations/${encodeURIComponent(conversation)}?project=default`)).json.item as { messages: { kind: string; text: string }[] };
    assert.ok(opened.messages.some((m) => m.kind === 'result' && m.text.startsWith('412 quokka tests')), JSON.stringify(opened.messages));
    const failed = (await get(`${u}/api/search?q=failing&status=failed&agent=${encodeURIComponent(agent)}`)).json.hits as unknown[];
    assert.equal(failed.length, 1, 'a failed result, found by its status and agent');
  } finally {
    await roost.close();
  }
});

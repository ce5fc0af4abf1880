// What a search hit opens (GET /api/search `open`, docs/search.md): a floor
// hit names nothing more (its agent and position open the timeline); an
// approval's decision names the approval (its page), a Work message its
// conversation, a nest message its nest; ids that are not ids are left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess, post } from './support/server.js';
import { decide } from './support/approvals-http.js';

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
    assert.deepEqual(of((h) => h.family === 'work'), { conversation: 'c-42' });
    assert.deepEqual(of((h) => h.family === 'flock' && h.snippet.includes('nest')), { nest: 'pay-nest' });
    assert.deepEqual(of((h) => h.family === 'flock' && h.snippet.includes('elsewhere')), {}, 'not an id: nothing to open');
    assert.deepEqual(of((h) => h.family === 'flock' && h.snippet.includes('crow')), { item: 'L9-2' }, 'a list item’s event opens the item');
    assert.deepEqual(of((h) => h.family === 'fleet'), { thread: 't-7', session: 'fix-1' });
  } finally {
    await roost.close();
  }
});

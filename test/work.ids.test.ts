// Ids that are Object.prototype keys (`constructor`, `toString`, `__proto__`,
// ...) are ordinary ids to Work: an unknown one is a 404, a real one works
// like any other. The review (D3) found five Work routes answering 500 for
// them and one answering 200 for an execution that does not exist: the Work
// state was plain objects read with `[id]`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TestAccess, client, workServer } from './support/work-server.js';

const NAMES = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'];

function people(): TestAccess {
  const a = new TestAccess().person('ann', 'Ann').person('bob', 'Bob');
  a.setRole('alpha', 'ann', 'owner');
  a.setRole('alpha', 'bob', 'editor');
  return a;
}

test('an unknown id that is an Object.prototype key answers 404 on every Work route that takes an id', async () => {
  const s = await workServer(people());
  try {
    const ann = client(s.url, 'ann');
    const sp = await ann.post('/api/v2/spaces', { name: "Ann's laptop" });
    assert.equal((await ann.post('/api/v2/projects/alpha/spaces', { space: sp.json.id })).status, 200);
    for (const n of NAMES) {
      const id = encodeURIComponent(n);
      const calls: [string, Promise<{ status: number; json: any }>][] = [
        [`GET conversations/${n}`, ann.get(`/api/v2/conversations/${id}?project=alpha`)],
        [`GET agents/${n}`, ann.get(`/api/v2/agents/${id}?project=alpha`)],
        [`GET executions/${n}`, ann.get(`/api/v2/executions/${id}?project=alpha`)],
        [`GET results/${n}`, ann.get(`/api/v2/results/${id}?project=alpha`)],
        [`POST conversations/${n}/messages`, ann.post(`/api/v2/conversations/${id}/messages`, { project: 'alpha', text: 'hi' })],
        [`POST agents/${n}/callable`, ann.post(`/api/v2/agents/${id}/callable`, { project: 'alpha', callable: true })],
        [`POST commands/${n}/cancel`, ann.post(`/api/v2/commands/${id}/cancel`, { project: 'alpha' })],
        [`POST commands to ${n}`, ann.post('/api/v2/commands', { project: 'alpha', agent: n, text: 'go' })],
        [`POST spaces/${n}/agents`, ann.post(`/api/v2/spaces/${id}/agents`, { agents: [] })],
        [`POST spaces/${sp.json.id}/executions ${n}`, ann.post(`/api/v2/spaces/${sp.json.id}/executions`, { command: n, event: 'started' })],
      ];
      for (const [what, call] of calls) {
        const r = await call;
        assert.equal(r.status, 404, `${what}: ${r.status} ${JSON.stringify(r.json)}`);
        assert.equal(r.json.kind, 'not_found', what);
      }
      const feed = await fetch(`${s.url}/api/v2/spaces/${id}/commands`, { headers: ann.auth });
      assert.equal(feed.status, 404, `GET spaces/${n}/commands`);
      await feed.body?.cancel();
    }
  } finally {
    await s.close();
  }
});

test('a Space and an agent session named like Object.prototype keys work like any other', async () => {
  const s = await workServer(people());
  try {
    const ann = client(s.url, 'ann');
    const sp = await ann.post('/api/v2/spaces', { name: "Ann's laptop" });
    const space = sp.json.id as string;
    assert.equal((await ann.post('/api/v2/projects/alpha/spaces', { space })).status, 200);
    const r = await ann.post(`/api/v2/spaces/${space}/agents`, { full: true, agents: NAMES.map((n) => ({ session: n, label: `agent ${n}`, origin: 'bridge' })) });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(r.json.agents.map((a: { session: string }) => a.session), NAMES);
    for (const n of NAMES) {
      const a = await ann.get(`/api/v2/agents/${encodeURIComponent(`${space}:${n}`)}?project=alpha`);
      assert.equal(a.status, 200, JSON.stringify(a.json));
      assert.equal(a.json.item.label, `agent ${n}`);
      const cmd = await ann.post('/api/v2/commands', { project: 'alpha', agent: `${space}:${n}`, text: `hello ${n}` });
      assert.equal(cmd.status, 200, JSON.stringify(cmd.json));
    }
  } finally {
    await s.close();
  }
});

// `roost mcp` driven by the MCP SDK's own client over stdio, against a real
// server: status and messages on the floor, the team's task, and a question
// that waits in the approvals inbox (yes, no, silence is a no, no server is a no).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { need } from './support/env.js';
import { inProcess, post, freePort } from './support/server.js';
import { until } from './support/until.js';

const ROOST = join(PACKAGE_ROOT, 'bin', 'roost.js');
const built = existsSync(join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js'));

let roost: Awaited<ReturnType<typeof inProcess>>;
before(async () => {
  roost = await inProcess();
});
after(async () => {
  await roost?.close();
});

async function connect(server: string, ...extra: string[]): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [ROOST, 'mcp', '--server', server, '--agent', 'mcp:reviewer', '--name', 'Reviewer', '--team', 'shop', ...extra], stderr: 'ignore' });
  const client = new Client({ name: 'roost-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

const textOf = (r: any): string => (r.content ?? []).map((c: any) => c.text ?? '').join('');

async function pendingAsk(): Promise<any> {
  return until('the question in the inbox', async () => ((await (await fetch(roost.url + '/approvals')).json())).pending.find((a: any) => a.tool === 'ask_person'), 15_000);
}

async function decide(id: string, decision: 'allow' | 'deny', reason?: string) {
  const r = await fetch(`${roost.url}/approvals/${id}/decision`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision, by: 'alice', reason }) });
  assert.equal(r.status, 200);
}

test('the SDK’s client lists the four tools; status, a message and the team’s task go through the floor', async (t) => {
  if (!need(t, built, 'a build (npm run build)')) return;
  const client = await connect(roost.url);
  try {
    const tools = (await client.listTools()).tools.map((x) => x.name).sort();
    assert.deepEqual(tools, ['ask_person', 'read_task', 'report_status', 'send_message']);

    const s = await client.callTool({ name: 'report_status', arguments: { status: 'working', activity: 'reviewing cart.ts' } });
    assert.equal(s.isError, undefined, textOf(s));
    const me = roost.floor.state.agents.get('mcp:reviewer');
    assert.ok(me, 'the MCP agent stands on the floor');
    assert.equal(me.status, 'working');
    assert.equal(me.activity, 'reviewing cart.ts');
    assert.equal(roost.floor.state.teams.get(me.team)?.name, 'shop');

    assert.equal((await post(roost.url, { type: 'join', agent: 'lead-1', team: 'shop' })).status, 200);
    const m = await client.callTool({ name: 'send_message', arguments: { text: 'cart looks fine', to: ['lead-1'] } });
    assert.equal(m.isError, undefined, textOf(m));
    const events = (await roost.store.read('floor', 0, 10_000)).map((e) => JSON.parse(e.body));
    assert.ok(events.some((e) => e.type === 'message' && e.text === 'cart looks fine' && e.to?.includes('lead-1')), 'a paper plane to lead-1');

    const none = await client.callTool({ name: 'read_task', arguments: {} });
    assert.match(textOf(none), /no task/);
    assert.equal((await post(roost.url, { type: 'task', agent: 'lead-1', task: 'Ship the cart fix' })).status, 200);
    assert.equal(textOf(await client.callTool({ name: 'read_task', arguments: {} })), 'Ship the cart fix');

    const nest = await client.callTool({ name: 'send_message', arguments: { text: 'hi', nest: 'todo' } });
    assert.equal(nest.isError, true, 'a nest this server does not have is an error the agent can read');
    const bad = await client.callTool({ name: 'report_status', arguments: { status: 'dancing' } });
    assert.equal(bad.isError, true, 'a status outside the list is refused');
  } finally {
    await client.close();
  }
});

test('ask_person waits in the approvals inbox: yes, no with the person’s words, silence within the window is a no, no server is a no', async (t) => {
  if (!need(t, built, 'a build (npm run build)')) return;
  const client = await connect(roost.url);
  try {
    // Yes.
    const yes = client.callTool({ name: 'ask_person', arguments: { question: 'May I delete the old fixtures?' } });
    const a = await pendingAsk();
    assert.equal(a.kind, 'tool');
    assert.equal(a.asker, 'mcp:reviewer');
    assert.equal(a.input, 'May I delete the old fixtures?');
    await until('the agent waiting on the floor', () => roost.floor.state.agents.get('mcp:reviewer')?.status === 'waiting', 10_000);
    await decide(a.id, 'allow');
    assert.match(textOf(await yes), /^yes/);

    // No, with a reason.
    const no = client.callTool({ name: 'ask_person', arguments: { question: 'May I force-push main?' } });
    const b = await pendingAsk();
    await decide(b.id, 'deny', 'never on main');
    assert.match(textOf(await no), /^no: never on main/);

    // Silence: the window passes.
    const t0 = Date.now();
    const late = await client.callTool({ name: 'ask_person', arguments: { question: 'Anyone there?', window: '2s' } });
    assert.match(textOf(late), /^no/);
    assert.ok(Date.now() - t0 >= 2000);
  } finally {
    await client.close();
  }
  // No server at all: a no, at once.
  const gone = await connect(`http://127.0.0.1:${await freePort()}`);
  try {
    const r = await gone.callTool({ name: 'ask_person', arguments: { question: 'Hello?' } });
    assert.match(textOf(r), /^no \(.*could not be reached/);
  } finally {
    await gone.close();
  }
});

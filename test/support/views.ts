// Every view of the web app with something in it, for the phone and
// accessibility suites: agents on the floor (one waiting), a held Claude Code
// call in the inbox, a Work conversation with messages, a flock list (with the
// scripted model stand-in); with `more`, beyond them: a long Write (folded)
// and an Edit (a diff) held in the inbox too, and a nest with a message.
// `close()` denies what is still held.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inProcess, post } from './server.js';
import { flockModel, type FlockModel } from './flock-model.js';
import { pendingOf } from './approvals-http.js';
import { until } from './until.js';
import type { Roost } from '../../src/server/index.js';
import type { Page } from 'playwright-core';

const FIX = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'claude-code');
const PRE_BASH = JSON.parse(readFileSync(join(FIX, 'hooks-real-2.1.197', '09-PreToolUse-Bash.json'), 'utf8')) as Record<string, unknown>;
const HOLD = '/hooks/claude-code?approvals=Bash&window=600000&hold=1';

/** The views a person visits, by path, and what each shows once it has its data. */
export const VIEWS = [
  { name: 'floor', path: '/', ready: '[data-testid="agent-row-ada"]' },
  { name: 'inbox', path: '/inbox', ready: '[data-testid="inbox-item"]' },
  { name: 'fleet', path: '/fleet', ready: 'main h1, main h2' },
  { name: 'work', path: '/work', open: 'Release 0.4', ready: '[data-testid="transcript"] li.msg' },
  { name: 'flock', path: '/flock', ready: '[data-testid^="flock-list-"]' },
  { name: 'cost', path: '/cost', ready: 'main h1' },
  { name: 'manage', path: '/manage', ready: 'main h1' },
] as const satisfies readonly { name: string; path: string; ready: string; open?: string }[];

/** Opens a view and waits until its data shows (Work: its conversation, picked in the rail). */
export async function openView(page: Page, base: string, v: (typeof VIEWS)[number]): Promise<void> {
  await page.goto(base + v.path);
  if ('open' in v) await page.locator(`[data-chat-title="${v.open}"]`).click();
  await page.locator(v.ready).first().waitFor({ timeout: 15_000 });
}

export interface Seeded {
  roost: Roost;
  /** The held Bash call's approval id (its decision page is `/inbox/<id>`). */
  decision: string;
  close(): Promise<void>;
}

/** The nest `more` makes, and the text of its message. */
export const NEST = { id: 'release-desk', name: 'Release desk', text: 'Who checks the changelog before we ship?' };

export async function seededViews(opts: { more?: boolean } = {}): Promise<Seeded> {
  const model: FlockModel = await flockModel('anthropic');
  const roost = await inProcess({ models: model.roster() });
  const url = roost.url;
  const agents = [
    { id: 'ada', name: 'Ada', team: 'Backend', status: 'working', tool: 'Bash', activity: 'npm test' },
    { id: 'bo', name: 'Bo', team: 'Backend', status: 'thinking' },
    { id: 'cy', name: 'Cy', team: 'Web', status: 'idle' },
    { id: 'di', name: 'Di', team: 'Web', status: 'error', activity: 'build failed' },
  ];
  for (const a of agents) await post(url, { type: 'join', agent: { id: a.id, name: a.name }, team: a.team, status: a.status, ...(a.tool ? { tool: a.tool } : {}), ...(a.activity ? { activity: a.activity } : {}) });
  // A held call: the inbox's item, the floor's "needs you".
  const held = fetch(url + HOLD, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...PRE_BASH, tool_name: 'Bash', tool_input: { command: 'npm run migrate -- --to 42', description: 'run the migration' }, tool_use_id: 'toolu_views_1' }),
  }).catch(() => undefined);
  await until('the held call pending', async () => ((await pendingOf(url)).length === 1 ? true : undefined), 10_000);
  const decision = String((await pendingOf(url))[0].id);
  const more: Promise<unknown>[] = [];
  if (opts.more) {
    const hold = (tool: string, input: Record<string, unknown>) =>
      more.push(
        fetch(url + '/hooks/claude-code?approvals=Write,Edit&window=600000&hold=1', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...PRE_BASH, tool_name: tool, tool_input: input, tool_use_id: `toolu_views_${tool}` }),
        }).catch(() => undefined),
      );
    hold('Write', { file_path: '/home/dev/shop/NOTES.md', content: Array.from({ length: 60 }, (_, i) => `note ${i + 1}: ${'words '.repeat(12)}`).join('\n') });
    hold('Edit', { file_path: '/home/dev/shop/src/tax.ts', old_string: 'export function tax(x) {\n  return x * 0.2;\n}', new_string: 'export function tax(x) {\n  return x * 0.25;\n}' });
    await until('the Write and the Edit pending', async () => ((await pendingOf(url)).length === 3 ? true : undefined), 10_000);
  }
  // A Work conversation with two messages.
  const json = { 'content-type': 'application/json' };
  const key = () => ({ ...json, 'idempotency-key': `views-${Math.random().toString(36).slice(2)}` });
  const made = await fetch(url + '/api/v2/conversations', { method: 'POST', headers: key(), body: JSON.stringify({ title: 'Release 0.4', project: 'default' }) });
  const conv = (await made.json()) as { id: string };
  if (made.status >= 300) {
    await fetch(`${url}/approvals/${(await pendingOf(url))[0]?.id}/decision`, { method: 'POST', headers: json, body: JSON.stringify({ decision: 'deny' }) }).catch(() => {});
    await roost.close();
    await model.close();
    throw new Error(`a conversation: ${made.status} ${JSON.stringify(conv)}`);
  }
  for (const text of ['Can someone check the migration before we ship?', 'The changelog needs the new flags too.'])
    await fetch(`${url}/api/v2/conversations/${conv.id}/messages`, { method: 'POST', headers: key(), body: JSON.stringify({ text, project: 'default' }) });
  // A flock list.
  await fetch(url + '/api/lists', { method: 'POST', headers: key(), body: JSON.stringify({ text: '- [ ] write the release notes\n- [ ] review the ship checklist', requester: 'ann' }) });
  if (opts.more) {
    const nest = await fetch(url + '/api/nests', { method: 'POST', headers: key(), body: JSON.stringify({ name: NEST.name, crows: ['Pepper'] }) });
    const said = await fetch(`${url}/api/nests/${NEST.id}/messages`, { method: 'POST', headers: key(), body: JSON.stringify({ author: 'owner', text: NEST.text }) });
    if (nest.status !== 201 || said.status !== 201) throw new Error(`a nest: ${nest.status} ${said.status} ${await said.text()}`);
  }
  return {
    roost,
    decision,
    async close() {
      for (const a of await pendingOf(url).catch(() => [])) await fetch(`${url}/approvals/${a.id}/decision`, { method: 'POST', headers: json, body: JSON.stringify({ decision: 'deny' }) }).catch(() => {});
      await held;
      await Promise.all(more);
      await roost.close();
      await model.close();
    },
  };
}

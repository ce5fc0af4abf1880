// Every view of the web app with something in it, for the phone and
// accessibility suites: agents on the floor (one waiting), a held Claude Code
// call in the inbox, a Work conversation with messages, a flock list (with the
// scripted model stand-in). `release()` denies what is still held.
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
  close(): Promise<void>;
}

export async function seededViews(): Promise<Seeded> {
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
  return {
    roost,
    async close() {
      for (const a of await pendingOf(url).catch(() => [])) await fetch(`${url}/approvals/${a.id}/decision`, { method: 'POST', headers: json, body: JSON.stringify({ decision: 'deny' }) }).catch(() => {});
      await held;
      await roost.close();
      await model.close();
    },
  };
}

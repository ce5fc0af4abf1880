// `roost serve --demo` from a fresh data folder, in Chromium (issue 33): within
// 10 s every app of the demo project shows live content (the floor, the fleet
// board, Work, the flock's lists and a nest, Cost, Approvals); an Allow in the
// inbox lets a demo session go on within 2 s, and a Deny makes it say so and
// try another way. The demo model's name shows where a model's name does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { child } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import { PACKAGE_ROOT } from '../src/server/index.js';

type Board = { sessions: { id: string; name: string; state: string; activity: string; turns: number; approvals: { rid: string; state: string; digest: string }[] }[] };

test('--demo: every app alive within 10 s; Allow lets the agent go on, Deny changes its course', { timeout: 180_000 }, async (t) => {
  if (!need(t, chromiumPath() !== null, 'Debian’s chromium (apt-get install chromium)')) return;
  if (!need(t, existsSync(join(PACKAGE_ROOT, 'dist', 'web', 'index.html')), 'the built web app (npm run build)')) return;
  const server = await child({ args: ['--demo'] });
  const browser = await launch({ viewport: { width: 1280, height: 800 } });
  const board = async (): Promise<Board> => (await (await fetch(server.url + '/fleet/default?project=demo')).json()) as Board;
  try {
    const page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const open = async (path: string) => {
      await page.goto(`${server.url}${path}${path.includes('?') ? '&' : '?'}project=demo`);
    };
    const within10 = { timeout: 10_000 };

    // The floor: the demo's teams at work.
    await open('/');
    await page.locator('[data-testid^="agent-row-"]').first().waitFor(within10);
    await page.getByTestId('team-Payments').waitFor(within10);

    // The fleet board: the demo Space's sessions, their chat moving.
    await open('/fleet');
    await page.getByText('Refund flow').first().waitFor(within10);
    await page.getByTestId('chat-line').first().waitFor(within10);

    // Work: the Space's agents and the conversation.
    await open('/work');
    await page.getByText('Docs writer').first().waitFor(within10);
    await page.getByText('Release 2.4').first().waitFor(within10);

    // The flock: a list flying, and the demo model named.
    await open('/flock');
    await page.getByTestId('flock-lists').getByText('changelog entry').first().waitFor(within10);
    assert.match(await page.getByTestId('flock-model').innerText(), /demo model/);
    // A nest talking.
    await open('/flock/nests/launch');
    await page.getByTestId('nest-chat').getByText('taglines').first().waitFor(within10);
    await page.getByTestId('nest-chat').getByText('Refunds that fit every invoice').first().waitFor(within10);

    // Cost: money spent, a budget near its limit, the demo model among the models.
    await open('/cost');
    await page.getByTestId('cost-budget').waitFor(within10);
    await page.waitForFunction(() => !/^\$0 /.test(document.querySelector('[data-testid="cost-total"]')?.textContent ?? '$0 '), undefined, within10);
    await page.getByTestId('cost-models').getByText('demo model').waitFor(within10);

    // Approvals: something waits for a person within 10 s of opening the inbox.
    await open('/inbox');
    await page.getByTestId('inbox-item').first().waitFor(within10);
    // The migration waits for a person. Allow it: the session goes on within 2 s.
    const migrate = page.locator('[data-testid="inbox-item"][data-kind="fleet"]').filter({ hasText: 'db:migrate' });
    await migrate.waitFor({ timeout: 20_000 });
    const refunds = (await board()).sessions.find((s) => s.name === 'Refund flow')!;
    assert.equal(refunds.state, 'waiting');
    await migrate.getByTestId('allow').click();
    const clicked = Date.now();
    for (;;) {
      const s = (await board()).sessions.find((x) => x.id === refunds.id)!;
      if (s.state === 'running' && !s.activity.startsWith('needs approval')) break;
      assert.ok(Date.now() - clicked < 2_000, `the agent went on within 2 s of the Allow (still ${s.state}: ${s.activity})`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // It says what it did with the permission.
    await open('/fleet');
    await page.getByTestId('chat').getByText('Migration applied').first().waitFor({ timeout: 10_000 });

    // The alias swap: Deny it, and the session says so and tries another way.
    await open('/inbox');
    const swap = page.locator('[data-testid="inbox-item"][data-kind="fleet"]').filter({ hasText: '_aliases' });
    await swap.waitFor({ timeout: 30_000 });
    await swap.getByTestId('deny').click();
    await open('/fleet');
    await page.getByTestId('chat').getByText("Another way: I'll write the swap as a runbook step").first().waitFor({ timeout: 10_000 });
    const reindex = (await board()).sessions.find((s) => s.name === 'Search reindex')!;
    assert.equal(reindex.approvals[0].state, 'denied');

    // Earned trust: the Infra team's `npm test` runs on trust, shown in the inbox's history.
    await open('/inbox');
    await page.getByTestId('by-trust').first().waitFor({ timeout: 20_000 });

    // The person's own project stayed empty.
    const def = (await (await fetch(server.url + '/state')).json()) as { agents: unknown[] };
    assert.equal(def.agents.length, 0, 'nothing on the default floor');

    // There, every empty view says the one command that fills it, with a copy button, and links to the demo.
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const firstSteps: [string, string, RegExp][] = [
      ['/', 'first-step-floor', /^npx roost hooks install --user$/],
      ['/fleet', 'first-step-fleet', /^npx roost bridge --server http:\/\/127\.0\.0\.1:\d+ --root ~\/code$/],
      ['/work', 'first-step-work', /^npx roost bridge --server http:\/\/127\.0\.0\.1:\d+ --root ~\/code --contribute$/],
      ['/cost', 'first-step-cost', /^npx roost hooks install --user$/],
      ['/inbox', 'first-step-inbox', /^npx roost hooks install --user --approvals Bash$/],
    ];
    for (const [path, id, command] of firstSteps) {
      await page.goto(server.url + path);
      const step = page.getByTestId(id);
      await step.waitFor({ timeout: 10_000 });
      const text = await step.getByTestId('first-step-command').innerText();
      assert.match(text, command, path);
      assert.equal(new URL((await step.getByTestId('first-step-demo').getAttribute('href'))!, server.url).searchParams.get('project'), 'demo', path);
      await step.getByTestId('first-step-copy').click();
      await step.getByText('Copied').waitFor({ timeout: 5_000 });
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), text, `${path}: the command is on the clipboard`);
    }
    // The flock's empty views a click fills (its model is the demo model here): they say the click and link to the demo.
    for (const [path, id, click] of [
      ['/flock', 'first-step-lists', /Hand over/],
      ['/flock/nests/todo', 'first-step-nest', /Send/],
    ] as const) {
      await page.goto(server.url + path);
      const step = page.getByTestId(id);
      await step.waitFor({ timeout: 10_000 });
      assert.match(await step.innerText(), click, path);
      assert.equal(new URL((await step.getByTestId('first-step-demo').getAttribute('href'))!, server.url).searchParams.get('project'), 'demo', path);
    }
    await open('/flock');
    assert.equal(await page.getByTestId('first-step-lists').count(), 0, 'the demo project has lists, and no first step');
    // The demo link opens the same view in the demo project, alive.
    await page.goto(server.url + '/fleet');
    await page.getByTestId('first-step-fleet').getByTestId('first-step-demo').click();
    await page.getByText('Refund flow').first().waitFor({ timeout: 10_000 });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await server.stop();
  }
});

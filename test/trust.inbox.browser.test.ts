// Earned trust in the inbox, in a real Chromium (issue 30 point 3): a call
// allowed by trust reads "allowed by trust" on the agent's card on the floor
// and in the inbox's history with who earned it, and a person's Revoke drops
// the team a level, so the next such call waits for a person; "Allow and
// trust" on it allows it and makes the class trusted again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { need } from './support/env.js';
import { until } from './support/until.js';
import { decide, pendingOf } from './support/approvals-http.js';
import { holdBash } from './support/held-hooks.js';
import type { Roost } from '../src/server/index.js';

const exe = chromiumPath();

let srv: Roost;
before(async () => {
  srv = await inProcess();
});
after(async () => {
  await srv?.close();
});

const npmTest = (): Promise<any> => holdBash(srv.url, 'npm test');

test('the inbox shows "allowed by trust" with who earned it; Revoke makes the next call wait', { timeout: 120_000 }, async (t) => {
  if (!need(t, exe !== null, 'chromium is not installed')) return;
  const on = await fetch(srv.url + '/api/trust/agents', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ on: true }) });
  assert.equal(on.status, 200);
  for (let i = 0; i < 3; i++) {
    const held = npmTest();
    const a = await until('npm test waiting', async () => (await pendingOf(srv.url))[0], 10_000);
    assert.equal((await decide(srv.url, a.id, 'allow', 'Pat')).status, 200);
    await held;
  }
  const fourth = await npmTest();
  assert.equal(fourth.hookSpecificOutput.permissionDecision, 'allow');

  const b = await launch({ viewport: { width: 1280, height: 900 } });
  try {
    // On the agent's card on the floor too.
    const agentId = ((await (await fetch(srv.url + '/approvals?recent=10')).json()) as { recent: any[] }).recent.find((x) => x.decidedBy === 'trust').asker as string;
    const floor = await b.context.newPage();
    await floor.goto(srv.url + '/');
    // On the floor itself, over the canvas, without opening anything.
    const overFloor = floor.getByTestId(`floor-trusted-${agentId}`);
    await overFloor.waitFor();
    assert.match((await overFloor.textContent()) ?? '', /npm test.*allowed by trust \(earned from Pat\)/);
    await floor.getByTestId(`agent-row-${agentId}`).locator('button').first().click();
    const onCard = floor.getByTestId('agent-card').getByTestId('card-by-trust');
    await onCard.waitFor();
    assert.match((await onCard.textContent()) ?? '', /npm test.*allowed by trust \(earned from Pat\)/);
    await floor.close();

    // The page's Trust section: on, the never-classes, the team's level at the class and who earned it.
    const flock = await b.context.newPage();
    await flock.goto(srv.url + '/flock');
    const section = flock.getByTestId('agents-trust');
    await section.getByTestId('agents-trust-alpha-npm test').waitFor();
    assert.match((await section.getByTestId('agents-trust-on').textContent()) ?? '', /Earned trust is on/);
    assert.match((await section.getByTestId('agents-trust-never').textContent()) ?? '', /git push.*rm.*sudo/);
    assert.match((await section.getByTestId('agents-trust-alpha-npm test').textContent()) ?? '', /trusted/);
    assert.match((await section.getByTestId('agents-trust-history').textContent()) ?? '', /alpha \(npm test\) regular → trusted after approved by Pat, approved by Pat, approved by Pat/);
    // An owner adds a never-class there: an event, and the ledger says so.
    await section.getByTestId('agents-trust-never-edit').click();
    await section.getByTestId('agents-trust-never-input').fill('git push, rm, sudo, make deploy');
    await section.getByRole('button', { name: 'Save' }).click();
    await until('the never-class saved', async () => ((await (await fetch(srv.url + '/api/trust')).json()).agents.never.includes('make deploy') ? true : undefined), 10_000);
    await section.getByText('make deploy').waitFor();
    await flock.close();

    const page = await b.context.newPage();
    await page.goto(srv.url + '/inbox');
    const line = page.locator('[data-testid="by-trust"]');
    await line.waitFor();
    assert.equal(await line.count(), 1);
    assert.match((await line.textContent()) ?? '', /allowed by trust \(earned from Pat\)/);
    await page.locator('[data-testid="trust-revoke"]').click();
    await page.locator('[data-testid="trust-revoked"]').waitFor();
    const ledger = (await (await fetch(srv.url + '/api/trust')).json());
    assert.equal(ledger.agents.holders[0].level, 1, 'a level down');
    const fifth = npmTest();
    await until('the next npm test waits', async () => (await pendingOf(srv.url))[0], 10_000);
    // "Allow and trust this class" on the waiting call: allowed, and the class is trusted again at once.
    await page.locator('[data-testid="inbox-item"] [data-testid="allow-trust"]').click();
    assert.equal((await fifth).hookSpecificOutput.permissionDecision, 'allow');
    const after = (await (await fetch(srv.url + '/api/trust')).json());
    assert.equal(after.agents.holders[0].level, 2, 'trusted again');
  } finally {
    await b.close();
  }
  assert.equal((await npmTest()).hookSpecificOutput.permissionDecision, 'allow', 'the next one by trust');

  // Revoked from the floor: its line over the canvas names the newest call allowed by trust; Revoke drops the team a level and the next call waits.
  const b2 = await launch({ viewport: { width: 1280, height: 900 } });
  try {
    const newest = ((await (await fetch(srv.url + '/approvals?recent=10')).json()) as { recent: any[] }).recent.find((x) => x.decidedBy === 'trust');
    const floor = await b2.context.newPage();
    await floor.goto(srv.url + '/');
    const line = floor.getByTestId(`floor-trusted-${newest.asker}`);
    await line.waitFor();
    assert.match((await line.textContent()) ?? '', /npm test.*allowed by trust/);
    await line.getByTestId('trust-revoke').click();
    await line.getByTestId('trust-revoked').waitFor();
    const ledger = await (await fetch(srv.url + '/api/trust')).json();
    assert.equal(ledger.agents.holders[0].level, 1, 'a level down, from the floor');
    assert.ok(ledger.agents.history.some((h: any) => h.approval === newest.id && h.to === 1), 'the revocation names the call it revoked');
    const next = npmTest();
    const waiting = await until('the next npm test waits', async () => (await pendingOf(srv.url))[0], 10_000);
    assert.equal(waiting.tool, 'Bash');
    await decide(srv.url, waiting.id, 'deny', 'Pat');
    assert.equal((await next).hookSpecificOutput.permissionDecision, 'deny');
  } finally {
    await b2.close();
  }
});

// The growing answer on a fleet card (issue 17, part 2), end to end: the real
// bridge (`roost bridge`) runs the real Claude Code CLI with partial
// messages, the model stand-in streams each answer in pieces, and a member
// watches the session's card in Chromium. `session.stream` frames carry only
// the text added since the previous frame; the card must show the answer so
// far (the sum of the frames), growing, and start afresh at the next turn.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { need, screenshotDir } from './support/env.js';
import { inProcess, tempDir } from './support/server.js';
import { chromiumPath, launch } from './support/browser.js';
import { CLAUDE_BIN, claudeAvailable } from './support/claude.js';
import { modelStandin, step, text, askedWithBash as asked } from './support/model-standin.js';
import { until } from './support/until.js';
import { bridgeBuilt, killBridges, startBridge } from './support/bridge.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/index.js';

// window.__roostFleet, as the page declares it (types only).
import type {} from '../web/src/live/useFleet.js';

declare global {
  interface Window {
    /** Every text the session's live line showed, in order ('' when it was gone). */
    __liveSeen?: string[];
  }
}

after(killBridges);

const THREAD = 'crew';
const A1 = 'The login form posts to the wrong endpoint, so the session cookie is never set; one line in redirect.ts fixes it.';
const A2 = 'Done: redirect.ts posts to the new endpoint, and a test now covers the redirect after signing in.';
/** Twelve pieces, 200 ms apart (more than the bridge's 150 ms relay period): about twelve frames an answer. */
const PIECES = { count: 12, everyMs: 200 };

async function post(url: string, path: string, body: unknown): Promise<number> {
  const r = await fetch(`${url}/fleet/${THREAD}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'roost-name': 'Paul' }, body: JSON.stringify(body) });
  await r.text();
  return r.status;
}

test('a fleet card shows the whole growing answer, frame by frame, and starts afresh at the next turn', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, chromiumPath() !== null, 'chromium is not installed (apt-get install chromium, or set ROOST_CHROMIUM)')) return;
  if (!need(t, bridgeBuilt() && existsSync(join(PACKAGE_ROOT, 'dist', 'web', 'index.html')), 'a build (npm run build)')) return;
  const model = await modelStandin([step({ ...text(A1), pieces: PIECES }, asked('PROMPT-ONE')), step({ ...text(A2), pieces: PIECES }, asked('PROMPT-TWO'))]);
  const roost = await inProcess();
  const bridge = await startBridge(['--server', roost.url, '--root', tempDir('roost-growing-root-'), '--thread', THREAD, '--claude', CLAUDE_BIN, '--approvals', 'off'], {
    HOME: tempDir('roost-growing-home-'),
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: 'test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  });
  const browser = await launch({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await browser.context.newPage();
    await page.goto(`${roost.url}/fleet/${THREAD}`);
    await page.getByLabel('Your name').fill('Ana');
    await page.waitForFunction((th) => window.__roostFleet?.[th]?.connection === 'live', THREAD, { timeout: 10_000 });
    assert.equal(await post(roost.url, '/requests', { type: 'request.start', id: 'g1', session: 'growing', flavor: 'plain' }), 200);
    const card = page.getByTestId('session-g1');
    await card.getByTestId('session-state').getByText('Idle').waitFor({ timeout: 60_000 });
    // Record every text the card's live line shows, as the page renders it.
    await page.evaluate(() => {
      const el = document.querySelector('[data-testid="session-g1"]')!;
      window.__liveSeen = [];
      let last = '';
      new MutationObserver(() => {
        const now = el.querySelector('[data-testid="session-live"]')?.textContent?.trim() ?? '';
        if (now !== last) window.__liveSeen!.push((last = now));
      }).observe(el, { childList: true, subtree: true, characterData: true });
    });

    const watch = async (prompt: string, answer: string, n: number): Promise<string[]> => {
      await page.evaluate(() => (window.__liveSeen!.length = 0));
      assert.equal(await post(roost.url, '', { type: 'session.prompt', id: 'g1', text: prompt }), 200);
      if (n === 1) {
        // A picture of the card mid-answer, for the docs and for a person to look at.
        await until('half the answer on the card', async () => ((await card.getByTestId('session-live').textContent().catch(() => '')) ?? '').length > answer.length / 2, 30_000);
        await card.screenshot({ path: join(screenshotDir(PACKAGE_ROOT), 'fleet-growing-answer.png') });
      }
      await page.getByTestId('chat-line').filter({ hasText: `[growing] ${answer}` }).waitFor({ timeout: 60_000 });
      await until(`the result of prompt ${n}`, async () => (await card.getByTestId('session-state').textContent()) === 'Idle', 30_000);
      return page.evaluate(() => window.__liveSeen!.slice());
    };

    for (const [n, prompt, answer, other] of [
      [1, 'PROMPT-ONE why does sign-in fail?', A1, ''],
      [2, 'PROMPT-TWO fix it', A2, A1],
    ] as const) {
      const seen = await watch(prompt, answer, n);
      const shown = seen.filter((s) => s !== '');
      assert.ok(shown.length >= 4, `prompt ${n}: the live line changed as the answer grew (${JSON.stringify(seen)})`);
      for (const s of shown) assert.ok(answer.startsWith(s), `prompt ${n}: the card shows the answer so far, not a slice of it: ${JSON.stringify(s)}`);
      for (let i = 1; i < shown.length; i++) assert.ok(shown[i].length > shown[i - 1].length, `prompt ${n}: it only grows: ${JSON.stringify(shown)}`);
      assert.ok(shown.at(-1)!.length > answer.length / 2, `prompt ${n}: most of the answer was on the card before its turn: ${JSON.stringify(shown.at(-1))}`);
      if (other) for (const s of shown) assert.ok(!s.includes(other.slice(0, 20)), `prompt ${n}: the previous answer is gone: ${JSON.stringify(s)}`);
      assert.equal(seen.at(-1), '', `prompt ${n}: the turn replaced the live line`);
      assert.equal(await card.getByTestId('session-live').count(), 0);
      t.diagnostic(`prompt ${n}: the card showed ${shown.length} growing texts`);
    }
  } catch (e) {
    console.error(bridge.log());
    throw e;
  } finally {
    await browser.close();
    await bridge.stop();
    await roost.close();
    await model.close();
  }
});

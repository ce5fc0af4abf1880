// A flock and a bridge for the code-item suites (test/flock.bridge*.claude.test.ts):
// the flock's models on the scripted stand-in (support/flock-model.ts), the
// real `roost bridge` on a thread, and the steps every such test takes.
import assert from 'node:assert/strict';
import { inProcess, tempDir } from './server.js';
import { CLAUDE_BIN } from './claude.js';
import type { ModelStandin, Usage } from './model-standin.js';
import { killBridges, startBridge, type BridgeProc } from './bridge.js';
import { flockModel, type FlockModel } from './flock-model.js';
import { flockClient, type FlockClient, type ListWatch } from './flock-client.js';
import type { Roost } from '../../src/server/index.js';

export const THREAD = 'crew';

/** What Claude Code asked the stand-in, in tokens of every kind (the default 10 in, 5 out where a step says nothing). */
export function tokensOf(model: ModelStandin, usages: Partial<Usage>[]): number {
  let n = 0;
  for (const r of model.requests) {
    const u = { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, ...(r.step >= 0 ? usages[r.step] : {}) };
    n += u.input_tokens + u.output_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
  }
  return n;
}

export async function withServer(run: (x: { roost: Roost; c: FlockClient; flock: FlockModel }) => Promise<void>): Promise<void> {
  const flock = await flockModel('anthropic');
  const roost = await inProcess({ models: flock.roster(), flockBanterWaitMs: 2000 }, tempDir());
  try {
    await run({ roost, c: flockClient(roost.url), flock });
  } finally {
    await killBridges();
    await roost.close();
    await flock.close();
  }
}

export function bridgeOn(url: string, repo: string, modelUrl: string, extra: string[] = []): Promise<BridgeProc> {
  return startBridge(['--server', url, '--token', 'bridge-token', '--root', repo, '--thread', THREAD, '--claude', CLAUDE_BIN, ...extra], {
    HOME: tempDir('roost-flock-bridge-home-'),
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: 'test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  });
}

/** Approves the item's triage once it waits, and returns the crow.flying of its worker. */
export async function triagedAndFlying(c: FlockClient, w: ListWatch, item: string): Promise<Record<string, any>> {
  const triaged = await w.next('item.triaged', (d) => d.item_id === item, 30_000);
  assert.equal(triaged.data.task_type, 'code');
  assert.equal(triaged.data.mode, 'solo');
  assert.equal(triaged.data.needs_approval, true);
  assert.equal((await c.verdict(item, 'triage', true)).status, 204);
  return (await w.next('crow.flying', (d) => d.item_id === item && d.crow !== 'Sentry', 30_000)).data;
}


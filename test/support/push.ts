// The push tests' set-up: a push-service stand-in (support/push-service.ts)
// and a fresh in-process Roost, with the browser's part (fetch the server's
// key, subscribe, hand the subscription to Roost) done in one call.
import assert from 'node:assert/strict';
import { inProcess } from './server.js';
import { PushServiceStandin, type StandinSubscription } from './push-service.js';
import type { Roost } from '../../src/server/index.js';

/** A JSON request to a full URL; the answer's status and JSON body (null when empty). */
export async function send(url: string, body: unknown, method = 'POST'): Promise<{ status: number; json: any }> {
  const r = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const t = await r.text();
  return { status: r.status, json: t ? JSON.parse(t) : null };
}

export interface PushRig {
  ps: PushServiceStandin;
  roost: Roost;
  /** A new browser subscription made with the server's key and handed to Roost (for `project`, or the default one). */
  subscribe(project?: string): Promise<StandinSubscription>;
}

/** Runs `body` with a stand-in and a fresh server, and closes both whatever happens. */
export async function withPushRig(body: (rig: PushRig) => Promise<void>): Promise<void> {
  const ps = await new PushServiceStandin().start();
  const roost = await inProcess();
  try {
    const { publicKey } = (await (await fetch(`${roost.url}/push`)).json()) as { publicKey: string };
    const subscribe = async (project?: string) => {
      const sub = ps.subscribe(publicKey);
      const r = await send(`${roost.url}/push/subscriptions${project ? `?project=${project}` : ''}`, PushServiceStandin.json(sub));
      assert.equal(r.status, 200, JSON.stringify(r.json));
      return sub;
    };
    await body({ ps, roost, subscribe });
  } finally {
    await roost.close();
    await ps.close();
  }
}

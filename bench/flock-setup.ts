// What the flock benches share (bench/flock.ts, bench/flock-ingest.ts): a
// model that answers at once (or after `delayMs`), in-process, and a real
// server on a SQLite file with every verdict approved the moment it is asked.

import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteStore } from '../src/storage/index.js';
import { startRoost, type Roost } from '../src/server/app.js';
import { ModelRoster, parseModelSpec } from '../src/models/config.js';
import type { ModelProvider, ModelRequest, ModelOutcome } from '../src/models/index.js';
import type { PostOrder, PostReport, PosterMessage } from './flock-poster.js';
import { postJson } from './post-json.js';

const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, total: 15, estimated: false };

/** A provider with no network and no tokens to wait for (after `delay.ms`, when set; it may change between calls). */
export function instantModel(delay: { ms: number } = { ms: 0 }): ModelProvider {
  const wait = () => (delay.ms > 0 ? new Promise((r) => setTimeout(r, delay.ms)) : Promise.resolve());
  return {
    provider: 'bench',
    model: 'instant',
    label: 'bench:instant',
    capabilities: { structuredOutput: true, tokenUsage: true, streaming: false },
    async call(req: ModelRequest): Promise<ModelOutcome> {
      await wait();
      if (req.tool?.name === 'triage') return { ok: true, kind: 'tool', input: { mode: 'solo', task_type: 'writing', subtasks: [], reason: 'bench' }, text: '', usage, model: 'instant', stop: 'tool' };
      if (req.tool) return { ok: true, kind: 'tool', input: { answer: 'merged' }, text: '', usage, model: 'instant', stop: 'tool' };
      return { ok: true, kind: 'text', text: 'done, and nicely', usage, model: 'instant', stop: 'end' };
    },
  };
}

export interface FlockBench {
  roost: Roost;
  /** POST /api/lists; resolves with the list id. */
  post(text: string, requester: string): Promise<string>;
  /** Hands over `n` one-item lists in turn until trust skips every approval (about 60). */
  warmUp(n?: number): Promise<number[]>;
  /**
   * A client in a process of its own (bench/flock-poster.ts): `post` hands
   * over a list (after the 202 of the one before; resolves with the id of
   * the next list that finishes, this one when the lists go one at a time),
   * and `reports` gets each list's id and the clock (process.hrtime, shared
   * by the processes of the machine) as its request left and as its 202 arrived.
   */
  poster(): Promise<{
    post(text: string, requester: string): Promise<string>;
    reports(): Promise<{ list_id: string; sent: bigint; accepted: bigint }[]>;
    close(): void;
  }>;
  /** Every model call waits this long from now on (the warm-up runs at once, whatever the bench's delay). */
  setDelay(ms: number): void;
  close(): Promise<void>;
}

/** A roster whose every role is `instantModel(delay)`. */
export function instantRoster(delay: { ms: number } = { ms: 0 }): ModelRoster {
  const spec = parseModelSpec('anthropic:instant');
  if (!spec.ok) throw new Error(spec.message);
  const model = instantModel(delay);
  return new ModelRoster({ default: spec.value, roles: {} }, { make: () => model });
}

/** Every verdict of `roost` approved by `by` the moment it is asked (a person who never hesitates). */
export function approveVerdicts(roost: Roost, by: string): void {
  roost.approvals.onRequested((a) => {
    if (a.kind === 'verdict') void roost.approvals.decide(a.id, 'allow', by).catch(() => {});
  });
}

export async function flockBench(delayMs = 0): Promise<FlockBench> {
  const dir = mkdtempSync(join(tmpdir(), 'roost-bench-flock-'));
  const delay = { ms: delayMs };
  const roost = await startRoost(new SqliteStore({ path: join(dir, 'roost.db') }), { port: 0, models: instantRoster(delay), flockBanterWaitMs: 1000 });
  approveVerdicts(roost, 'bench');
  // The bench's client is node:http on kept-alive sockets, not fetch: it shares the server's
  // process (the per-item time needs the server's fold), and fetch's streams and promises
  // were about half the process's garbage, so its scavenges landed on Roost's items.
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const url = new URL(roost.url);
  const post = async (text: string, requester: string): Promise<string> => {
    const r = await postJson(agent, url, '/api/lists', JSON.stringify({ text, requester }));
    if (r.status !== 202) throw new Error(`POST /api/lists answered ${r.status}: ${r.text}`);
    return (JSON.parse(r.text) as { list_id: string }).list_id;
  };
  return {
    roost,
    post,
    // The flock is trusted at writing after 6 approved triages, each crow after 6 approved outputs.
    async warmUp(n = 60) {
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        await roost.flock.finished(await post('write a warm-up note', `warm-${i}`));
        times.push(performance.now() - t0);
      }
      return times;
    },
    async poster() {
      const child = fork(fileURLToPath(new URL('./flock-poster.js', import.meta.url)), [roost.url], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      await new Promise<void>((ok, fail) => {
        child.once('spawn', ok);
        child.once('error', fail);
      });
      // One list in the air at a time: its finish, or the poster's error, settles it.
      let finish: { resolve(id: string): void; reject(e: Error): void } | null = null;
      let asked: ((r: PostReport[]) => void) | null = null;
      const off = roost.flock.onListFinished((id) => finish?.resolve(id));
      child.on('message', (m: PosterMessage) => {
        if ('error' in m) finish?.reject(new Error(m.error));
        else asked?.(m.reports);
      });
      return {
        post(text: string, requester: string) {
          return new Promise<string>((resolve, reject) => {
            finish = {
              resolve: (id) => {
                finish = null;
                resolve(id);
              },
              reject,
            };
            child.send({ text, requester } satisfies PostOrder);
          });
        },
        reports() {
          return new Promise((resolve) => {
            asked = (rs) => {
              asked = null;
              resolve(rs.map((r) => ({ list_id: r.list_id, sent: BigInt(r.sent), accepted: BigInt(r.accepted) })));
            };
            child.send({ reports: true });
          });
        },
        close() {
          off();
          child.disconnect();
        },
      };
    },
    setDelay(ms: number) {
      delay.ms = ms;
    },
    async close() {
      agent.destroy();
      await roost.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// What the real-CLI approval tests share: hooks installed by `roost hooks
// install`, a model script that asks to write a marker with Bash, the
// approvals API, and a stopwatch for "withdrawn and no longer waiting".
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT, type Roost } from '../../src/server/index.js';
import { until } from './until.js';
import { approvalsOf } from './approvals-http.js';
import { and, hasResult, not, offersTool, step, text, toolUse } from './model-standin.js';

const ROOST = join(PACKAGE_ROOT, 'bin', 'roost.js');
export const built = existsSync(join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js'));
export const MARKER = 'approved-marker.txt';

export function install(project: string, server: string, ...extra: string[]): string {
  return execFileSync(process.execPath, [ROOST, 'hooks', 'install', '--project', project, '--server', server, ...extra], { encoding: 'utf8' });
}

/** The model asks to run `echo yes > MARKER` with Bash (tool_use `id`), then finishes once it has the result. */
export function markerScript(id: string) {
  return [step(toolUse('Bash', { command: `echo yes > ${MARKER}`, description: 'write a marker' }, id), and(offersTool('Bash'), not(hasResult(id)))), step(text('finished'), hasResult(id))];
}

export { approvalsOf, decide } from './approvals-http.js';

/** The pending Bash approval for the marker, once the CLI's hook has asked. */
export function pendingMarker(url: string, ms = 60_000): Promise<any> {
  return until('a pending approval for the marker', async () => (await approvalsOf(url)).pending.find((a) => a.tool === 'Bash' && a.input.includes(MARKER)), ms);
}

export interface LetGo {
  closedMs: number;
  notWaitingMs: number;
  status: string;
  floor: string;
}

/**
 * Waits (polling every 10 ms) until the approval is closed and its agent is
 * no longer waiting on the floor; returns how long each took after `t0`.
 */
export async function whenLetGo(roost: Roost, id: string, agent: string, t0: number): Promise<LetGo> {
  let closedMs = -1;
  let notWaitingMs = -1;
  const end = t0 + 10_000;
  while (Date.now() < end && (closedMs < 0 || notWaitingMs < 0)) {
    const a = roost.approvals.state.byId.get(id);
    if (closedMs < 0 && a && a.status !== 'pending') closedMs = Date.now() - t0;
    if (notWaitingMs < 0 && roost.floor.state.agents.get(agent)?.status !== 'waiting') notWaitingMs = Date.now() - t0;
    await new Promise((r) => setTimeout(r, 10));
  }
  return { closedMs, notWaitingMs, status: roost.approvals.state.byId.get(id)?.status ?? '?', floor: roost.floor.state.agents.get(agent)?.status ?? '?' };
}

/** Withdrawn, and the agent not waiting, each within 2 s (the numbers are printed for the docs). */
export function checkLetGo(what: string, r: LetGo): void {
  console.log(`# ${what}: approval ${r.status} after ${r.closedMs} ms, agent ${r.floor} after ${r.notWaitingMs} ms`);
  assert.equal(r.status, 'withdrawn', `${what}: the approval is withdrawn`);
  assert.ok(r.closedMs >= 0 && r.closedMs <= 2000, `${what}: withdrawn within 2 s (took ${r.closedMs} ms)`);
  assert.ok(r.notWaitingMs >= 0 && r.notWaitingMs <= 2000, `${what}: the agent no longer waiting within 2 s (still ${r.floor})`);
}

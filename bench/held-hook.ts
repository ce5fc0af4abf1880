// Claude Code's fail-closed command hook (`hold=1`) with Bash under the approval rules,
// posting its recorded PreToolUse payload: what the `trust` and `bulk` workloads send. Like
// bin/roost-hook.js, each call names its request with a fresh random key (`request=`), so the
// approval's id is derived from it and its append is keyed, as for a real agent's call.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/app.js';
import { sleep } from './lib.js';

const pre = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'test', 'fixtures', 'claude-code', 'hooks-real-2.1.197', '09-PreToolUse-Bash.json'), 'utf8')) as Record<string, unknown>;
/** One held hook call of `command`; resolves to the hook's decision. */
export const hold = (url: string, command: string, k: number) =>
  fetch(`${url}/hooks/claude-code?approvals=Bash&window=120000&hold=1&team=bench&request=${randomBytes(16).toString('hex')}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...pre, tool_input: { command }, tool_use_id: `toolu_bench_${k}` }) }).then(
    async (r) => ((await r.json()) as { hookSpecificOutput?: { permissionDecision?: string } }).hookSpecificOutput?.permissionDecision ?? '',
  );
const pendingOf = async (url: string) => ((await (await fetch(url + '/approvals')).json()) as { pending: { id: string; input: string }[] }).pending;
/** The pending approvals once at least `n` calls wait. */
export const waitPending = async (url: string, n: number) => {
  for (const end = Date.now() + 60_000; Date.now() < end; await sleep(20)) {
    const p = await pendingOf(url);
    if (p.length >= n) return p;
  }
  throw new Error(`${n} calls did not come to wait`);
};

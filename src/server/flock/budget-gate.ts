// The flock's budget gate: a project whose budget is spent (a paused
// project-wide budget, src/core/usage.ts "Budgets") flies nothing more. The
// flock asks before every model call (FlockService.call, the one place a
// flight's call starts); a refused call is a failed one that says why, with
// no tokens spent, and is not retried.

import type { ModelOutcome } from '../../models/types.js';
import type { UsageService } from '../usage.js';

/** Null when the call may fly; else the failed outcome to return in its place. */
export async function budgetGate(usage: (() => Promise<UsageService>) | undefined): Promise<ModelOutcome | null> {
  if (!usage) return null;
  const why = (await usage()).projectPauseReason();
  if (!why) return null;
  return { ok: false, error: { kind: 'bad_request', message: `the flock flies nothing more: ${why}`, retryable: false }, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, estimated: false }, model: '' };
}

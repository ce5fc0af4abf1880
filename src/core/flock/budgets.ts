// Budgets: the project's token budget (`budget.set`) and one list's
// (`list.budget`), each within FLOCK_LIMITS' bounds. A list's spending is
// counted on its landings (flights.ts); the driver checks what still fits.

import { FLOCK_LIMITS, type FlockEffect, type FlockState, type FlockStep } from './model.js';
import { get, int, type Obj } from './read.js';
import { liveList } from './lookups.js';

function projectBudget(s: FlockState, o: Obj): FlockEffect[] {
  const b = int(get(o, 'token_budget'), FLOCK_LIMITS.minBudget, FLOCK_LIMITS.maxBudget);
  if (b === undefined || b === s.budget.project) return [];
  s.budget.project = b;
  return [{ kind: 'budget' }];
}

function listBudget(s: FlockState, o: Obj): FlockEffect[] {
  const list = liveList(s, get(o, 'list_id'));
  const b = int(get(o, 'token_budget'), FLOCK_LIMITS.minBudget, FLOCK_LIMITS.maxBudget);
  if (!list || b === undefined) return [];
  list.token_budget = b;
  return [{ kind: 'list', list_id: list.list_id }];
}

/** The handlers of budgets. */
export const BUDGET_STEPS: Readonly<Record<string, FlockStep>> = {
  'budget.set': projectBudget,
  'list.budget': listBudget,
};

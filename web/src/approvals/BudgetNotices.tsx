// The inbox's budget notices: each budget whose 80% or 100% crossing still
// stands (src/core/usage.ts, budgetNotices), read from the project's usage
// scope of the one live connection through the shared usage fold (the same
// client the Cost page uses), each linking to the Cost page. A person hides
// one with Dismiss; that is remembered in this browser only (a later
// crossing, a new limit or a new day is a new notice and shows again).

import { useState } from 'preact/hooks';
import { budgetAmount, budgetNotices, budgetSpent } from '../../../src/core/usage.js';
import { useUsage } from '../live/usage.js';
import { followLink } from '../shared/navigate.js';
import { loadJson, saveJson } from '../shared/prefs.js';
import { inProject } from '../shared/scope.js';
import { useNow } from '../shared/time.js';

const DISMISSED = 'roost.inbox.budgets.dismissed';
/** Dismissed notices a browser remembers (the oldest go first). */
const DISMISSED_MAX = 200;

function loadDismissed(): string[] {
  const v = loadJson<unknown>(DISMISSED, []);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').slice(-DISMISSED_MAX) : [];
}

export function BudgetNotices(props: { project: string }) {
  const client = useUsage(props.project);
  const now = useNow();
  const [dismissed, setDismissed] = useState(loadDismissed);
  const shown = budgetNotices(client.state, props.project, now).filter((n) => !dismissed.includes(n.id));
  if (shown.length === 0) return null;
  const cost = inProject('/cost', props.project);
  const dismiss = (id: string) => {
    const next = [...loadDismissed().filter((d) => d !== id), id].slice(-DISMISSED_MAX);
    saveJson(DISMISSED, next);
    setDismissed(next);
  };
  return (
    <section aria-labelledby="inbox-budgets-h" data-testid="inbox-budgets">
      <h2 id="inbox-budgets-h">Budgets</h2>
      <ul class="inbox-recent" aria-live="polite">
        {shown.map((n) => {
          const b = n.budget;
          const amounts = `${budgetAmount(b.unit, budgetSpent(client.state, b, now))} of ${budgetAmount(b.unit, b.limit)}${b.period === 'day' ? ' today' : ''}`;
          return (
            <li key={n.id} class={`inbox-out inbox-budget${n.paused ? ' inbox-budget-paused' : ''}`} data-testid="inbox-budget" data-budget={b.key} data-threshold={n.threshold}>
              <span class="inbox-outcome">{n.paused ? 'Paused' : n.threshold === 100 ? 'Spent' : '80% reached'}</span>
              <span data-testid="inbox-budget-text">
                {n.paused ? (
                  <>
                    {n.paused}. Its agents’ tool calls are denied until an owner raises or lifts the budget.
                  </>
                ) : n.threshold === 100 ? (
                  <>
                    The budget for {n.label} is spent ({amounts}); an owner lifted the pause.
                  </>
                ) : (
                  <>
                    The budget for {n.label} is 80% spent ({amounts}).
                  </>
                )}
              </span>
              <span class="inbox-meta">
                <a href={cost} onClick={followLink(cost)} data-testid="inbox-budget-cost">
                  Cost page
                </a>
                {n.at > 0 && <> · {new Date(n.at).toLocaleTimeString()}</>}{' '}
                <button type="button" class="inbox-budget-dismiss" onClick={() => dismiss(n.id)} aria-label={`Dismiss the notice for ${n.label}`} data-testid="inbox-budget-dismiss">
                  Dismiss
                </button>
              </span>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

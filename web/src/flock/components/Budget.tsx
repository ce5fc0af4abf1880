// The project's default token budget for new lists (a list may name its own):
// shown in the header, changed by an owner (PUT /api/budget). The new value
// comes back on the stream (`budget.set`), like every change.
import { useState } from 'preact/hooks';
import { FLOCK_LIMITS } from '../../../../src/core/flock.js';
import { sendJson } from '../../shared/api.js';
import { inProject } from '../../shared/scope.js';

export function Budget(props: { tokens: number }) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ status: number; message: string } | null>(null);
  const start = () => {
    setValue(String(props.tokens));
    setError(null);
    setEditing(true);
  };
  const save = async (e: Event) => {
    e.preventDefault();
    const n = Number(value.replace(/[\s,_]/g, ''));
    if (!Number.isInteger(n) || n < FLOCK_LIMITS.minBudget || n > FLOCK_LIMITS.maxBudget) {
      return setError({ status: 0, message: `A budget is a whole number of tokens from ${FLOCK_LIMITS.minBudget.toLocaleString('en-US')} to ${FLOCK_LIMITS.maxBudget.toLocaleString('en-US')}.` });
    }
    setBusy(true);
    const r = await sendJson('PUT', inProject('/api/budget'), { token_budget: n });
    setBusy(false);
    if (r.ok) return setEditing(false);
    setError({ status: r.status, message: r.status === 403 ? `Only an owner can set the budget (${r.message}).` : r.message });
  };
  return (
    <div class="fl-project-budget">
      <span class="fl-muted" data-testid="flock-default-budget">
        Default budget {props.tokens.toLocaleString('en-US')} tokens a list
      </span>
      {!editing ? (
        <button type="button" data-testid="flock-budget-edit" onClick={start}>
          Change
        </button>
      ) : (
        <form class="fl-inline fl-field" data-testid="flock-budget-form" onSubmit={(e) => void save(e)}>
          <label class="fl-inline fl-field">
            Tokens a list
            <input data-testid="flock-budget-input" inputMode="numeric" size={12} value={value} onInput={(e) => setValue((e.target as HTMLInputElement).value)} />
          </label>
          <button type="submit" data-testid="flock-budget-save" disabled={busy}>
            Save
          </button>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      )}
      {error && (
        <p class="fl-refusal" data-testid="flock-budget-error" data-status={String(error.status)}>
          {error.message}
        </p>
      )}
    </div>
  );
}

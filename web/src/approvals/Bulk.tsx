// Decisions in bulk in the inbox (issue 30 point 4, docs/approvals.md
// "Decisions in bulk"): pick many waiting calls (one by one, or every shown
// one of a team, an agent, a tool, an action class, or all shown), then Allow
// or Deny them in one action with an optional note. The server decides each
// through the one decide path; this shows its per-item answer, naming each
// item it did not decide (a 409: someone else decided first). The outcomes
// themselves come on the stream, as for any decision.

import { useState } from 'preact/hooks';
import type { Approval } from '../../../src/core/approvals.js';
import { decideMany, type BulkResult } from '../shared/approvals/api.js';

/** The server's cap on one bulk decision (src/server/approvals-bulk.ts BULK_MAX). */
export const BULK_MAX = 200;

/** What was picked, by id, with the request as it was when picked (to name it in the result once it is gone). */
export type Picked = Map<string, Approval>;

type Dim = 'all' | 'team' | 'agent' | 'tool' | 'class';
const DIMS: [Dim, string][] = [
  ['all', 'all shown'],
  ['team', 'team'],
  ['agent', 'agent'],
  ['tool', 'tool'],
  ['class', 'action class'],
];

function keyOf(a: Approval, dim: Dim): string {
  if (dim === 'team') return a.team;
  if (dim === 'agent') return a.askerName;
  if (dim === 'tool') return a.tool;
  if (dim === 'class') return a.actionClass ?? '';
  return '';
}

/** An ask is answered with its own phrase, on its own: never picked for a bulk decision. */
export function pickable(a: Approval): boolean {
  return a.kind !== 'ask' && a.status === 'pending';
}

interface Outcome {
  decision: 'allow' | 'deny';
  decided: number;
  /** The items the server did not decide, with the request as picked. */
  missed: (BulkResult & { a?: Approval })[];
}

const WHY: Record<number, string> = { 409: 'someone else decided first', 403: 'your own token asked for it', 404: 'no longer known' };

export function BulkBar(props: { pending: Approval[]; picked: Picked; setPicked(p: Picked): void }) {
  const { pending, picked, setPicked } = props;
  const [dim, setDim] = useState<Dim>('all');
  const [value, setValue] = useState('');
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [error, setError] = useState('');
  const values = dim === 'all' ? [] : [...new Set(pending.filter(pickable).map((a) => keyOf(a, dim)))].filter(Boolean).sort();
  const chosen = values.includes(value) ? value : (values[0] ?? '');
  const select = () => {
    const next = new Map(picked);
    for (const a of pending) {
      if (next.size >= BULK_MAX) break;
      if (pickable(a) && (dim === 'all' || keyOf(a, dim) === chosen)) next.set(a.id, a);
    }
    setPicked(next);
  };
  const send = async (decision: 'allow' | 'deny') => {
    if (picked.size === 0) return;
    setBusy(true);
    setError('');
    const sent = new Map(picked);
    const r = await decideMany([...sent.keys()].slice(0, BULK_MAX), decision, note.trim() || undefined);
    setBusy(false);
    if (!r.ok) {
      setError(r.message);
      return;
    }
    setOutcome({ decision, decided: r.body.decided, missed: r.body.results.filter((x) => x.status !== 200).map((x) => ({ ...x, a: sent.get(x.id) })) });
    setPicked(new Map());
    setNote('');
  };
  const n = picked.size;
  // Nothing to pick and nothing to report: no bar.
  if (n === 0 && !outcome && !error && !pending.some(pickable)) return null;
  return (
    <div class="inbox-bulk" data-testid="bulk">
      <div class="inbox-bulk-row">
        <label>
          Select
          <select value={dim} data-testid="bulk-by" onChange={(e) => setDim((e.target as HTMLSelectElement).value as Dim)}>
            {DIMS.map(([d, label]) => (
              <option key={d} value={d}>
                {label}
              </option>
            ))}
          </select>
        </label>
        {dim !== 'all' && (
          <select value={chosen} aria-label={`which ${dim}`} data-testid="bulk-value" onChange={(e) => setValue((e.target as HTMLSelectElement).value)}>
            {values.map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </select>
        )}
        <button type="button" onClick={select} disabled={dim !== 'all' && !chosen} data-testid="bulk-select">
          Select
        </button>
        <button type="button" onClick={() => setPicked(new Map())} disabled={n === 0} data-testid="bulk-clear">
          Clear
        </button>
        <span class="inbox-bulk-n" data-testid="bulk-count">
          {n} selected
        </span>
      </div>
      {n > 0 && (
        <div class="inbox-bulk-row">
          <input
            type="text"
            value={note}
            maxLength={2000}
            placeholder="Note to the agent (optional; on a deny its model reads it)"
            aria-label="Note to the agent"
            data-testid="bulk-note"
            onInput={(e) => setNote((e.target as HTMLInputElement).value)}
          />
          <button type="button" class="inbox-allow" disabled={busy} onClick={() => send('allow')} data-testid="bulk-allow">
            Allow {n}
          </button>
          <button type="button" class="inbox-deny" disabled={busy} onClick={() => send('deny')} data-testid="bulk-deny">
            Deny {n}
          </button>
        </div>
      )}
      {error && (
        <p class="inbox-error" role="alert">
          {error}
        </p>
      )}
      {outcome && (
        <div class="inbox-bulk-result" role="status" data-testid="bulk-result">
          <p data-testid="bulk-decided">
            {outcome.decision === 'allow' ? 'Allowed' : 'Denied'} {outcome.decided}
            {outcome.missed.length > 0 && <>; {outcome.missed.length} not decided by you:</>}
          </p>
          {outcome.missed.length > 0 && (
            <ul>
              {outcome.missed.map((m) => (
                <li key={m.id} data-testid="bulk-missed" data-approval={m.id} data-status={m.status}>
                  <code class="inbox-tool">{m.a?.tool ?? m.id}</code> {m.a?.askerName} {m.a?.input && <span class="inbox-digest">{m.a.input}</span>}: {WHY[m.status] ?? `status ${m.status}`}
                  {m.message && <> ({m.message})</>}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}

// The trust ledger: every holder's level per task type, its run of approvals
// and its verdict counts, then the history of changes (newest first), read
// off the fold with the server's own `flockLedger`. An owner demotes (one
// level down) or resets (to stranger) a holder above stranger, with a reason
// (POST /api/trust); the change comes back on the stream as a history line
// naming who and why. Someone who is not an owner gets the server's refusal.
import { useState } from 'preact/hooks';
import type { LedgerJSON } from '../../../../src/core/flock.js';
import { postJson } from '../../shared/api.js';
import { inProject } from '../../shared/scope.js';
import { AgentsTrust } from './AgentsTrust.js';

type Action = 'demote' | 'reset';

function Change(props: { holder: string; task_type: string; level: number; action: Action; levels: readonly string[]; onDone: () => void }) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ status: number; message: string } | null>(null);
  const to = props.action === 'reset' ? 0 : props.level - 1;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!reason.trim()) return setError({ status: 0, message: 'Say why: the reason goes into the ledger.' });
    setBusy(true);
    const r = await postJson(inProject('/api/trust'), { holder: props.holder, task_type: props.task_type, action: props.action, reason: reason.trim() });
    setBusy(false);
    if (r.ok) return props.onDone();
    setError({ status: r.status, message: r.status === 403 ? `Only an owner can change trust (${r.message}).` : r.message });
  };
  return (
    <form class="fl-change" data-testid="trust-change" onSubmit={(e) => void submit(e)}>
      <p>
        {props.action === 'reset' ? 'Reset' : 'Demote'} <strong>{props.holder}</strong> at {props.task_type}: {props.levels[props.level]} → {props.levels[to]}
      </p>
      <label class="fl-field">
        Reason (kept in the ledger)
        <input data-testid="trust-reason" value={reason} maxLength={500} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
      </label>
      {error && (
        <p class="fl-refusal" data-testid="trust-error" data-status={String(error.status)}>
          {error.message}
        </p>
      )}
      <div class="fl-row">
        <button type="submit" data-testid="trust-confirm" disabled={busy}>
          {props.action === 'reset' ? 'Reset' : 'Demote'}
        </button>
        <button type="button" onClick={props.onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function Ledger(props: { ledger: LedgerJSON }) {
  const { holders, history, rules } = props.ledger;
  const [change, setChange] = useState<{ holder: string; task_type: string; action: Action } | null>(null);
  const open = change && holders.find((h) => h.holder === change.holder && h.task_type === change.task_type && h.level > 0);
  return (
    <section class="fl-ledger" data-testid="flock-ledger" aria-label="Trust ledger">
      <h2>Trust</h2>
      <p class="fl-muted">
        {rules.promote_after} approvals in a row move a holder up a level; a rejection or a timeout moves it down. Trusted holders skip the approval. An owner can demote or reset a
        holder, with a reason.
      </p>
      {holders.length === 0 ? (
        <p class="fl-muted" data-testid="flock-ledger-empty">
          No verdicts yet: every holder is a stranger.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Holder</th>
              <th>Task</th>
              <th>Level</th>
              <th>Run</th>
              <th title="approved">✓</th>
              <th title="rejected">✗</th>
              <th title="timed out">late</th>
              <th>
                <span class="sr-only">Owner actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {holders.map((h) => (
              <tr key={`${h.holder}/${h.task_type}`} data-testid={`trust-${h.holder}-${h.task_type}`}>
                <td>{h.holder}</td>
                <td>{h.task_type}</td>
                <td>
                  <span class={`fl-level fl-level-${h.level}`}>{h.level_name}</span>
                </td>
                <td>{h.run}</td>
                <td>{h.approved}</td>
                <td>{h.rejected}</td>
                <td>{h.timeout}</td>
                <td class="fl-actions">
                  {h.level > 0 && (
                    <>
                      <button type="button" data-testid={`trust-demote-${h.holder}-${h.task_type}`} title={`Demote ${h.holder} at ${h.task_type} one level`} onClick={() => setChange({ holder: h.holder, task_type: h.task_type, action: 'demote' })}>
                        Demote
                      </button>
                      <button type="button" data-testid={`trust-reset-${h.holder}-${h.task_type}`} title={`Reset ${h.holder} at ${h.task_type} to stranger`} onClick={() => setChange({ holder: h.holder, task_type: h.task_type, action: 'reset' })}>
                        Reset
                      </button>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {change && open && <Change key={`${change.holder}/${change.task_type}/${change.action}`} {...change} level={open.level} levels={props.ledger.levels} onDone={() => setChange(null)} />}
      <h3>History</h3>
      {history.length === 0 ? (
        <p class="fl-muted">No level has changed yet.</p>
      ) : (
        <ol class="fl-history" data-testid="flock-history" reversed>
          {history
            .slice()
            .reverse()
            .map((c) => (
              <li key={c.id}>
                <strong>{c.holder}</strong> ({c.task_type}) {props.ledger.levels[c.from]} → {props.ledger.levels[c.to]}
                {c.by ? ` by ${c.by}: ${c.reason ?? ''}` : c.because.length ? ` after ${c.because.map((b) => `${b.target} ${b.verdict}`).join(', ')}` : ''}
              </li>
            ))}
        </ol>
      )}
      <AgentsTrust />
    </section>
  );
}

// The trust ledger: every holder's level per task type, its run of approvals
// and its verdict counts, then the history of changes (newest first), read
// off the fold with the server's own `flockLedger`.
import type { LedgerJSON } from '../../../../src/core/flock.js';

export function Ledger(props: { ledger: LedgerJSON }) {
  const { holders, history, rules } = props.ledger;
  return (
    <section class="fl-ledger" data-testid="flock-ledger" aria-label="Trust ledger">
      <h2>Trust</h2>
      <p class="fl-muted">
        {rules.promote_after} approvals in a row move a holder up a level; a rejection or a timeout moves it down. Trusted holders skip the approval.
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
              </tr>
            ))}
          </tbody>
        </table>
      )}
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
    </section>
  );
}

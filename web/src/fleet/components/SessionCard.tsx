// One session of the thread as a card: its state, activity and live output,
// counts, root and result, its pending approvals (answerable here) and the
// decisions taken, and Prompt / Close.
import { memo } from 'preact/compat';
import { useState } from 'preact/hooks';
import type { Approval, Session } from '../../../../src/core/fleet.js';
import type { Answer } from '../../shared/api.js';
import { FleetApprovalList } from '../../shared/approvals/FleetApprovals.js';
import { close } from '../api.js';
import { FLAVOR_TEXT, STATE_COLOR, STATE_LABEL } from '../look.js';

// The folds keep an unchanged session and an unchanged join the same objects: a card re-renders only when its session or its requests changed.
export const SessionCard = memo(
  SessionCardView,
  (a, b) => a.s === b.s && a.approvals === b.approvals && a.live === b.live && a.thread === b.thread && a.readOnly === b.readOnly,
);

/**
 * `approvals`: the session's requests as the approvals fold holds them
 * (`sessionApprovals`, src/core/fleet-approvals.ts); the rewound past shows
 * the board's own. `readOnly`: the board rewound to the past
 * (web/src/shared/Rewind.tsx): shown, never acted on (no answers, no prompt,
 * no close).
 */
function SessionCardView(props: { s: Session; approvals: Approval[]; thread: string; live?: { type: string; tool: string; text: string }; onPrompt: (id: string) => void; readOnly?: boolean }) {
  const { s, thread, live } = props;
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState('');
  const pending = props.approvals.filter((a) => a.state === 'pending');
  const decided = props.approvals.filter((a) => a.state !== 'pending');
  const ended = s.state === 'ended';
  const hid = `session-h-${s.id}`;
  const show = (r: Answer) => setError(r.ok ? '' : r.message);
  return (
    <article class={`scard scard-${s.state}${pending.length ? ' needs' : ''}`} aria-labelledby={hid} data-testid={`session-${s.id}`} data-state={s.state} style={{ '--c': STATE_COLOR[s.state] }}>
      <header>
        <h2 id={hid} data-testid="session-name">
          {s.name}
        </h2>
        <span class="sr-only">State:</span>
        <span class={`pill pill-${s.state}`} data-testid="session-state">
          {STATE_LABEL[s.state]}
        </span>
        <span class="flavor" title={FLAVOR_TEXT[s.flavor]}>
          <span class="sr-only">, flavor </span>
          {s.flavor}
        </span>
      </header>
      <span class="sr-only">Activity:</span>
      <p class="activity" data-testid="session-activity">
        {s.activity || (ended ? (s.reason && s.reason !== 'closed' ? `Ended: ${s.reason}` : 'Closed') : '—')}
      </p>
      {live && (live.tool || live.text) && (
        // The growing answer wraps and keeps its newest lines in view; a tool's output stays one line.
        <p class={live.type === 'session.stream' ? 'live answer' : 'live'} data-testid="session-live" title="Live output (not kept)">
          {live.tool && <code>{live.tool}</code>} <span>{live.text}</span>
        </p>
      )}
      <dl>
        <dt>Prompts</dt>
        <dd data-testid="session-prompts">{s.prompts}</dd>
        <dt>Turns</dt>
        <dd data-testid="session-turns">{s.turns}</dd>
        {s.root && (
          <>
            <dt>Root</dt>
            <dd>
              <code>{s.root}</code>
            </dd>
          </>
        )}
        {s.worktree && (
          <>
            <dt>Worktree</dt>
            <dd>
              <code>{s.worktree}</code>
            </dd>
          </>
        )}
        {s.by && (
          <>
            <dt>Asked by</dt>
            <dd>{s.by}</dd>
          </>
        )}
        <dt>Result</dt>
        <dd class="result" data-testid="session-result">
          {s.result || '—'}
        </dd>
      </dl>
      {pending.length > 0 && (
        <section class="approvals" aria-label={`Waiting for approval in ${s.name}`}>
          <h3>Needs approval</h3>
          {props.readOnly ? (
            <ul data-testid="past-approvals">
              {pending.map((a) => (
                <li key={a.rid} data-testid={`pending-${a.rid}`}>
                  <code>{a.tool || 'a tool'}</code> {a.digest && <span class="digest">{a.digest}</span>} — waiting
                </li>
              ))}
            </ul>
          ) : (
            <FleetApprovalList thread={thread} session={s} approvals={pending} onError={setError} />
          )}
        </section>
      )}
      {decided.length > 0 && (
        <details class="decided">
          <summary>Decisions ({decided.length})</summary>
          <ul>
            {decided.map((a) => (
              <li key={a.rid} data-testid={`decided-${a.rid}`} data-state={a.state}>
                <code>{a.tool || 'a tool'}</code> {a.digest && <span class="digest">{a.digest}</span>} — {a.state} by {a.by || 'someone'}
              </li>
            ))}
          </ul>
        </details>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!ended && !props.readOnly && (
        <footer>
          <button onClick={() => props.onPrompt(s.id)} aria-label={`Prompt ${s.name}`}>
            Prompt
          </button>
          {confirming ? (
            <span class="confirm" role="group" aria-label={`Close ${s.name}?`}>
              <span>Close it? {s.flavor === 'scoped' ? 'Its worktree is removed; committed branches stay.' : 'Its process ends.'}</span>
              <button class="danger" data-testid="close-confirm" onClick={async () => (setConfirming(false), show(await close(thread, s.id)))}>
                Close session
              </button>
              <button onClick={() => setConfirming(false)}>Keep</button>
            </span>
          ) : (
            <button onClick={() => setConfirming(true)} aria-label={`Close ${s.name}…`} data-testid="close">
              Close…
            </button>
          )}
        </footer>
      )}
    </article>
  );
}

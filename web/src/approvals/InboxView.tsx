// The approvals inbox: every pending decision of every agent in one place,
// oldest first, answered with Allow or Deny; below, the recent outcomes (who
// decided, when). Driven only by the approvals stream through the shared
// fold: nothing polls, and a click changes nothing until its outcome comes
// back on the stream (the first decision in the log wins, whoever made it).

import { useState } from 'preact/hooks';
import { pendingApprovals, pendingFor, recentApprovals, type Approval } from '../../../src/core/approvals.js';
import { decide, since, useApprovals, useNow } from './live.js';
import { SessionApprovalsInbox } from '../board/SessionApprovals.js';
import './inbox.css';

function ApprovalItem(props: { a: Approval; now: number; compact?: boolean }) {
  const { a, now } = props;
  const [sent, setSent] = useState(false);
  const [error, setError] = useState('');
  const answer = async (d: 'allow' | 'deny') => {
    setSent(true);
    const r = await decide(a.id, d);
    if (!r.ok) {
      // 409: someone (or the window) was first; the stream is about to say so.
      setError(r.message);
      setSent(r.status === 409);
    }
  };
  const left = a.deadline - now;
  return (
    <li class="inbox-item" data-testid="inbox-item" data-approval={a.id} data-agent={a.agent}>
      <div class="inbox-what">
        {!props.compact && (
          <p class="inbox-who">
            <strong data-testid="inbox-agent">{a.agentName}</strong>
            {a.team && <span class="inbox-team">{a.team}</span>}
            {a.source && <span class="inbox-source">{a.source}</span>}
          </p>
        )}
        <p class="inbox-ask">
          wants to run <code class="inbox-tool" data-testid="inbox-tool">{a.tool}</code>
        </p>
        {a.input && (
          <pre class="inbox-input" data-testid="inbox-input">
            {a.input}
          </pre>
        )}
        <p class="inbox-time">
          waiting <span data-testid="inbox-waiting">{since(now - a.requestedAt)}</span>
          {' · '}
          {left > 0 ? <>no answer means deny in {since(left)}</> : <>window passed: denied</>}
        </p>
        {error && (
          <p class="inbox-error" role="alert">
            {error}
          </p>
        )}
      </div>
      <div class="inbox-answer">
        <button class="inbox-allow" disabled={sent} onClick={() => answer('allow')} aria-label={`Allow ${a.tool} for ${a.agentName}`} data-testid="allow">
          Allow
        </button>
        <button class="inbox-deny" disabled={sent} onClick={() => answer('deny')} aria-label={`Deny ${a.tool} for ${a.agentName}`} data-testid="deny">
          Deny
        </button>
      </div>
    </li>
  );
}

const OUTCOME: Record<string, string> = { allowed: 'Allowed', denied: 'Denied', expired: 'No answer: denied', withdrawn: 'Withdrawn' };

export function InboxView() {
  const client = useApprovals();
  const now = useNow();
  const pending = pendingApprovals(client.state);
  const recent = recentApprovals(client.state, 20);
  return (
    <div class="inbox" data-testid="inbox">
      <div class="inbox-bar">
        <h1>Approvals</h1>
        <span class={`conn conn-${client.connection}`} data-testid="inbox-connection">
          <span class="dot" aria-hidden="true" />
          {client.connection}
        </span>
      </div>
      <section aria-labelledby="inbox-pending-h">
        <h2 id="inbox-pending-h">
          Waiting for you <span class="inbox-n" data-testid="inbox-count">{pending.length}</span>
        </h2>
        {pending.length === 0 ? (
          <p class="inbox-empty" data-testid="inbox-empty">
            Nothing waits for a decision. With <code>roost hooks install --approvals Bash</code>, an agent’s Bash calls wait here.
          </p>
        ) : (
          <ul class="inbox-list" aria-live="polite">
            {pending.map((a) => (
              <ApprovalItem key={a.id} a={a} now={now} />
            ))}
          </ul>
        )}
      </section>
      {/* Remote sessions of the fleet board ask through their own stream; they are answered here too. */}
      <SessionApprovalsInbox />
      <section aria-labelledby="inbox-recent-h">
        <h2 id="inbox-recent-h">Recent</h2>
        {recent.length === 0 ? (
          <p class="inbox-empty">No decisions yet.</p>
        ) : (
          <ul class="inbox-recent" data-testid="inbox-recent">
            {recent.map((a) => (
              <li key={a.id} class={`inbox-out inbox-out-${a.status}`}>
                <span class="inbox-outcome">{OUTCOME[a.status] ?? a.status}</span> <code class="inbox-tool">{a.tool}</code> <span class="inbox-digest">{a.input}</span>
                <span class="inbox-meta">
                  {a.agentName}
                  {a.decidedBy && <> · by {a.decidedBy}</>}
                  {a.decidedAt !== null && <> · {new Date(a.decidedAt).toLocaleTimeString()}</>}
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}

/** The pending approvals of one floor agent, for its card (empty when none). */
export function AgentApprovals(props: { agent: string }) {
  const client = useApprovals();
  const now = useNow();
  const list = pendingFor(client.state, props.agent);
  if (list.length === 0) return null;
  return (
    <ul class="inbox-list inbox-on-card" data-testid="card-approvals">
      {list.map((a) => (
        <ApprovalItem key={a.id} a={a} now={now} compact />
      ))}
    </ul>
  );
}

/** The number of pending approvals (for the nav). */
export function usePendingCount(): number {
  const client = useApprovals();
  let n = 0;
  for (const a of client.state.byId.values()) if (a.status === 'pending') n++;
  return n;
}

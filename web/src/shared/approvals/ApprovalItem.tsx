// Approvals of every kind (an agent's tool call held by its hook, a fleet
// board session's request asked by its bridge, ...), answerable with Allow or
// Deny wherever they show: the approvals inbox, and the card of the agent on
// the floor. Driven only by the approvals stream through the shared fold
// (../../live/approvals.ts), decided through the one endpoint: a click
// changes nothing until its outcome comes back on the stream.

import { useState } from 'preact/hooks';
import { pendingFor, type Approval } from '../../../../src/core/approvals.js';
import { useApprovals } from '../../live/approvals.js';
import { since, useNow } from '../time.js';
import { decideApproval } from './api.js';
import './approvals.css';

export function ApprovalItem(props: { a: Approval; now: number; compact?: boolean }) {
  const { a, now } = props;
  const [sent, setSent] = useState(false);
  const [error, setError] = useState('');
  const answer = async (d: 'allow' | 'deny') => {
    setSent(true);
    const r = await decideApproval(a.id, d);
    if (!r.ok) {
      // 409: someone (or the window) was first; the stream is about to say so.
      setError(r.message);
      setSent(r.status === 409);
    }
  };
  const left = a.deadline - now;
  return (
    <li class="inbox-item" data-testid="inbox-item" data-approval={a.id} data-agent={a.asker} data-kind={a.kind}>
      <div class="inbox-what">
        {!props.compact && (
          <p class="inbox-who">
            <strong data-testid="inbox-agent">{a.askerName}</strong>
            {a.team && <span class="inbox-team">{a.team}</span>}
            {a.source && <span class="inbox-source">{a.source}</span>}
            {a.kind === 'fleet' && a.scope.thread && (
              <span class="inbox-thread" data-testid="inbox-thread">
                fleet board #{a.scope.thread}
              </span>
            )}
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
        <button class="inbox-allow" disabled={sent} onClick={() => answer('allow')} aria-label={`Allow ${a.tool} for ${a.askerName}`} data-testid="allow">
          Allow
        </button>
        <button class="inbox-deny" disabled={sent} onClick={() => answer('deny')} aria-label={`Deny ${a.tool} for ${a.askerName}`} data-testid="deny">
          Deny
        </button>
      </div>
    </li>
  );
}

/** The pending approvals of one floor agent, for its card (nothing when none). */
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

/** How many approvals of any kind wait (for the nav badge). */
export function usePendingCount(): number {
  const client = useApprovals();
  let n = 0;
  for (const a of client.state.byId.values()) if (a.status === 'pending') n++;
  return n;
}

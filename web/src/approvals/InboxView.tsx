// The approvals inbox: every pending decision of every kind in one place
// (agents' hooks, the fleet board's sessions, ...), oldest first, answered
// with Allow or Deny through the one decide endpoint; below, the recent
// outcomes (who decided, when). Driven only by the approvals stream through the shared
// fold: nothing polls, and a click changes nothing until its outcome comes
// back on the stream (the first decision in the log wins, whoever made it).

import { recentApprovals } from '../../../src/core/approvals.js';
import { ConnectionBadge } from '../shared/ConnectionBadge.js';
import { ProjectSwitcher } from '../shared/ProjectSwitcher.js';
import { ApprovalItem } from '../shared/approvals/ApprovalItem.js';
import { useNow } from '../shared/time.js';
import { useWaiting } from '../shared/waiting.js';
import './inbox.css';

const OUTCOME: Record<string, string> = { allowed: 'Allowed', denied: 'Denied', expired: 'No answer: denied', withdrawn: 'Withdrawn' };

export function InboxView() {
  // The page's project; the same list the floor's "Waiting for you" and the nav badge count.
  const { list: pending, client } = useWaiting();
  const now = useNow();
  const recent = recentApprovals(client.state, 20);
  return (
    <div class="inbox" data-testid="inbox">
      <div class="inbox-bar">
        <h1>Approvals</h1>
        <ProjectSwitcher testid="inbox-project" />
        <ConnectionBadge state={client.connection} testid="inbox-connection" />
      </div>
      <section aria-labelledby="inbox-pending-h">
        <h2 id="inbox-pending-h">
          Waiting for you <span class="inbox-n" data-testid="inbox-count">{pending.length}</span>
        </h2>
        {pending.length === 0 ? (
          <p class="inbox-empty" data-testid="inbox-empty">
            Nothing waits for a decision. With <code>roost hooks install --approvals Bash</code>, an agent’s Bash calls wait here; so do the fleet board’s sessions that ask, the flock’s verdicts and a nest’s asks for the owner (approved by typing their phrase).
          </p>
        ) : (
          <ul class="inbox-list" aria-live="polite">
            {pending.map((a) => (
              <ApprovalItem key={a.id} a={a} now={now} />
            ))}
          </ul>
        )}
      </section>
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
                  {a.askerName}
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

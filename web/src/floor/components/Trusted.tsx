// "Allowed by trust" on the floor itself (issue 30 point 3), not only in the
// inbox and on an agent's card: over the canvas, the newest call of each agent
// on the floor that the one trust ledger allowed without a person, with who
// earned it and Revoke (its team drops a level at that class; the next such
// call waits). The agent's name opens its card.
import { recentApprovals, type Approval } from '../../../../src/core/approvals.js';
import type { FloorState } from '../../../../src/core/floor.js';
import { useApprovals } from '../../live/approvals.js';
import { TrustLine } from '../../shared/approvals/TrustLine.js';
import { pageProject } from '../../shared/scope.js';

/** The newest closed approvals looked at, and the agents' lines shown at most. */
const LOOK_AT = 100;
const SHOW = 3;

export function FloorTrusted(props: { state: FloorState; onPick: (id: string) => void }) {
  const client = useApprovals(pageProject());
  const lines: Approval[] = [];
  const seen = new Set<string>();
  for (const a of recentApprovals(client.state, LOOK_AT)) {
    if (!a.trust || seen.has(a.asker)) continue;
    seen.add(a.asker);
    const agent = props.state.agents.get(a.asker);
    if (agent && agent.leftAt === null) lines.push(a);
  }
  if (lines.length === 0) return null;
  return (
    <section class="floor-trusted" aria-label="Allowed by trust" data-testid="floor-trusted">
      <h2>Allowed by trust</h2>
      <ul>
        {lines.slice(0, SHOW).map((a) => (
          <li key={a.id} data-testid={`floor-trusted-${a.asker}`}>
            <button type="button" class="who" onClick={() => props.onPick(a.asker)}>
              {props.state.agents.get(a.asker)?.name ?? a.askerName ?? a.asker}
            </button>{' '}
            <code class="inbox-tool">{a.tool}</code> <span class="inbox-digest">{a.input}</span>
            <TrustLine a={a} />
          </li>
        ))}
      </ul>
      {lines.length > SHOW && <p class="more">and {lines.length - SHOW} more agents (each on its card)</p>}
    </section>
  );
}

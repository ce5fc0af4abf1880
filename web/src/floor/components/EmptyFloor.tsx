import { FirstStep } from '../../shared/FirstStep.js';

/** What an empty floor says: how to make an agent appear. */
export function EmptyFloor() {
  return (
    <div class="empty" data-testid="empty">
      <h2>The floor is empty</h2>
      <p>
        Agents appear here as soon as they report. Every Claude Code session of yours reports once the hooks are in:
      </p>
      <FirstStep command="npx roost hooks install --user" testid="first-step-floor" />
      <p>Or post one event:</p>
      <pre>{`curl -XPOST ${location.origin}/events -H 'content-type: application/json' \\\n  -d '{"type":"status","agent":"bot-1","team":"Payments","status":"working"}'`}</pre>
    </div>
  );
}

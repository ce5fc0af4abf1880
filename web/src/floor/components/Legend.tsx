import { STATUSES } from '../../../../src/core/floor.js';
import { POSE_TEXT, STATUS_COLOR, STATUS_LABEL } from '../look.js';

/** What each ring colour, pose and flying thing on the canvas means. */
export function Legend() {
  return (
    <details class="legend" data-testid="legend">
      <summary>Legend</summary>
      <ul>
        {STATUSES.map((st) => (
          <li key={st}>
            <span class="ring" style={{ '--c': STATUS_COLOR[st] }} aria-hidden="true" />
            <b>{STATUS_LABEL[st]}</b>: {POSE_TEXT[st]}
          </li>
        ))}
        <li>Paper plane: a message (blue and bigger: a briefing for a new helper). Headset: the team lead.</li>
      </ul>
    </details>
  );
}

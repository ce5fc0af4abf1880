import { STATUSES, type Status } from '../../../../src/core/floor.js';
import { STATUS_COLOR, STATUS_LABEL } from '../look.js';

/** How many agents are in each status; waiting and failed ones stand out. */
export function StatusCounts(props: { counts: Record<Status, number> }) {
  const { counts } = props;
  return (
    <ul class="counts" aria-label="Agents by status" data-testid="counts">
      {STATUSES.map((s) => (
        <li
          key={s}
          class={`count count-${s}${counts[s] ? ' some' : ''}${(s === 'waiting' || s === 'error') && counts[s] ? ' urgent' : ''}`}
          data-status={s}
          data-count={counts[s]}
          style={{ '--c': STATUS_COLOR[s] }}
        >
          <span class="swatch" aria-hidden="true" />
          <span class="n">{counts[s]}</span> {STATUS_LABEL[s]}
        </li>
      ))}
    </ul>
  );
}

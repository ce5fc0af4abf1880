import { SHOWN, type Shown } from '../../../../src/core/attention.js';
import { SHOWN_COLOR, SHOWN_LABEL } from '../look.js';

/**
 * How many agents are shown in each state (src/core/attention.ts), except
 * "Waiting for you": what waits for a decision here, the number the nav badge
 * and the inbox show. Waiting and failed ones stand out.
 */
export function StatusCounts(props: { counts: Record<Shown, number> }) {
  const { counts } = props;
  return (
    <ul class="counts" aria-label="Agents by status" data-testid="counts">
      {SHOWN.filter((s) => counts[s] > 0 || (s !== 'quiet' && s !== 'terminal')).map((s) => (
        <li
          key={s}
          class={`count count-${s}${counts[s] ? ' some' : ''}${(s === 'waiting' || s === 'error' || s === 'terminal') && counts[s] ? ' urgent' : ''}`}
          data-status={s}
          data-count={counts[s]}
          style={{ '--c': SHOWN_COLOR[s] }}
        >
          <span class="swatch" aria-hidden="true" />
          <span class="n">{counts[s]}</span> {SHOWN_LABEL[s]}
        </li>
      ))}
    </ul>
  );
}

// The crows of an item: each flight as a little crow with its persona's
// initial and name, flying (a CSS wing-beat and drift) while in the air,
// landing (settled, a tick or a cross) once it came back.
import type { ItemStatus } from '../../../../src/core/flock.js';

const ROLE: Record<string, string> = { triage: 'triage', work: 'work', merge: 'merge' };

export function Crows(props: { item: ItemStatus }) {
  const fl = props.item.flights;
  if (fl.length === 0) return null;
  return (
    <ul class="fl-crows" aria-label="Crows">
      {fl.map((f) => {
        const word = f.state === 'flying' ? 'flying' : f.state === 'ok' ? 'landed' : 'failed';
        return (
          <li
            key={f.crow}
            class={`fl-crow fl-crow-${f.state} fl-role-${f.role}`}
            data-testid={`crow-${props.item.item_id}-${f.crow}`}
            data-state={f.state}
            title={`${f.crow}: ${ROLE[f.role]}${f.subtask ? ` (subtask ${f.subtask})` : ''}, ${word}${f.tokens ? `, ${f.tokens} tokens` : ''}${f.error ? `: ${f.error}` : ''}`}
          >
            <span class="fl-bird" aria-hidden="true">
              {f.crow.slice(0, 1)}
            </span>
            <span class="fl-crow-name">{f.crow}</span>
            <span class="fl-crow-state">{f.state === 'flying' ? 'flying' : f.state === 'ok' ? '✓ landed' : '✗ failed'}</span>
          </li>
        );
      })}
    </ul>
  );
}

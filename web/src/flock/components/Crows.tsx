// The crows of an item: each flight as a little crow with its persona's
// initial and name, flying (a CSS wing-beat and drift) while in the air,
// landing (settled, a tick or a cross) once it came back. A code flight is a
// Claude Code session on a fleet board (`board`): it says so and links to
// the board, where the session can be read, continued or closed.
import type { ItemStatus } from '../../../../src/core/flock.js';
import { followLink } from '../../shared/navigate.js';
import { fleetPath, inProject } from '../../shared/scope.js';

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
            {f.board && <BoardLink thread={f.board.thread} session={`${f.crow} · ${props.item.item_id}`} testid={`crow-board-${props.item.item_id}-${f.crow}`} />}
          </li>
        );
      })}
    </ul>
  );
}

/** A code flight's session: a Claude Code session on the board of `thread` (named `session` there: agents.ts). */
function BoardLink(props: { thread: string; session: string; testid: string }) {
  const href = inProject(fleetPath(props.thread));
  return (
    <a class="fl-board" href={href} onClick={followLink(href)} data-testid={props.testid} title={`The session "${props.session}" on the fleet board ${props.thread}`}>
      Claude Code session on board {props.thread}
    </a>
  );
}

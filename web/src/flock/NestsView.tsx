// The nests of the flock view (issue 14, part 8): a rail of nests (and a form
// for a new one), and the chosen nest's chat: every message with its kind as
// a chip, who tagged it and with what probabilities, replies, ask_owner cards
// with the phrase box, and beside it the nest's crows (core, borrowed, spun,
// quarantined). Everything is read off the folded `flock:<project>` scope of
// the one live connection (nests.ts says why that is enough); writes go
// through the contract's routes and come back on the stream.
import { useMemo } from 'preact/hooks';
import type { FlockClient } from '../live/flock.js';
import { inProject } from '../shared/scope.js';
import { followLink } from '../shared/navigate.js';
import { NewNest } from './components/NewNest.js';
import { NestChat } from './components/NestChat.js';
import { NestCrowsPanel } from './components/NestCrows.js';
import { nestCrows, type Watchdog } from './nests.js';
import './nests.css';

export function nestPath(nest_id: string): string {
  return inProject(`/flock/nests/${encodeURIComponent(nest_id)}`);
}

export function NestsView(props: { client: FlockClient; nest_id: string; watchdog: Watchdog | null }) {
  const { client, nest_id } = props;
  const rev = `${client.epoch}:${client.position}`;
  const s = client.state;
  const nests = useMemo(() => [...s.nests.values()].map((n) => ({ nest_id: n.nest_id, name: n.name, count: n.count, core: n.core.length })), [s, rev]);
  const crows = useMemo(() => nestCrows(s, nest_id), [s, rev, nest_id]);
  const nest = s.nests.get(nest_id);

  return (
    <div class="nests">
      <aside class="ns-rail" aria-label="Nests">
        <h2 id="ns-rail-title">Nests</h2>
        <ul class="ns-list" aria-labelledby="ns-rail-title" data-testid="nest-list">
          {nests.map((n) => (
            <li key={n.nest_id}>
              <a
                href={nestPath(n.nest_id)}
                onClick={followLink(nestPath(n.nest_id))}
                aria-current={n.nest_id === nest_id ? 'page' : undefined}
                data-testid={`nest-link-${n.nest_id}`}
              >
                <span class="ns-name">{n.name}</span>
                <span class="ns-count" aria-label={`${n.count} messages`}>
                  {n.count}
                </span>
              </a>
            </li>
          ))}
        </ul>
        <NewNest />
      </aside>
      {nest && crows ? (
        <>
          <NestChat client={client} nest_id={nest_id} rev={rev} quarantined={crows.quarantined} />
          <NestCrowsPanel nest={nest} crows={crows} watchdog={props.watchdog} />
        </>
      ) : (
        <p class="fl-muted ns-none" data-testid="nest-missing">
          {client.epoch === '' ? 'Loading the flock…' : `There is no nest “${nest_id}” in this project. Pick one on the left, or make one.`}
        </p>
      )}
    </div>
  );
}

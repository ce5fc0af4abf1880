// Who is in a nest: its core crows, the crows borrowed from outside the core
// (to answer a message here, or for a list of this nest), the spun crows of
// the project's registry, and a quarantine badge on every crow the Sentry
// flagged (project-wide, until the owner lifts it). Whether the watchdog runs.
import type { Nest } from '../../../../src/core/flock.js';
import type { CrowMark, NestCrows, Watchdog } from '../nests.js';
import { clock } from '../../shared/time.js';

function Badges(props: { c: CrowMark }) {
  const { c } = props;
  return (
    <>
      {c.quarantine && (
        <span
          class="ns-badge ns-quarantined"
          data-testid={`quarantine-${c.name}`}
          title={`Flagged by the Sentry (#${c.quarantine.flag}, about #${c.quarantine.refers_to}) at ${clock(c.quarantine.since)}: its posts are refused and no selector picks it until the owner lifts it`}
        >
          quarantined
        </span>
      )}
      {c.flying && (
        <span class="ns-badge ns-flying" data-testid={`flying-${c.name}`}>
          answering {c.flying}
        </span>
      )}
    </>
  );
}

function Crow(props: { c: CrowMark; testid: string; children?: preact.ComponentChildren }) {
  const { c } = props;
  return (
    <li class={`ns-crow${c.quarantine ? ' ns-crow-q' : ''}`} data-testid={props.testid} data-quarantined={c.quarantine ? 'yes' : 'no'}>
      <span class="fl-bird" aria-hidden="true">
        {c.name.slice(0, 1)}
      </span>
      <span class="ns-crow-main">
        <span class="ns-crow-name">{c.name}</span>
        {c.epithet && <span class="fl-muted"> · {c.epithet}</span>}
        {props.children}
        <Badges c={c} />
      </span>
    </li>
  );
}

export function NestCrowsPanel(props: { nest: Nest; crows: NestCrows; watchdog: Watchdog | null }) {
  const { nest, crows } = props;
  return (
    <aside class="ns-side" aria-label={`Crows of ${nest.name}`} data-testid="nest-crows">
      <h2>Crows</h2>
      <h3 id="ns-core">Core</h3>
      {crows.core.length === 0 ? (
        <p class="fl-muted" data-testid="nest-core-empty">
          No core: crows come from the whole flock, so none is borrowed.
        </p>
      ) : (
        <ul class="ns-crows" aria-labelledby="ns-core" data-testid="nest-core">
          {crows.core.map((c) => (
            <Crow key={c.name} c={c} testid={`core-${c.name}`} />
          ))}
        </ul>
      )}
      {crows.core.length > 0 && (
        <>
          <h3 id="ns-borrowed">Borrowed</h3>
          {crows.borrowed.length === 0 ? (
            <p class="fl-muted">None yet: crows from outside the core join when a job needs more than the core has.</p>
          ) : (
            <ul class="ns-crows" aria-labelledby="ns-borrowed" data-testid="nest-borrowed">
              {crows.borrowed.map((c) => (
                <Crow key={c.name} c={c} testid={`borrowed-${c.name}`}>
                  <span class="ns-badge ns-borrowed">borrowed for {c.for.join(', ')}</span>
                </Crow>
              ))}
            </ul>
          )}
        </>
      )}
      <h3 id="ns-spun">Spun crows</h3>
      {crows.spun.length === 0 ? (
        <p class="fl-muted" data-testid="nest-spun-empty">
          None: ask Boss for one (a request to Boss).
        </p>
      ) : (
        <ul class="ns-crows" aria-labelledby="ns-spun" data-testid="nest-spun">
          {crows.spun.map((c) => (
            <Crow key={c.name} c={c} testid={`spun-${c.name}`}>
              <span class="fl-muted">
                {' '}
                runs on {c.persona}, started {c.trust}
                {c.here ? ', spun here' : ''}
              </span>
            </Crow>
          ))}
        </ul>
      )}
      {crows.quarantined.length > 0 && (
        <>
          <h3 id="ns-q">Quarantined</h3>
          <ul class="ns-qlist" aria-labelledby="ns-q" data-testid="nest-quarantined">
            {crows.quarantined.map((q) => (
              <li key={q.crow}>
                <strong>{q.crow}</strong> <span class="ns-badge ns-quarantined">quarantined</span>{' '}
                <span class="fl-muted">
                  flagged in {q.nest_id} (#{q.flag}); lifted when the owner approves the Sentry’s ask
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
      {props.watchdog && (
        <p class="fl-muted ns-watchdog" data-testid="nest-watchdog" data-state={props.watchdog.on ? 'on' : 'off'} data-scorer={props.watchdog.scorer ?? 'model'}>
          {props.watchdog.on
            ? `The watchdog (${props.watchdog.scorer === 'embedded' ? 'the embedded scorer: no model is configured' : (props.watchdog.model ?? 'a model')}, band ${props.watchdog.band}) scores every crow’s claim and deliver against its request; a breach quarantines the crow.`
            : `The watchdog is off: ${props.watchdog.reason || 'no model is configured'}.`}
        </p>
      )}
    </aside>
  );
}

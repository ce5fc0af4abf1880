import { useEffect, useState } from 'preact/hooks';

/** A start request seen on the stream whose session is not on the board (yet). */
export interface StartPending {
  id: string;
  name: string;
  by: string;
  refused: string;
}

/** A start request on its way: waiting for the bridge, or refused by it (and why). */
export function StartingRow(props: { p: StartPending; noBridge: boolean; onDismiss: () => void }) {
  const { p } = props;
  // The request is on the stream; how long it has waited is this page's own
  // reckoning (a page opened later starts counting when it sees the request).
  const [since] = useState(Date.now);
  const [, setTick] = useState(0);
  useEffect(() => {
    const t = window.setTimeout(() => setTick((n) => n + 1), 10_500);
    return () => clearTimeout(t);
  }, []);
  const slow = Date.now() - since > 10_000;
  return (
    <li class={`starting-row${p.refused ? ' refused' : ''}`} data-testid={`starting-${p.id}`}>
      {!p.refused && <span class="spinner" aria-hidden="true" />}
      <span>
        {p.refused ? (
          <>
            The bridge did not start “{p.name}”: {p.refused}
          </>
        ) : (
          <>
            {p.by ? `${p.by} asked to start` : 'Starting'} “{p.name}”… waiting for the workstation bridge.
            {props.noBridge ? ' No bridge follows this thread yet: it starts when one connects (roost bridge).' : slow && ' Nothing yet: is roost bridge running for this thread?'}
          </>
        )}
      </span>
      <button class="link" onClick={props.onDismiss} aria-label={`Dismiss “${p.name}”`}>
        Dismiss
      </button>
    </li>
  );
}

// Rewind (docs/floor.md, "Rewind"): a time slider that shows a folded view
// (the floor, a fleet board) as it was at a past position. The server folds
// the past by the same pure fold from its nearest kept snapshot
// (GET /rewind, GET /fleet/:thread/rewind); the page's live stream keeps
// folding the present behind it, and "Back to live" shows that again.
//
// The moment is in the URL (`?at=<position>`, or an ISO time a teammate
// typed), so a rewound page can be shared and opens rewound. A rewound view
// is read-only: the views put what they show of the past in a disabled
// fieldset and leave out every form that would act.

import { useEffect, useRef, useState } from 'preact/hooks';
import { getJson } from './api.js';
import { projectOfPage } from './scope.js';
import './rewind.css';

/** What the server answers for a moment: its position and time, the log's head and first time, and the app's state fields. */
export interface RewindBody {
  position: number;
  at: number | null;
  head: number;
  first: number | null;
}

/** Waits this long after the slider last moved before asking (a drag asks once it rests). */
const SETTLE_MS = 120;

function atOfPage(): string | null {
  const v = new URLSearchParams(location.search).get('at');
  return v && v.length <= 64 ? v : null;
}

function setAtOfPage(at: string | null): void {
  const q = new URLSearchParams(location.search);
  if (at === null) q.delete('at');
  else q.set('at', at);
  const s = q.toString();
  history.replaceState(history.state, '', location.pathname + (s ? '?' + s : '') + location.hash);
}

export interface RewindHook<B extends RewindBody> {
  /** The past moment shown, or null: live. */
  shown: B | null;
  /** Rewound (or on the way to a moment): the view is read-only. */
  active: boolean;
  /** The moment asked for (`?at=`), null when live. */
  target: string | null;
  error: string;
  go(at: number | string): void;
  live(): void;
}

/** The rewind state of a view whose moments `GET <path>?at=` answers (`path` without a query). */
export function useRewind<B extends RewindBody>(path: string): RewindHook<B> {
  const [shown, setShown] = useState<B | null>(null);
  const [wanted, setWanted] = useState<string | null>(atOfPage);
  const [error, setError] = useState('');
  const seq = useRef(0);
  useEffect(() => {
    if (wanted === null) return;
    const my = ++seq.current;
    const t = window.setTimeout(async () => {
      const project = projectOfPage();
      const r = await getJson<B>(`${path}?at=${encodeURIComponent(wanted)}${project ? `&project=${encodeURIComponent(project)}` : ''}`);
      if (my !== seq.current) return; // a later moment was asked for meanwhile
      if (r.ok) {
        setShown(r.body);
        setError('');
      } else setError(r.message);
    }, SETTLE_MS);
    return () => window.clearTimeout(t);
  }, [wanted, path]);
  return {
    shown: wanted === null ? null : shown,
    active: wanted !== null,
    target: wanted,
    error: wanted === null ? '' : error,
    go(at) {
      const v = String(at);
      setAtOfPage(v);
      setWanted(v);
    },
    live() {
      seq.current++;
      setAtOfPage(null);
      setWanted(null);
      setShown(null);
      setError('');
    },
  };
}

/** `14:02:07, 5 Dec` in the reader's time zone. */
function moment(ms: number): string {
  const d = new Date(ms);
  return d.toLocaleString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', day: 'numeric', month: 'short' });
}

/**
 * The slider: its right end is live (the position the page's stream has
 * folded); anywhere left of it shows that past position.
 */
export function RewindBar<B extends RewindBody>(props: { rewind: RewindHook<B>; livePosition: number; what: string; testid?: string }) {
  const { rewind, livePosition } = props;
  const shown = rewind.shown;
  const max = Math.max(livePosition, shown?.head ?? 0);
  // The moment asked for, while its answer is on its way; a time typed in a URL shows where it landed.
  const asked = rewind.target !== null && /^\d+$/.test(rewind.target) ? Math.min(Number(rewind.target), max) : null;
  const value = !rewind.active ? max : asked ?? shown?.position ?? max;
  const onInput = (e: Event) => {
    const v = Number((e.currentTarget as HTMLInputElement).value);
    if (v >= livePosition && livePosition > 0) rewind.live();
    else rewind.go(v);
  };
  return (
    <div class={`rewind${rewind.active ? ' rewound' : ''}`} data-testid={props.testid ?? 'rewind'} data-rewound={rewind.active ? 'true' : 'false'} data-position={shown?.position ?? ''}>
      <label>
        <span class="rewind-label">Rewind</span>
        <input
          type="range"
          min={0}
          max={max}
          step={1}
          value={value}
          disabled={max === 0}
          aria-valuetext={shown ? (shown.at ? `${moment(shown.at)}, event ${shown.position}` : 'before the first event') : 'live'}
          data-testid="rewind-slider"
          onInput={onInput}
        />
      </label>
      {rewind.active ? (
        <>
          <span class="rewind-at" role="status" data-testid="rewind-at">
            {shown ? (shown.at ? `${props.what} at ${moment(shown.at)} (event ${shown.position} of ${shown.head}), read-only` : `${props.what} before its first event`) : 'Rewinding…'}
          </span>
          {rewind.error && (
            <span class="rewind-error" role="alert">
              {rewind.error}
            </span>
          )}
          <button
            class="primary"
            data-testid="rewind-live"
            onClick={() => rewind.live()}
          >
            Back to live
          </button>
        </>
      ) : (
        <span class="rewind-at live" data-testid="rewind-at">
          Live
        </span>
      )}
    </div>
  );
}

// An agent's history, from the log (GET /floor/timeline, docs/floor.md
// "History"): newest first, a page at a time, searchable; what it said and
// did, the messages it sent and got, the approvals it asked for and who
// decided them, each with its time. Opened from the agent's card.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Agent } from '../../../../src/core/floor.js';
import type { TimelineItem, TimelinePage } from '../../../../src/core/floor-wire.js';
import { getJson } from '../../shared/api.js';
import { STATUS_COLOR } from '../look.js';
import '../history.css';

const PAGE = 50;
const pad = (n: number) => String(n).padStart(2, '0');
/** `14:03:27`, and the date when it is not today. */
function stamp(ts: number, today: string): string {
  const d = new Date(ts);
  const t = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  const day = d.toLocaleDateString();
  return day === today ? t : `${day} ${t}`;
}

const OUTCOME: Record<string, string> = { pending: 'waiting for a decision', allowed: 'allowed', denied: 'denied', expired: 'expired unanswered (denied)', withdrawn: 'withdrawn', unknown: 'outcome further back in the log' };

function ItemRow(props: { it: TimelineItem; today: string; names: (id: string) => string; moment?: boolean }) {
  const { it, names } = props;
  let label: string;
  let body: preact.ComponentChildren = null;
  switch (it.kind) {
    case 'join':
      label = 'Joined';
      body = [it.team && `room ${it.team}`, it.status, it.activity].filter(Boolean).join(' · ');
      break;
    case 'status':
      label = it.status ? `Status: ${it.status}` : 'Said';
      body = it.activity ?? '';
      break;
    case 'tool':
      label = 'Tool';
      body = (
        <>
          <code>{it.tool}</code> {it.activity}
        </>
      );
      break;
    case 'message':
      label = `To ${(it.to ?? []).map(names).join(', ') || 'its parent'}`;
      body = it.text ?? '';
      break;
    case 'heard':
      label = `From ${names(it.from ?? '')}`;
      body = it.text ?? '';
      break;
    case 'task':
      label = 'Task';
      body = it.task || '(cleared)';
      break;
    case 'leave':
      label = 'Left the floor';
      break;
    case 'approval': {
      const a = it.approval!;
      label = 'Approval';
      body = (
        <>
          asked to run <code>{a.tool}</code>
          {a.input && <pre>{a.input}</pre>}
          <span class={`outcome outcome-${a.outcome}`} data-testid="approval-outcome">
            {OUTCOME[a.outcome] ?? a.outcome}
            {a.by && ` by ${a.by}`}
            {a.decidedAt ? ` at ${stamp(a.decidedAt, props.today)}` : ''}
            {a.reason && ` (${a.reason})`}
          </span>
        </>
      );
      break;
    }
  }
  const col = it.status && it.status in STATUS_COLOR ? STATUS_COLOR[it.status as keyof typeof STATUS_COLOR] : undefined;
  return (
    <li class={`item item-${it.kind}${props.moment ? ' item-moment' : ''}`} data-testid="timeline-item" data-kind={it.kind} data-key={it.key} data-moment={props.moment ? 'true' : undefined} aria-current={props.moment ? 'true' : undefined} style={col ? { '--c': col } : undefined}>
      <time dateTime={new Date(it.at).toISOString()} title={new Date(it.at).toLocaleString()}>
        {stamp(it.at, props.today)}
      </time>
      <span class="what">
        <span class="label">{label}</span> {body}
      </span>
    </li>
  );
}

/**
 * `agent`: an agent on the floor, or one it has forgotten (a past session, opened from a search: its id as its name).
 * `from`: a moment to open at (an item's key, `f:<position>` or `a:<position>`): the page starts there, marked, and goes older.
 */
export function Timeline(props: { agent: Pick<Agent, 'id' | 'name'>; project: string; names: (id: string) => string; onClose: () => void; from?: string | null }) {
  const { agent } = props;
  const [q, setQ] = useState('');
  // The moment opened at, until the person asks for the newest.
  const [at, setAt] = useState<string | null>(props.from ?? null);
  useEffect(() => setAt(props.from ?? null), [props.from]);
  const [items, setItems] = useState<TimelineItem[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  // The newest request wins: a search typed on top of another does not mix their pages.
  const gen = useRef(0);
  const ref = useRef<HTMLDivElement>(null);

  const load = async (before: string | null, query: string, append: boolean) => {
    const g = ++gen.current;
    setBusy(true);
    const qs = new URLSearchParams({ agent: agent.id, limit: String(PAGE) });
    if (query.trim()) qs.set('q', query.trim());
    if (before) qs.set('before', before);
    // The moment rides every page: it is what opens a past session's history.
    if (at && !query.trim()) qs.set('from', at);
    if (props.project !== 'default') qs.set('project', props.project);
    const r = await getJson<TimelinePage>(`/floor/timeline?${qs}`);
    if (g !== gen.current) return;
    setBusy(false);
    if (!r.ok) {
      setError(r.message);
      return;
    }
    setError('');
    setItems((old) => (append ? [...old, ...r.body.items] : r.body.items));
    setNext(r.body.next);
  };

  // Focus in the same commit as the panel appears (a layout effect), not a frame later.
  useLayoutEffect(() => {
    ref.current?.focus();
  }, [agent.id]);
  useEffect(() => {
    const t = window.setTimeout(() => void load(null, q, false), q ? 250 : 0);
    return () => window.clearTimeout(t);
  }, [agent.id, q, at]);
  // The moment, once shown, is scrolled into view.
  useEffect(() => {
    if (at) ref.current?.querySelector('[data-moment=true]')?.scrollIntoView({ block: 'nearest' });
  }, [items, at]);

  const today = new Date().toLocaleDateString();
  return (
    <div class="card timeline" role="dialog" aria-label={`History of ${agent.name}`} data-testid="timeline" tabIndex={-1} ref={ref}>
      <header>
        <h2>{`History · ${agent.name}`}</h2>
        <button class="close" aria-label="Close history" onClick={props.onClose}>
          ×
        </button>
      </header>
      <div class="timeline-search">
        <input type="search" placeholder="Search this history…" aria-label="Search this history" data-testid="timeline-search" value={q} onInput={(e) => setQ((e.target as HTMLInputElement).value)} maxLength={200} />
      </div>
      {at && !q.trim() && (
        <p class="timeline-moment muted" data-testid="timeline-at">
          From the moment found, older below.{' '}
          <button type="button" class="link" onClick={() => setAt(null)} data-testid="timeline-newest">
            Show the newest
          </button>
        </p>
      )}
      {error && <p class="error" role="alert">{error}</p>}
      <ol class="items" aria-busy={busy}>
        {items.map((it) => (
          <ItemRow key={it.key} it={it} today={today} names={props.names} moment={!!at && !q.trim() && it.key === at} />
        ))}
      </ol>
      {!busy && items.length === 0 && !error && <p class="muted empty-history">{q ? 'Nothing matches in this part of the log.' : 'Nothing in the log yet.'}</p>}
      <footer>
        {next ? (
          <button class="tool" disabled={busy} onClick={() => void load(next, q, true)} data-testid="timeline-older">
            {busy ? 'Loading…' : 'Older'}
          </button>
        ) : (
          items.length > 0 && <span class="muted">The beginning of its history.</span>
        )}
      </footer>
    </div>
  );
}

// Search in the top bar (docs/search.md, "In the web app"): one box, `/`
// focuses it from anywhere but a text field; what it finds (GET /api/search)
// opens below it, grouped by agent and where it was said, newest first, with
// the words that matched marked, filters, and "More" for the next page. A
// result opens its moment: a floor event or an approval request in the
// agent's timeline, an approval's decision on its page, a nest message in its
// nest, a Work message in Work. The server's text is only ever rendered as
// text nodes and <mark> elements (its `«…»` marks split), never as HTML.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { SearchAnswerHit } from '../../../src/core/search-text.js';
import { getJson } from '../shared/api.js';
import { navigate } from '../shared/navigate.js';
import { inProject } from '../shared/scope.js';
import './search.css';

/** A hit as GET /api/search answers it: the server's own type. */
export type Hit = SearchAnswerHit;

interface Page {
  hits: Hit[];
  next: string | null;
}

interface Filters {
  team: string;
  agent: string;
  kind: string;
  vendor: string;
  tool: string;
  status: string;
  decider: string;
  from: string;
  to: string;
}

const NO_FILTERS: Filters = { team: '', agent: '', kind: '', vendor: '', tool: '', status: '', decider: '', from: '', to: '' };
/** The filters typed as text (matched whole by the server), after team and agent. */
const TEXT_FILTERS = [
  ['vendor', 'Vendor'],
  ['tool', 'Tool'],
  ['status', 'Status'],
  ['decider', 'Decided by'],
] as const;
const PAGE = 20;
/** The kinds a person picks from (the API takes any exact kind). */
const KINDS: [string, string][] = [
  ['', 'Any kind'],
  ['tool', 'Tool calls'],
  ['message', 'Messages'],
  ['status', 'Statuses'],
  ['task', 'Tasks'],
  ['approval.requested', 'Approvals asked'],
  ['approval.decided', 'Approvals decided'],
  ['nest.message', 'Nest messages'],
  ['message.posted', 'Work messages'],
  ['command.queued', 'Work commands'],
  ['execution.output', 'What a Work agent said'],
  ['execution.finished', 'Work results'],
];
const FAMILY: Record<string, string> = { floor: 'floor', approvals: 'approvals', flock: 'flock', work: 'Work', fleet: 'fleet board' };

/** The snippet's text with the server's `«word»` marks as <mark> elements: text nodes only. */
export function Marked(props: { text: string }) {
  const out: preact.ComponentChildren[] = [];
  const parts = props.text.split('«');
  parts.forEach((p, i) => {
    if (i === 0) {
      if (p) out.push(p);
      return;
    }
    const end = p.indexOf('»');
    if (end < 0) {
      out.push('«' + p);
      return;
    }
    out.push(<mark key={i}>{p.slice(0, end)}</mark>);
    if (end + 1 < p.length) out.push(p.slice(end + 1));
  });
  return <>{out}</>;
}

/** Where a hit opens in the app (with the page's project). */
export function hitPath(h: Hit, project: string): string {
  const moment = `${h.family === 'approvals' ? 'a' : 'f'}:${h.position}`;
  if (h.family === 'fleet') {
    if (!h.open?.thread) return inProject('/fleet', project);
    return inProject(`/fleet/${encodeURIComponent(h.open.thread)}${h.open.session ? `?session=${encodeURIComponent(h.open.session)}` : ''}`, project);
  }
  if (h.family === 'flock') {
    if (h.open?.item) return inProject(`/flock?item=${encodeURIComponent(h.open.item)}`, project);
    return inProject(h.open?.nest ? `/flock/nests/${encodeURIComponent(h.open.nest)}` : '/flock', project);
  }
  if (h.family === 'work') return inProject(h.open?.conversation ? `/work?conversation=${encodeURIComponent(h.open.conversation)}` : '/work', project);
  if (h.family === 'approvals' && h.kind !== 'approval.requested' && h.open?.approval) return inProject(`/inbox/${encodeURIComponent(h.open.approval)}`, project);
  if (!h.agent) return inProject('/', project);
  return inProject(`/?timeline=${encodeURIComponent(h.agent)}&from=${moment}`, project);
}

/** The session an agent belongs to: a helper's id is `<session's agent id>/<helper>` (Claude Code, Codex); any other agent is its own. */
export function sessionOf(agent: string): string {
  const i = agent.indexOf('/');
  return i > 0 ? agent.slice(0, i) : agent;
}

export interface HitGroup {
  key: string;
  agent: string;
  session: string;
  family: string;
  team: string;
  hits: Hit[];
}

/**
 * Hits grouped by agent and where they were said (floor, approvals, flock,
 * Work), a session's helpers right after it: groups in the order their
 * session's first hit came, then their own; hits newest first within each.
 */
export function groupHits(hits: Hit[]): HitGroup[] {
  const groups = new Map<string, HitGroup>();
  const sessions = new Map<string, number>();
  for (const h of hits) {
    const key = `${h.agent}\u0000${h.family}`;
    let g = groups.get(key);
    const session = sessionOf(h.agent);
    if (!sessions.has(session)) sessions.set(session, sessions.size);
    if (!g) groups.set(key, (g = { key, agent: h.agent, session, family: h.family, team: h.team, hits: [] }));
    g.hits.push(h);
  }
  const order = [...groups.values()];
  return order.map((g, i) => ({ g, i })).sort((x, y) => sessions.get(x.g.session)! - sessions.get(y.g.session)! || x.i - y.i).map((x) => x.g);
}

const pad = (n: number) => String(n).padStart(2, '0');
function when(at: number): string {
  const d = new Date(at);
  const t = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return d.toDateString() === new Date().toDateString() ? t : `${d.toLocaleDateString()} ${t}`;
}

/** Whether a key press is typed into something (then `/` is a character, not the shortcut). */
function typing(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  if (!el || !el.tagName) return false;
  return el.isContentEditable || el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT';
}

export function SearchBox(props: { project: string }) {
  const [q, setQ] = useState('');
  const [filters, setFilters] = useState<Filters>(NO_FILTERS);
  const [showFilters, setShowFilters] = useState(false);
  const [open, setOpen] = useState(false);
  const [hits, setHits] = useState<Hit[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [asked, setAsked] = useState('');
  const input = useRef<HTMLInputElement>(null);
  const panel = useRef<HTMLDivElement>(null);
  // The newest request wins: typing on does not mix pages of older queries.
  const gen = useRef(0);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
      e.preventDefault();
      input.current?.focus();
      input.current?.select();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);

  const load = async (query: string, f: Filters, cursor: string | null) => {
    const g = ++gen.current;
    const qs = new URLSearchParams({ q: query, limit: String(PAGE) });
    for (const k of ['team', 'agent', 'kind', 'vendor', 'tool', 'status', 'decider'] as const) if (f[k].trim()) qs.set(k, f[k].trim());
    // Dates: from the day's start (inclusive) to the end of the `to` day, in the person's time zone.
    if (f.from) qs.set('from', String(new Date(`${f.from}T00:00`).getTime()));
    if (f.to) qs.set('to', String(new Date(`${f.to}T00:00`).getTime() + 86_400_000));
    if (props.project !== 'default') qs.set('project', props.project);
    if (cursor) qs.set('cursor', cursor);
    setBusy(true);
    const r = await getJson<Page>(`/api/search?${qs}`);
    if (g !== gen.current) return;
    setBusy(false);
    if (!r.ok) {
      setError(r.message);
      if (!cursor) setHits([]);
      setNext(null);
      return;
    }
    setError('');
    setAsked(query);
    setHits((old) => (cursor ? [...old, ...r.body.hits] : r.body.hits));
    setNext(r.body.next);
  };

  // A search as the person types (after a pause) and whenever a filter changes.
  useEffect(() => {
    if (!q.trim()) {
      gen.current++;
      setHits([]);
      setNext(null);
      setAsked('');
      setBusy(false);
      return;
    }
    const t = window.setTimeout(() => void load(q.trim(), filters, null), 250);
    return () => window.clearTimeout(t);
  }, [q, filters, props.project]);

  const close = (refocus: boolean) => {
    setOpen(false);
    if (refocus) input.current?.focus();
  };

  // A click or a focus outside the box and its results closes them.
  useEffect(() => {
    if (!open) return;
    const away = (e: Event) => {
      const t = e.target as Node | null;
      if (t && (panel.current?.contains(t) || input.current?.parentElement?.contains(t))) return;
      setOpen(false);
    };
    addEventListener('pointerdown', away);
    addEventListener('focusin', away);
    return () => {
      removeEventListener('pointerdown', away);
      removeEventListener('focusin', away);
    };
  }, [open]);

  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'Escape') {
      e.stopPropagation();
      if (open) close(true);
      else (e.currentTarget as HTMLElement).blur();
    } else if (e.key === 'ArrowDown' && open) {
      e.preventDefault();
      panel.current?.querySelector<HTMLElement>('a.search-hit')?.focus();
    }
  };

  const setFilter = (k: keyof Filters, v: string) => setFilters((f) => ({ ...f, [k]: v }));
  const groups = groupHits(hits);
  const nFilters = Object.values(filters).filter(Boolean).length;
  const shown = open && q.trim() !== '';

  return (
    <div class="top-search">
      <form
        role="search"
        aria-label="Search this project"
        onSubmit={(e) => {
          e.preventDefault();
          setOpen(true);
          if (q.trim()) void load(q.trim(), filters, null);
        }}
      >
        <input
          ref={input}
          type="search"
          data-testid="top-search"
          aria-label="Search everything in this project (press / to come here)"
          aria-controls={shown ? 'search-results' : undefined}
          placeholder="Search  /"
          maxLength={1000}
          value={q}
          onInput={(e) => {
            setQ((e.target as HTMLInputElement).value);
            setOpen(true);
          }}
          onFocus={() => q.trim() && setOpen(true)}
          onKeyDown={onKey}
        />
      </form>
      {shown && (
        <div class="search-panel" id="search-results" ref={panel} data-testid="search-results" role="region" aria-label="Search results" onKeyDown={(e) => e.key === 'Escape' && (e.stopPropagation(), close(true))}>
          <div class="search-head">
            <span role="status" class="muted" data-testid="search-status">
              {busy && hits.length === 0 ? 'Searching…' : error ? '' : asked ? (hits.length ? `${hits.length}${next ? '+' : ''} found for “${asked}”` : `Nothing found for “${asked}”`) : ''}
            </span>
            <button type="button" class="link" aria-expanded={showFilters} aria-controls={showFilters ? 'search-filters' : undefined} onClick={() => setShowFilters(!showFilters)} data-testid="search-filters-toggle">
              {`Filters${nFilters ? ` (${nFilters})` : ''}`}
            </button>
            <button type="button" class="close" aria-label="Close the search results" onClick={() => close(true)}>
              ×
            </button>
          </div>
          {showFilters && (
            <fieldset class="search-filters" id="search-filters" data-testid="search-filters">
              <legend class="sr-only">Filters</legend>
              <label>
                Team
                <input value={filters.team} maxLength={256} onChange={(e) => setFilter('team', (e.target as HTMLInputElement).value)} data-testid="search-team" />
              </label>
              <label>
                Agent
                <input value={filters.agent} maxLength={256} onChange={(e) => setFilter('agent', (e.target as HTMLInputElement).value)} data-testid="search-agent" />
              </label>
              {TEXT_FILTERS.map(([k, label]) => (
                <label key={k}>
                  {label}
                  <input value={filters[k]} maxLength={256} onChange={(e) => setFilter(k, (e.target as HTMLInputElement).value)} data-testid={`search-${k}`} />
                </label>
              ))}
              <label>
                Kind
                <select value={filters.kind} onChange={(e) => setFilter('kind', (e.target as HTMLSelectElement).value)} data-testid="search-kind">
                  {KINDS.map(([v, l]) => (
                    <option key={v} value={v}>
                      {l}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                From
                <input type="date" value={filters.from} onChange={(e) => setFilter('from', (e.target as HTMLInputElement).value)} data-testid="search-from" />
              </label>
              <label>
                To
                <input type="date" value={filters.to} onChange={(e) => setFilter('to', (e.target as HTMLInputElement).value)} data-testid="search-to" />
              </label>
              {nFilters > 0 && (
                <button type="button" class="link" onClick={() => setFilters(NO_FILTERS)}>
                  Clear filters
                </button>
              )}
            </fieldset>
          )}
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
          <div class="search-groups" aria-busy={busy}>
            {groups.map((g) => (
              <section key={g.key} class="search-group" data-testid="search-group" data-agent={g.agent} aria-label={`${g.agent || 'no agent'} in the ${FAMILY[g.family] ?? g.family}`}>
                <h3>
                  <span class="search-agent">{g.session !== g.agent ? `${g.session} › ${g.agent.slice(g.session.length + 1)}` : g.agent || '—'}</span>
                  <span class="muted">{` · ${FAMILY[g.family] ?? g.family}${g.team ? ` · ${g.team}` : ''}`}</span>
                </h3>
                <ul>
                  {g.hits.map((h) => {
                    const path = hitPath(h, props.project);
                    return (
                      <li key={`${h.stream} ${h.position}`}>
                        <a
                          class="search-hit"
                          href={path}
                          data-testid="search-hit"
                          data-kind={h.kind}
                          onClick={(e) => {
                            if (e.metaKey || e.ctrlKey || e.shiftKey) return;
                            e.preventDefault();
                            setOpen(false);
                            navigate(path);
                          }}
                          onKeyDown={(e) => {
                            const all = [...(panel.current?.querySelectorAll<HTMLElement>('a.search-hit') ?? [])];
                            const i = all.indexOf(e.currentTarget);
                            if (e.key === 'ArrowDown' && i + 1 < all.length) (e.preventDefault(), all[i + 1].focus());
                            else if (e.key === 'ArrowUp') (e.preventDefault(), i > 0 ? all[i - 1].focus() : input.current?.focus());
                          }}
                        >
                          <span class="search-meta">
                            <span class="search-kind">{h.kind}</span>
                            <time dateTime={new Date(h.at).toISOString()} title={new Date(h.at).toLocaleString()}>
                              {when(h.at)}
                            </time>
                          </span>
                          <span class="search-snippet">
                            <Marked text={h.snippet} />
                          </span>
                        </a>
                      </li>
                    );
                  })}
                </ul>
              </section>
            ))}
          </div>
          {next && (
            <button type="button" class="tool search-more" disabled={busy} onClick={() => void load(asked, filters, next)} data-testid="search-more">
              {busy ? 'Loading…' : 'More'}
            </button>
          )}
        </div>
      )}
    </div>
  );
}

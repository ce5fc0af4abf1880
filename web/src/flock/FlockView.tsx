// The flock view (issue 13, part 10; nests: issue 14, part 8). Lists: hand a
// list over, watch each item move through triage, flight and verdict, decide
// the verdicts that wait, and read the trust ledger and each list's budget;
// an owner demotes or resets a trust holder with a reason, and sets the
// project's default budget (Ledger, Budget).
// Nests (`/flock/nests/<nest_id>`): the nests' chats and crows (NestsView).
// Both are driven only by the `flock:<project>` scope through the live hub,
// folded with the shared flock fold; writes go through the contract's routes
// and come back on the stream.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { flockLedger, listStatus, TODO_NEST, type ListStatus } from '../../../src/core/flock.js';
import { ConnectionBadge } from '../shared/ConnectionBadge.js';
import { getJson } from '../shared/api.js';
import { whoAmI, type Me } from '../shared/me.js';
import { followLink } from '../shared/navigate.js';
import { inProject, projectOfPage } from '../shared/scope.js';
import { useFlock, type FlockClient } from '../live/flock.js';
import { HandOver } from './components/HandOver.js';
import { ListCard } from './components/ListCard.js';
import { Ledger } from './components/Ledger.js';
import { NestsView } from './NestsView.js';
import { Budget } from './components/Budget.js';
import type { Watchdog } from './nests.js';
import { DemoLink, FirstStep } from '../shared/FirstStep.js';
import './flock.css';

interface Overview {
  ready: boolean;
  models: { role: string; model: string | null }[];
  token_budget: number;
  /** Whether the Sentry's watchdog scores crows' claims and deliveries (docs/flock.md, "The watchdog"). */
  watchdog?: Watchdog;
}

const NESTS = '/flock/nests';

/** The nest a path names (`/flock/nests` alone: todo), or null for the lists. */
export function nestOfPath(pathname: string): string | null {
  if (pathname === NESTS || pathname === NESTS + '/') return TODO_NEST;
  if (!pathname.startsWith(NESTS + '/')) return null;
  try {
    return decodeURIComponent(pathname.slice(NESTS.length + 1)) || TODO_NEST;
  } catch {
    return TODO_NEST;
  }
}

export function FlockView() {
  const client = useFlock(projectOfPage() || 'default');
  const [me, setMe] = useState<Me>({ mode: 'unknown', name: '' });
  const [overview, setOverview] = useState<Overview | null>(null);
  useEffect(() => {
    void whoAmI().then(setMe);
    void getJson<Overview>(inProject('/api/flock')).then((r) => r.ok && setOverview(r.body));
  }, []);
  const nest_id = nestOfPath(location.pathname);

  return (
    <div class="flock">
      <header class="fl-top">
        <h1>Flock</h1>
        <nav class="fl-tabs" aria-label="Flock">
          <a href={inProject('/flock')} onClick={followLink(inProject('/flock'))} aria-current={nest_id === null ? 'page' : undefined} data-testid="flock-tab-lists">
            Lists
          </a>
          <a href={inProject(NESTS)} onClick={followLink(inProject(NESTS))} aria-current={nest_id !== null ? 'page' : undefined} data-testid="flock-tab-nests">
            Nests
          </a>
        </nav>
        <ConnectionBadge state={client.connection} testid="flock-connection" />
        {nest_id === null && (
          <Budget tokens={client.state.budget.project} />
        )}
      </header>
      {overview?.ready && <ModelLine models={overview.models} />}
      {nest_id === null && overview && !overview.ready && (
        <div class="fl-refusal" data-testid="flock-no-model">
          <p>
            No model is connected, so no list can fly. Start Roost with one (key in <code>ANTHROPIC_API_KEY</code>), or a local one with{' '}
            <code>roost serve --model ollama:llama3.1:8b</code> (docs/models.md):
          </p>
          <FirstStep command="npx roost serve --model anthropic:claude-haiku-4-5" testid="first-step-flock" />
        </div>
      )}
      {nest_id === null ? (
        <Lists client={client} me={me} />
      ) : (
        <NestsView client={client} nest_id={nest_id} watchdog={overview?.watchdog ?? null} />
      )}
    </div>
  );
}

/** Which model the crows fly on (the demo model says "demo model"), by name, once each. */
function ModelLine(props: { models: Overview['models'] }) {
  const names = [...new Set((Array.isArray(props.models) ? props.models : []).map((m) => m?.model).filter((m): m is string => typeof m === 'string' && m !== ''))];
  if (names.length === 0) return null;
  return (
    <p class="fl-muted fl-model" data-testid="flock-model">
      The crows fly on {names.join(', ')}.
    </p>
  );
}

function Lists(props: { client: FlockClient; me: Me }) {
  const { client } = props;
  // The fold changes in place: its position (and a snapshot's new state) say when.
  const rev = `${client.epoch}:${client.position}`;
  const lists = useMemo(() => {
    const out: ListStatus[] = [];
    for (const id of client.state.lists.keys()) {
      const s = listStatus(client.state, id);
      if (s) out.push(s);
    }
    return out.reverse();
  }, [client.state, rev]);
  const ledger = useMemo(() => flockLedger(client.state), [client.state, rev]);
  // `?item=<id>` (a search hit's item): scrolled to and marked once it is on the page.
  const wanted = new URLSearchParams(location.search).get('item');
  const [shown, setShown] = useState('');
  useEffect(() => {
    if (!wanted || wanted === shown) return;
    const el = document.querySelector<HTMLElement>(`[data-testid="flock-item-${CSS.escape(wanted)}"]`);
    if (!el) return;
    el.scrollIntoView({ block: 'center' });
    el.focus();
    setShown(wanted);
  }, [wanted, shown, rev]);
  return (
    <div class="fl-cols">
      <div class="fl-main">
        <HandOver me={props.me} state={client.state} onStarted={() => undefined} />
        <section class="fl-lists" aria-label="Lists" data-testid="flock-lists">
          {client.epoch !== '' && lists.length === 0 && (
            <div class="first-step" data-testid="first-step-lists">
              <p class="fl-muted">No list yet. Write one item a line above and press Hand over.</p>
              <DemoLink />
            </div>
          )}
          {lists.map((l) => (
            <ListCard key={l.list_id} list={l} raw={client.state.lists.get(l.list_id)} found={wanted} />
          ))}
        </section>
      </div>
      <Ledger ledger={ledger} />
    </div>
  );
}

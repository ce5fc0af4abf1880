// The flock view (issue 13, part 10): hand a list over, watch each item move
// through triage, flight and verdict, decide the verdicts that wait, and read
// the trust ledger and each list's budget. Driven only by the `flock:<project>`
// scope through the live hub, folded with the shared flock fold; writes go
// through the contract's routes and come back on the stream.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { flockLedger, listStatus, type ListStatus } from '../../../src/core/flock.js';
import { ConnectionBadge } from '../shared/ConnectionBadge.js';
import { getJson } from '../shared/api.js';
import { whoAmI, type Me } from '../shared/me.js';
import { inProject, projectOfPage } from '../shared/scope.js';
import { useFlock } from '../live/flock.js';
import { HandOver } from './components/HandOver.js';
import { ListCard } from './components/ListCard.js';
import { Ledger } from './components/Ledger.js';
import './flock.css';

interface Overview {
  ready: boolean;
  models: unknown[];
  token_budget: number;
}

export function FlockView() {
  const client = useFlock(projectOfPage() || 'default');
  const [me, setMe] = useState<Me>({ mode: 'unknown', name: '' });
  const [overview, setOverview] = useState<Overview | null>(null);
  useEffect(() => {
    void whoAmI().then(setMe);
    void getJson<Overview>(inProject('/api/flock')).then((r) => r.ok && setOverview(r.body));
  }, []);

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

  return (
    <div class="flock">
      <header class="fl-top">
        <h1>Flock</h1>
        <ConnectionBadge state={client.connection} testid="flock-connection" />
        <span class="fl-muted" data-testid="flock-default-budget">
          Default budget {client.state.budget.project.toLocaleString('en-US')} tokens a list
        </span>
      </header>
      {overview && !overview.ready && (
        <p class="fl-refusal" data-testid="flock-no-model">
          No model is connected, so no list can fly. Start Roost with one: <code>roost serve --model anthropic:claude-haiku-4-5</code>, or a local one with{' '}
          <code>roost serve --model ollama:llama3.1:8b</code> (docs/models.md).
        </p>
      )}
      <div class="fl-cols">
        <div class="fl-main">
          <HandOver me={me} onStarted={() => undefined} />
          <section class="fl-lists" aria-label="Lists" data-testid="flock-lists">
            {client.epoch !== '' && lists.length === 0 && <p class="fl-muted">No list yet. Hand one over above.</p>}
            {lists.map((l) => (
              <ListCard key={l.list_id} list={l} raw={client.state.lists.get(l.list_id)} />
            ))}
          </section>
        </div>
        <Ledger ledger={ledger} />
      </div>
    </div>
  );
}

// Tokens and cost where the floor shows agents (shared/, since views never
// import each other; the cost panel itself is web/src/cost/): a row on the agent card and a
// figure beside each room's name. Both read the tab's one usage client.
import { costLabel, tokensOf, type Tally } from '../../../src/core/usage.js';
import { useUsage } from '../live/usage.js';
import { pageProject } from './scope.js';

/** '12.3k' style counts. */
export function count(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e4 ? `${Math.round(n / 1e3)}k` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n);
}

/** One line for a tally: cost (`unpriced`, never $0, for tokens without a price), tokens, requests. */
export function line(t: Tally): string {
  const unpriced = t.unpricedTokens ? ` (${count(t.unpricedTokens)} unpriced)` : '';
  return `${costLabel(t)} · ${count(tokensOf(t))} tokens · ${t.requests} request${t.requests === 1 ? '' : 's'}${unpriced}`;
}

/** The agent card's rows: its own usage, and with helpers its session's total. */
export function AgentCost(props: { id: string }) {
  const u = useUsage(pageProject()).state;
  const a = u.agents.get(props.id);
  const session = u.sessions.get(props.id);
  if (!a && !session) return null;
  return (
    <>
      <dt>Cost</dt>
      <dd data-testid="card-cost" title={a ? `in ${a.own.input}, out ${a.own.output}, cache read ${a.own.cacheRead}, cache write ${a.own.cacheWrite}` : undefined}>
        {a ? line(a.own) : '—'}
      </dd>
      {session && a && session.requests !== a.own.requests && (
        <>
          <dt>With helpers</dt>
          <dd data-testid="card-cost-session">{line(session)}</dd>
        </>
      )}
    </>
  );
}

/** A room's cost, beside its name. */
export function TeamCost(props: { team: string }) {
  const t = useUsage(pageProject()).state.teams.get(props.team);
  if (!t || (!t.costMicros && !tokensOf(t))) return null;
  return (
    <span class="team-cost" data-testid={`team-cost-${props.team}`} title={line(t)}>
      {costLabel(t)}
    </span>
  );
}

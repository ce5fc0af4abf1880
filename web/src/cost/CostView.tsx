// The project's cost panel: what the project's agents spent, per day (a
// chart), per room, per session with its helpers, per model, and the budget
// with its 80% and 100% notices. Driven only by the usage stream through the
// shared usage fold.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { budgetAmount, budgetLabel, budgetPausedNow, budgetSpent, costLabel, dayIn, formatUsd, PRICE_TABLE_DATE, tokensOf, USAGE_LIMITS, type Budget as BudgetRow, type Tally, type UsageState } from '../../../src/core/usage.js';
import { ConnectionBadge } from '../shared/ConnectionBadge.js';
import { postJson, sendJson } from '../shared/api.js';
import { ProjectSwitcher } from '../shared/ProjectSwitcher.js';
import { FirstStep } from '../shared/FirstStep.js';
import { inProject, pageProject } from '../shared/scope.js';
import { count, line } from '../shared/cost.js';
import { useUsage } from '../live/usage.js';
import './cost.css';

/** Cost per day as a bar chart (uPlot); days without spend in between show as zero. */
function DailyChart(props: { days: [string, Tally][] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const days = props.days.filter(([d]) => d !== 'unknown');
  // One point per day, every day from the first to the last (at least a week), so one day
  // alone does not stretch the axis and quiet days show as zero.
  const spend = new Map(days.map(([d, t]) => [Date.parse(d + 'T00:00:00Z') / 1000, t.costMicros / 1_000_000]));
  const last = days.length ? Math.max(...spend.keys()) : Math.floor(Date.now() / 86_400_000) * 86400;
  const first = Math.min(days.length ? Math.min(...spend.keys()) : last, last - 6 * 86400);
  const xs: number[] = [];
  for (let x = first; x <= last && xs.length < 400; x += 86400) xs.push(x);
  const ys = xs.map((x) => spend.get(x) ?? 0);
  useEffect(() => {
    if (!box.current) return;
    const width = Math.max(280, box.current.clientWidth || 600);
    const data: uPlot.AlignedData = [xs, ys];
    if (!plot.current) {
      plot.current = new uPlot(
        {
          width,
          height: 220,
          scales: { x: { time: true } },
          axes: [
            // Whole days only (a tick between two days would repeat the date under it).
            { space: 60, incrs: [86400, 2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400], values: (_u, v) => v.map((x) => new Date(x * 1000).toISOString().slice(5, 10)) },
            { values: (_u, v) => v.map((x) => (x === 0 ? '$0' : `$${x >= 1 ? x.toFixed(0) : x >= 0.1 ? x.toFixed(2) : x.toFixed(3)}`)) },
          ],
          series: [{}, { label: 'Cost (USD)', stroke: '#c46d1b', fill: 'rgba(196,109,27,0.35)', paths: uPlot.paths.bars!({ size: [0.6, 60] }), points: { show: false } }],
          legend: { show: false },
        },
        data,
        box.current,
      );
    } else plot.current.setData(data);
  }, [xs.join(','), ys.join(',')]);
  useEffect(() => () => plot.current?.destroy(), []);
  return (
    <figure class="chart" data-testid="cost-chart" aria-label={`Cost per day: ${days.map(([d, t]) => `${d} ${costLabel(t)}`).join(', ') || 'nothing yet'}`}>
      <div ref={box} />
      <figcaption>Cost per day (UTC)</figcaption>
    </figure>
  );
}

function Budget(props: { s: UsageState }) {
  const b = props.s.budget;
  const [usd, setUsd] = useState('');
  const [err, setErr] = useState('');
  const spent = props.s.project.costMicros;
  const pct = b ? Math.min(999, Math.floor((spent * 100) / b.limitMicros)) : 0;
  const save = async (e: Event) => {
    e.preventDefault();
    setErr('');
    const r = await sendJson('PUT', inProject('/usage/budget', pageProject()), { usd: Number(usd) });
    if (!r.ok) setErr(r.message);
    else setUsd('');
  };
  return (
    <section class="budget" aria-label="Budget" data-testid="cost-budget">
      <h2>Budget</h2>
      {b ? (
        <>
          <p>
            <strong data-testid="budget-used">{pct}%</strong> of {formatUsd(b.limitMicros)} used ({formatUsd(spent)})
          </p>
          <meter min={0} max={100} low={80} high={99} optimum={0} value={Math.min(pct, 100)} />
          {b.notified.length > 0 && (
            <ul class="notices" data-testid="budget-notices">
              {b.notified.map((th) => (
                <li key={th} class={th >= 100 ? 'over' : 'near'}>
                  {th >= 100 ? 'Budget reached' : `${th}% of the budget reached`}
                </li>
              ))}
            </ul>
          )}
        </>
      ) : (
        <p>No budget set for this project.</p>
      )}
      <form onSubmit={save}>
        <label>
          Budget (USD){' '}
          <input type="number" min="0" step="any" value={usd} onInput={(e) => setUsd((e.target as HTMLInputElement).value)} data-testid="budget-input" />
        </label>{' '}
        <button type="submit" disabled={usd === ''}>
          Set
        </button>
        {err && <span class="err">{err}</span>}
      </form>
    </section>
  );
}

/** One budget's row: what it has spent now, paused or not, and the owner's raise, lift and remove. */
function BudgetLine(props: { s: UsageState; b: BudgetRow; now: number }) {
  const { s, b, now } = props;
  const [amount, setAmount] = useState('');
  const [err, setErr] = useState('');
  const spent = budgetSpent(s, b, now);
  const paused = budgetPausedNow(s, b, now);
  const body = (n: number) => ({ scope: b.scope, ...(b.scope === 'project' ? {} : { target: b.target }), period: b.period, ...(b.period === 'day' ? { tz: b.tz } : {}), ...(b.unit === 'usd' ? { usd: n } : { tokens: Math.round(n) }) });
  const put = async (n: number) => {
    setErr('');
    const r = await sendJson('PUT', inProject('/usage/budgets', pageProject()), body(n));
    if (!r.ok) setErr(r.message);
    else setAmount('');
  };
  const lift = async () => {
    setErr('');
    const r = await postJson(inProject('/usage/budgets/lift', pageProject()), { budget: b.key });
    if (!r.ok) setErr(r.message);
  };
  const label = budgetLabel(b, pageProject());
  return (
    <tr data-testid="budget-row" data-budget={b.key} class={paused ? 'paused' : ''}>
      <th scope="row">
        {label}
        {b.period === 'day' ? ` · per day${b.tz !== 'UTC' ? ` (${b.tz})` : ' (UTC)'}` : ''}
      </th>
      <td data-testid="budget-spent">
        {budgetAmount(b.unit, spent)} of {budgetAmount(b.unit, b.limit)}
      </td>
      <td data-testid="budget-state">{paused ? <strong class="over">paused</strong> : b.notified.includes(80) ? <span class="near">80% reached</span> : 'ok'}</td>
      <td>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void put(Number(amount));
          }}
        >
          <label>
            {b.unit === 'usd' ? 'New limit (USD)' : 'New limit (tokens)'}{' '}
            <input type="number" min="0" step="any" value={amount} aria-label={`New limit for ${label}`} onInput={(e) => setAmount((e.target as HTMLInputElement).value)} data-testid="budget-raise-input" />
          </label>{' '}
          <button type="submit" disabled={amount === ''} data-testid="budget-raise">
            Raise
          </button>{' '}
          {paused && (
            <button type="button" onClick={() => void lift()} data-testid="budget-lift">
              Lift pause
            </button>
          )}{' '}
          <button type="button" onClick={() => void put(0)} data-testid="budget-remove">
            Remove
          </button>
          {err && <span class="err">{err}</span>}
        </form>
      </td>
    </tr>
  );
}

/** Every budget of the project (team, agent, per day …) and a form for a new one (docs/integrations.md, "Budgets"). */
function Budgets(props: { s: UsageState }) {
  const s = props.s;
  const [now, setNow] = useState(Date.now());
  // A day budget's "today" moves with the clock: redraw each minute.
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 60_000);
    return () => clearInterval(t);
  }, []);
  const [scope, setScope] = useState<'project' | 'team' | 'agent'>('team');
  const [target, setTarget] = useState('');
  const [period, setPeriod] = useState<'total' | 'day'>('day');
  const [unit, setUnit] = useState<'usd' | 'tokens'>('usd');
  const [tz, setTz] = useState('');
  const [amount, setAmount] = useState('');
  const [err, setErr] = useState('');
  const add = async (e: Event) => {
    e.preventDefault();
    setErr('');
    const n = Number(amount);
    const r = await sendJson('PUT', inProject('/usage/budgets', pageProject()), {
      scope,
      ...(scope === 'project' ? {} : { target: target.trim() }),
      period,
      ...(period === 'day' && tz.trim() ? { tz: tz.trim() } : {}),
      ...(unit === 'usd' ? { usd: n } : { tokens: Math.round(n) }),
    });
    if (!r.ok) setErr(r.message);
    else ((setAmount(''), setTarget('')));
  };
  const rows = [...s.budgets.values()];
  return (
    <section class="budgets" aria-label="Budgets" data-testid="cost-budgets">
      <h2>Budgets</h2>
      <p class="note">
        At 80% a notice; at 100% the agents it covers are paused: their next tool calls are denied with the reason, the bridge takes no new command for them and the flock flies nothing more for a project budget. Raise or lift it to end the pause at once. At most {USAGE_LIMITS.budgets} per project.
      </p>
      {rows.length > 0 ? (
        <table data-testid="budget-list">
          <thead>
            <tr>
              <th scope="col">Budget</th>
              <th scope="col">Spent{rows.some((b) => b.period === 'day') ? ` (today: ${dayIn(now, 'UTC')} UTC)` : ''}</th>
              <th scope="col">State</th>
              <th scope="col">Change</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((b) => (
              <BudgetLine key={b.key} s={s} b={b} now={now} />
            ))}
          </tbody>
        </table>
      ) : (
        <p>No budgets yet.</p>
      )}
      <form onSubmit={add} data-testid="budget-new">
        <label>
          For{' '}
          <select value={scope} onChange={(e) => setScope((e.target as HTMLSelectElement).value as typeof scope)} data-testid="budget-scope">
            <option value="team">a team</option>
            <option value="agent">an agent (a session with its sub-agents)</option>
            <option value="project">the project</option>
          </select>
        </label>{' '}
        {scope !== 'project' && (
          <label>
            {scope === 'team' ? 'Team' : 'Agent id'}{' '}
            <input value={target} onInput={(e) => setTarget((e.target as HTMLInputElement).value)} placeholder={scope === 'team' ? 'backend' : 'claude-code:<session id>'} data-testid="budget-target" />
          </label>
        )}{' '}
        <label>
          Period{' '}
          <select value={period} onChange={(e) => setPeriod((e.target as HTMLSelectElement).value as typeof period)} data-testid="budget-period">
            <option value="day">per day</option>
            <option value="total">in total</option>
          </select>
        </label>{' '}
        {period === 'day' && (
          <label>
            Time zone{' '}
            <input value={tz} onInput={(e) => setTz((e.target as HTMLInputElement).value)} placeholder="UTC" data-testid="budget-tz" />
          </label>
        )}{' '}
        <label>
          Limit{' '}
          <input type="number" min="0" step="any" value={amount} onInput={(e) => setAmount((e.target as HTMLInputElement).value)} data-testid="budget-amount" />
        </label>{' '}
        <select value={unit} aria-label="Unit" onChange={(e) => setUnit((e.target as HTMLSelectElement).value as typeof unit)} data-testid="budget-unit">
          <option value="usd">USD</option>
          <option value="tokens">tokens</option>
        </select>{' '}
        <button type="submit" disabled={amount === '' || (scope !== 'project' && !target.trim())} data-testid="budget-add">
          Add budget
        </button>
        {err && <span class="err">{err}</span>}
      </form>
    </section>
  );
}

function Rows(props: { rows: [string, Tally][]; label: string; testid: string }) {
  const rows = [...props.rows].sort((a, b) => b[1].costMicros - a[1].costMicros || tokensOf(b[1]) - tokensOf(a[1]));
  return (
    <table data-testid={props.testid}>
      <thead>
        <tr>
          <th scope="col">{props.label}</th>
          <th scope="col">Cost</th>
          <th scope="col">Input</th>
          <th scope="col">Output</th>
          <th scope="col">Cache read</th>
          <th scope="col">Cache write</th>
          <th scope="col">Requests</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(([k, t]) => (
          <tr key={k}>
            <th scope="row">{k}</th>
            <td data-testid="cost-cell">{costLabel(t)}</td>
            <td>{count(t.input)}</td>
            <td>{count(t.output)}</td>
            <td>{count(t.cacheRead)}</td>
            <td>{count(t.cacheWrite)}</td>
            <td>{t.requests}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function CostView() {
  const client = useUsage(pageProject());
  const s = client.state;
  const sessions = [...s.sessions].map(([id, t]) => {
    const helpers = [...s.agents.values()].filter((a) => a.session === id && a.id !== id);
    return { id, t, helpers };
  });
  return (
    <div class="cost" data-testid="cost-view">
      <header class="cost-head">
        <h1>Cost</h1>
        <ProjectSwitcher testid="cost-project" />
        <ConnectionBadge state={client.connection} testid="cost-connection" />
      </header>
      <p class="total" data-testid="cost-total">
        <strong>{costLabel(s.project)}</strong> · {count(tokensOf(s.project))} tokens · {s.project.requests} requests
        {s.project.unpricedTokens > 0 && ` (${count(s.project.unpricedTokens)} tokens of models with no price)`}
      </p>
      {s.count === 0 && client.connection === 'live' && (
        <div class="cost-empty">
          <p>Nothing spent yet. Claude Code reports its tokens and cost once the hooks (with telemetry) are in:</p>
          <FirstStep command="npx roost hooks install --user" testid="first-step-cost" />
        </div>
      )}
      {s.refused.records > 0 && (
        <p class="note" role="status" data-testid="cost-refused">
          {s.refused.records} record{s.refused.records === 1 ? '' : 's'} refused as implausible, not booked ({count(s.refused.tokens)} tokens claimed;{' '}
          {Object.entries(s.refused.reasons)
            .map(([why, n]) => `${why}: ${n}`)
            .join(', ')}
          )
        </p>
      )}
      <DailyChart days={[...s.days].sort((a, b) => (a[0] < b[0] ? -1 : 1))} />
      <Budget s={s} />
      <Budgets s={s} />
      <section aria-label="By room">
        <h2>By room</h2>
        <Rows rows={[...s.teams]} label="Room" testid="cost-teams" />
      </section>
      <section aria-label="By session">
        <h2>By session</h2>
        <ul class="sessions" data-testid="cost-sessions">
          {sessions.map(({ id, t, helpers }) => (
            <li key={id} data-testid={`cost-session-${id}`}>
              <code>{id}</code> {line(t)}
              {helpers.length > 0 && (
                <ul>
                  {helpers.map((h) => (
                    <li key={h.id} data-testid={`cost-agent-${h.id}`}>
                      helper <code>{h.id.slice(id.length + 1)}</code> {line(h.own)}
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
      </section>
      <section aria-label="By model">
        <h2>By model</h2>
        <Rows rows={[...s.models]} label="Model" testid="cost-models" />
        <p class="note">
          Cost is the project’s own price where its owner set one, else each vendor’s own figure where it reports one (Claude Code), else the price table of {PRICE_TABLE_DATE}.
          “unpriced”: tokens of a model with no price anywhere (counted, never shown as free).
        </p>
      </section>
    </div>
  );
}

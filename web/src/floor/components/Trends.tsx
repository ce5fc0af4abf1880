// An agent's trends on its card (GET /floor/trends, docs/floor.md "Trends"):
// tool calls, approvals it waited for, the time it waited for a person,
// failures and cost per day over the last 30 days, folded from the log by the
// server. Drawn with uPlot as the pulse is; the same figures in words below.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { TrendDay } from '../../../../src/core/trends.js';
import { formatUsd } from '../../../../src/core/usage.js';
import { getJson } from '../../shared/api.js';
import '../history.css';

interface Served {
  agent: string;
  days: TrendDay[];
  since: number;
  complete: boolean;
}

const SERIES = [
  { label: 'tool calls', stroke: '#2563eb', scale: 'n' },
  { label: 'approvals waited for', stroke: '#d97706', scale: 'n' },
  { label: 'failures', stroke: '#dc2626', scale: 'n' },
  { label: 'minutes waiting', stroke: '#9333ea', scale: 'min' },
  { label: 'cost ($)', stroke: '#16a34a', scale: 'usd' },
] as const;

const minutes = (ms: number) => Math.round(ms / 6_000) / 10;

export function Trends(props: { agent: string; project: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const [data, setData] = useState<Served | null>(null);
  const [error, setError] = useState('');

  useEffect(() => {
    let live = true;
    setData(null);
    const qs = new URLSearchParams({ agent: props.agent, tz: String(new Date().getTimezoneOffset()) });
    if (props.project !== 'default') qs.set('project', props.project);
    void getJson<Served>(`/floor/trends?${qs}`).then((r) => {
      if (!live) return;
      if (!r.ok) setError(r.message);
      else {
        setError('');
        setData(r.body);
      }
    });
    return () => {
      live = false;
    };
  }, [props.agent, props.project]);

  useEffect(() => {
    if (!data || !box.current) return;
    const d = data.days;
    const aligned = [
      d.map((x) => x.start / 1000),
      d.map((x) => x.tools),
      d.map((x) => x.approvals),
      d.map((x) => x.failures),
      d.map((x) => minutes(x.waitMs)),
      d.map((x) => x.costMicros / 1e6),
    ] as uPlot.AlignedData;
    plot.current?.destroy();
    box.current.textContent = '';
    plot.current = new uPlot(
      {
        width: Math.max(240, box.current.clientWidth),
        height: 150,
        legend: { show: true, live: false },
        cursor: { drag: { x: false, y: false } },
        axes: [
          { space: 60, values: (_u, ts) => ts.map((t) => new Date(t * 1000).toLocaleDateString(undefined, { month: 'numeric', day: 'numeric' })) },
          { scale: 'n', size: 44, label: 'per day', labelSize: 14 },
          { scale: 'min', side: 1, size: 44, label: 'minutes', labelSize: 14, grid: { show: false } },
        ],
        scales: { x: { time: true }, n: { range: (_u, _min, max) => [0, Math.max(4, max)] }, min: { range: (_u, _min, max) => [0, Math.max(1, max)] }, usd: { range: (_u, _min, max) => [0, Math.max(0.01, max)] } },
        series: [{}, ...SERIES.map((s) => ({ label: s.label, stroke: s.stroke, scale: s.scale, width: 2, points: { show: false } }))],
      },
      aligned,
      box.current,
    );
  }, [data]);
  useEffect(() => () => plot.current?.destroy(), []);

  const sum = (f: (x: TrendDay) => number) => (data ? data.days.reduce((n, x) => n + f(x), 0) : 0);
  const n = data ? data.days.length : 30;
  return (
    <section class="trends" aria-label={`Trends, the last ${n} days`} data-testid="card-trends">
      <h3>{`The last ${n} days`}</h3>
      {error && <p class="error" role="alert">{error}</p>}
      {!data && !error && <p class="muted">Loading…</p>}
      <div class="chart" ref={box} aria-hidden="true" />
      {data && (
        <p class="muted trends-total" data-testid="trends-total">
          {`${sum((x) => x.tools)} tool calls, ${sum((x) => x.approvals)} approvals waited for (${minutes(sum((x) => x.waitMs))} min), ${sum((x) => x.failures)} failures, ${formatUsd(sum((x) => x.costMicros))}`}
          {!data.complete && ` (complete from ${new Date(data.since).toLocaleString()})`}
        </p>
      )}
      {/* Each day in words, for screen readers. */}
      {data && (
        <ul class="sr-only">
          {data.days
            .filter((x) => x.tools || x.approvals || x.failures || x.costMicros)
            .map((x) => (
              <li key={x.start}>{`${new Date(x.start).toLocaleDateString()}: ${x.tools} tool calls, ${x.approvals} approvals waited for (${minutes(x.waitMs)} min), ${x.failures} failures, ${formatUsd(x.costMicros)}`}</li>
            ))}
        </ul>
      )}
    </section>
  );
}

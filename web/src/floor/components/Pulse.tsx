// The floor's pulse: events per minute per team over the last hour, as lines
// (uPlot, the app's one charting library). It starts from the server's count
// (GET /floor/pulse) and then counts the events this page folds itself, with
// the same pure counter (src/core/pulse.ts): no polling.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { PULSE_MINUTES, countPulse, emptyPulse, pulseSeries, type PulseSeries } from '../../../../src/core/pulse.js';
import { getJson } from '../../shared/api.js';
import '../history.css';

/** Teams drawn (the busiest); the rest are summed as "others". */
const MAX_LINES = 8;
const COLORS = ['#2563eb', '#16a34a', '#d97706', '#9333ea', '#dc2626', '#0891b2', '#be185d', '#4d7c0f', '#64748b'];

interface Served {
  start: number;
  teams: { id: string; name: string; counts: number[] }[];
}

/** What the page folded, handed to the pulse: the team of each event, at the time it arrived. */
export type PulseSink = (teams: string[], at: number) => void;

export function Pulse(props: { project: string; teamName: (id: string) => string; register: (sink: PulseSink | null) => void; onClose: () => void }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const pulse = useRef(emptyPulse());
  const [series, setSeries] = useState<PulseSeries | null>(null);
  const [error, setError] = useState('');

  useEffect(() => {
    let live = true;
    const qs = props.project !== 'default' ? `?project=${encodeURIComponent(props.project)}` : '';
    void getJson<Served>(`/floor/pulse${qs}`).then((r) => {
      if (!live) return;
      if (!r.ok) {
        setError(r.message);
        return;
      }
      for (const t of r.body.teams) t.counts.forEach((c, i) => c && countPulse(pulse.current, t.id, r.body.start + i * 60_000, c));
      // From now on, what this page folds.
      props.register((teams, at) => {
        for (const t of teams) countPulse(pulse.current, t, at);
      });
      setSeries(pulseSeries(pulse.current, Date.now()));
    });
    // The chart moves on every 5 s (a new minute, new counts).
    const t = window.setInterval(() => setSeries(pulseSeries(pulse.current, Date.now())), 5_000);
    return () => {
      live = false;
      clearInterval(t);
      props.register(null);
    };
  }, [props.project]);

  const shown = series ? series.teams.slice(0, MAX_LINES) : [];
  const rest = series ? series.teams.slice(MAX_LINES) : [];
  const total = series ? series.teams.reduce((n, t) => n + t.total, 0) : 0;
  const names = shown.map((t) => props.teamName(t.team)).concat(rest.length ? ['others'] : []);
  const key = names.join('\u0000');

  useEffect(() => {
    if (!series || !box.current) return;
    const xs = Array.from({ length: PULSE_MINUTES }, (_, i) => (series.start + i * 60_000) / 1000);
    const ys = shown.map((t) => t.counts);
    if (rest.length) ys.push(xs.map((_, i) => rest.reduce((n, t) => n + t.counts[i], 0)));
    const data = [xs, ...ys] as uPlot.AlignedData;
    if (plot.current && plot.current.series.length !== ys.length + 1) {
      plot.current.destroy();
      plot.current = null;
    }
    if (!plot.current) {
      box.current.textContent = '';
      plot.current = new uPlot(
        {
          width: Math.max(260, box.current.clientWidth),
          height: 170,
          legend: { show: true, live: false },
          cursor: { drag: { x: false, y: false } },
          axes: [{ space: 70 }, { size: 40, label: 'events / min', labelSize: 14 }],
          scales: { y: { range: (_u, _min, max) => [0, Math.max(4, max)] } },
          series: [{}, ...names.map((n, i) => ({ label: n, stroke: COLORS[i % COLORS.length], width: 2, points: { show: false } }))],
        },
        data,
        box.current,
      );
    } else plot.current.setData(data);
  }, [series, key]);
  useEffect(() => () => plot.current?.destroy(), []);

  return (
    <section class="pulse" aria-label="Pulse: events per minute per team, the last hour" data-testid="pulse">
      <header>
        <h2>Pulse</h2>
        <span class="muted" data-testid="pulse-total">{series ? `${total} events in the last hour` : 'Loading…'}</span>
        <button class="close" aria-label="Close the pulse" onClick={props.onClose}>
          ×
        </button>
      </header>
      {error && <p class="error" role="alert">{error}</p>}
      <div class="chart" ref={box} />
      {/* The same numbers in words, for screen readers. */}
      <ul class="sr-only">
        {shown.map((t) => (
          <li key={t.team}>{`${props.teamName(t.team)}: ${t.total} events in the last hour, ${t.counts[PULSE_MINUTES - 1]} this minute`}</li>
        ))}
      </ul>
    </section>
  );
}

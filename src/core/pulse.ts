// The floor's pulse: events per minute per team over the last hour, a
// bounded counter (a ring of 60 minutes per team, zeroed lazily), fed with
// each event's time as it is folded. Pure: the time of each count and the
// `now` of a read are arguments. The server keeps one per floor (fed in log
// order with the server's append time) and serves it; the browser starts
// from that and counts the events it folds itself (docs/floor.md, "Pulse").

export const PULSE_MINUTES = 60;
const MINUTE = 60_000;
/** Teams counted at most (a floor holds at most 10,000 agents, so as many teams); beyond, new teams are not counted. */
export const PULSE_MAX_TEAMS = 10_000;

interface Ring {
  /** counts[m % 60] is minute m's, for m in (last - 60, last]. */
  counts: Uint32Array;
  last: number;
}

export interface PulseState {
  teams: Map<string, Ring>;
}

export function emptyPulse(): PulseState {
  return { teams: new Map() };
}

/** Counts `n` events of `team` at `at` (ms). An event more than an hour older than the team's newest is dropped. */
export function countPulse(p: PulseState, team: string, at: number, n = 1): void {
  if (!Number.isFinite(at) || typeof team !== 'string') return;
  const m = Math.floor(at / MINUTE);
  let r = p.teams.get(team);
  if (!r) {
    if (p.teams.size >= PULSE_MAX_TEAMS) return;
    r = { counts: new Uint32Array(PULSE_MINUTES), last: m };
    p.teams.set(team, r);
  }
  if (m > r.last) {
    const gap = Math.min(PULSE_MINUTES, m - r.last);
    for (let i = 1; i <= gap; i++) r.counts[(r.last + i) % PULSE_MINUTES] = 0;
    r.last = m;
  } else if (m <= r.last - PULSE_MINUTES) return;
  r.counts[m % PULSE_MINUTES] += n;
}

export interface PulseSeries {
  /** The first minute's start, ms (the oldest of the 60). */
  start: number;
  /** Per team, 60 counts, oldest first; teams with no event in the hour are left out. */
  teams: { team: string; counts: number[]; total: number }[];
}

/** The last hour at `now`, busiest teams first, at most `max` teams. Forgets teams silent for an hour. */
export function pulseSeries(p: PulseState, now: number, max = 50): PulseSeries {
  const nowM = Math.floor(now / MINUTE);
  const first = nowM - PULSE_MINUTES + 1;
  const out: PulseSeries['teams'] = [];
  for (const [team, r] of p.teams) {
    if (r.last < first) {
      p.teams.delete(team);
      continue;
    }
    const counts = new Array<number>(PULSE_MINUTES).fill(0);
    let total = 0;
    for (let m = Math.max(first, r.last - PULSE_MINUTES + 1); m <= Math.min(r.last, nowM); m++) {
      const c = r.counts[m % PULSE_MINUTES];
      counts[m - first] = c;
      total += c;
    }
    if (total > 0) out.push({ team, counts, total });
  }
  out.sort((a, b) => b.total - a.total || (a.team < b.team ? -1 : 1));
  return { start: first * MINUTE, teams: out.slice(0, Math.max(0, max)) };
}

// `roost demo`: a believable floor for a first look. Several fake teams, each
// with a lead and helpers, read, edit, run tests, message each other, write
// tasks on their whiteboards, sometimes wait for a person or fail, and
// helpers come and go. Everything goes through POST /events like any agent.
// The other apps (fleet, Work, flock, cost, approvals) are demo-apps.ts; all
// of it goes to its own project, `demo` (docs/demo.md).
//
// The randomness is seeded so two runs tell the same story (handy for
// screenshots); the timing follows the wall clock.

import { DEMO_PROJECT, prepareDemoProject, runApps } from './demo-apps.js';

export interface DemoOptions {
  server: string;
  /** The project the demo writes to (default `demo`: never the person's own). */
  project?: string;
  /** Shared mode: an owner's token of the project. */
  token?: string;
  /** Only the floor (no Space, Work, flock, cost or trust story). */
  floorOnly?: boolean;
  /** Multiplies the pauses of the other apps' story (default 1). */
  pace?: number;
  /** Mean events per second across the whole floor. */
  rate?: number;
  seed?: number;
  /** Stop after this many ms (runs until the signal aborts when absent). */
  durationMs?: number;
  signal?: AbortSignal;
  log?: (line: string) => void;
}

interface Member {
  id: string;
  name: string;
  role: string;
  source: string;
  parent: string | null;
  status: string;
  busyUntil: number;
}

interface DemoTeam {
  name: string;
  lead: Member;
  helpers: Member[];
  tasks: string[];
  files: string[];
  nextHelper: number;
}

const SCRIPT: { team: string; lead: string; source: string; tasks: string[]; files: string[]; helpers: [string, string, string][] }[] = [
  {
    team: 'Payments',
    lead: 'Ada',
    source: 'claude-code',
    tasks: ['Refund flow: partial refunds for split invoices', 'Retry webhook deliveries with backoff', 'Ship the new invoice PDF'],
    files: ['refunds.ts', 'invoice.ts', 'ledger.sql', 'webhooks/retry.ts', 'stripe-client.ts'],
    helpers: [
      ['Otto', 'coder', 'claude-code'],
      ['Rhea', 'tester', 'claude-code'],
      ['Bram', 'reviewer', 'codex'],
    ],
  },
  {
    team: 'Search',
    lead: 'Linus',
    source: 'codex',
    tasks: ['Typo-tolerant product search', 'Rank by freshness and clicks', 'Reindex without downtime'],
    files: ['ranker.py', 'tokenize.py', 'index_builder.py', 'synonyms.yml'],
    helpers: [
      ['Mira', 'researcher', 'codex'],
      ['Theo', 'coder', 'codex'],
    ],
  },
  {
    team: 'Mobile',
    lead: 'Grace',
    source: 'cursor',
    tasks: ['Offline mode for the cart', 'Dark theme polish', 'Crash on resume (Android 14)'],
    files: ['CartStore.kt', 'Theme.swift', 'SyncWorker.kt', 'AppDelegate.swift'],
    helpers: [
      ['Iris', 'designer', 'cursor'],
      ['Nils', 'coder', 'claude-code'],
      ['Juno', 'tester', 'cli'],
    ],
  },
  {
    team: 'Infra',
    lead: 'Ken',
    source: 'claude-code',
    tasks: ['Move CI to ephemeral runners', 'Postgres 16 upgrade plan', 'Cut cold-start time in half'],
    files: ['ci.yml', 'terraform/runners.tf', 'Dockerfile', 'pg_upgrade.sh'],
    helpers: [
      ['Vera', 'ops', 'claude-code'],
      ['Emil', 'planner', 'codex'],
    ],
  },
];

const TOOLS: [string, (f: string) => string][] = [
  ['Read', (f) => `Reading ${f}`],
  ['Edit', (f) => `Editing ${f}`],
  ['Grep', (f) => `Searching for callers of ${f.replace(/\..*$/, '')}`],
  ['Bash', () => 'Running the test suite'],
  ['Bash', () => 'npm run lint'],
  ['Write', (f) => `Writing tests for ${f}`],
  ['WebFetch', () => 'Reading the API docs'],
];
const THOUGHTS = ['Weighing two designs', 'Planning the next step', 'Tracing a flaky test', 'Reading the failing diff'];
const WAITS = ['Needs approval to run the migration', 'Which API version should I target?', 'May I push to main?', 'Needs a review of the plan'];
const ERRORS = ['Tests failed: 3 of 214', 'Build failed: type error in cart.ts', 'Rate limited by the API'];
const LINES = ['Can you take the edge cases?', 'Done with the parser, over to you', 'Found the bug: off by one in paging', 'Please review my change', 'Tests are green on my side', 'Blocked on the schema, any idea?'];
const HELPER_KINDS: [string, string][] = [
  ['Scout', 'explorer'],
  ['Quill', 'writer'],
  ['Pixel', 'designer'],
  ['Probe', 'tester'],
  ['Lint', 'reviewer'],
];

/** Small seeded PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-');

export class Demo {
  private rand: () => number;
  private teams: DemoTeam[] = [];
  private pending: Record<string, unknown>[] = [];

  constructor(seed = 7) {
    this.rand = rng(seed);
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rand() * xs.length)];
  }

  private emit(m: Member, team: DemoTeam, e: Record<string, unknown>): void {
    this.pending.push({ agent: { id: m.id, name: m.name, role: m.role, source: m.source }, team: team.name, ...e });
  }

  /** The opening: every lead walks in, writes the task, and briefs its helpers. */
  opening(): Record<string, unknown>[] {
    for (const s of SCRIPT) {
      const lead: Member = { id: `${slug(s.team)}-lead`, name: s.lead, role: 'lead', source: s.source, parent: null, status: 'thinking', busyUntil: 0 };
      const t: DemoTeam = { name: s.team, lead, helpers: [], tasks: s.tasks, files: s.files, nextHelper: 1 };
      this.teams.push(t);
      this.emit(lead, t, { type: 'join', status: 'thinking', activity: 'Planning the work' });
      this.emit(lead, t, { type: 'task', task: s.tasks[0] });
      for (const [name, role, source] of s.helpers) {
        const h: Member = { id: `${slug(s.team)}-${slug(name)}`, name, role, source, parent: lead.id, status: 'working', busyUntil: 0 };
        t.helpers.push(h);
        this.emit(h, t, { type: 'join', parent: lead.id, status: 'working', activity: `Reading ${this.pick(s.files)}` });
      }
    }
    return this.take();
  }

  private take(): Record<string, unknown>[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }

  /** One beat of the story: a few events from one team. */
  beat(now: number): Record<string, unknown>[] {
    const t = this.pick(this.teams);
    const everyone = [t.lead, ...t.helpers];
    const m = this.pick(everyone);
    const r = this.rand();
    if (m.status === 'waiting' || m.status === 'error') {
      // A person "answers" after a while; the agent gets back to work.
      if (now > m.busyUntil) {
        m.status = 'working';
        const [tool, what] = this.pick(TOOLS);
        this.emit(m, t, { type: 'tool', tool, activity: what(this.pick(t.files)) });
      }
      return this.take();
    }
    if (r < 0.5) {
      const [tool, what] = this.pick(TOOLS);
      m.status = 'working';
      this.emit(m, t, { type: 'tool', tool, activity: what(this.pick(t.files)) });
    } else if (r < 0.62) {
      m.status = 'thinking';
      this.emit(m, t, { type: 'status', status: 'thinking', activity: this.pick(THOUGHTS) });
    } else if (r < 0.75 && everyone.length > 1) {
      const to = this.pick(everyone.filter((x) => x !== m));
      this.emit(m, t, { type: 'message', to: to.id, text: this.pick(LINES) });
    } else if (r < 0.8) {
      m.status = 'waiting';
      m.busyUntil = now + 6_000 + this.rand() * 8_000;
      this.emit(m, t, { type: 'status', status: 'waiting', activity: this.pick(WAITS) });
    } else if (r < 0.83) {
      m.status = 'error';
      m.busyUntil = now + 5_000 + this.rand() * 6_000;
      this.emit(m, t, { type: 'status', status: 'error', activity: this.pick(ERRORS) });
    } else if (r < 0.87) {
      this.emit(t.lead, t, { type: 'task', task: this.pick(t.tasks) });
    } else if (r < 0.93 && t.helpers.length < 6) {
      // A new helper is spawned and briefed.
      const [name, role] = this.pick(HELPER_KINDS);
      const h: Member = { id: `${slug(t.name)}-${slug(name)}-${t.nextHelper++}`, name: `${name} ${t.nextHelper - 1}`, role, source: t.lead.source, parent: t.lead.id, status: 'working', busyUntil: 0 };
      t.helpers.push(h);
      this.emit(h, t, { type: 'join', parent: t.lead.id, status: 'working', activity: `Starting: ${this.pick(t.tasks)}` });
    } else if (t.helpers.length > 2) {
      // A helper finishes, reports to the lead and leaves.
      const h = this.pick(t.helpers);
      t.helpers = t.helpers.filter((x) => x !== h);
      this.emit(h, t, { type: 'message', to: t.lead.id, text: 'Finished, handing back' });
      this.emit(h, t, { type: 'status', status: 'done', activity: 'Finished' });
      this.emit(h, t, { type: 'leave' });
    } else {
      m.status = 'idle';
      this.emit(m, t, { type: 'status', status: 'idle', activity: '' });
    }
    return this.take();
  }
}

/**
 * One batch. fetch keeps its abort listener on the signal it is given until
 * the request is garbage-collected, so each post gets a signal of its own,
 * tied to the run's and untied when the post is done.
 */
async function post(server: string, events: Record<string, unknown>[], signal?: AbortSignal, project = DEMO_PROJECT, token?: string): Promise<void> {
  const own = new AbortController();
  const abort = () => own.abort();
  signal?.addEventListener('abort', abort, { once: true });
  try {
    const res = await fetch(new URL('/events', server), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'roost-project': project, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(events),
      signal: own.signal,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`server said ${res.status}: ${text}`);
  } finally {
    signal?.removeEventListener('abort', abort);
  }
}

/** Posts the demo story until aborted (or `durationMs` passes). */
export async function runDemo(opts: DemoOptions): Promise<void> {
  const project = opts.project ?? DEMO_PROJECT;
  if (!opts.floorOnly) await prepareDemoProject({ server: opts.server, project, token: opts.token });
  // The other apps run beside the floor, until the same end.
  const apps = new AbortController();
  const stopApps = () => apps.abort();
  opts.signal?.addEventListener('abort', stopApps, { once: true });
  const others = opts.floorOnly ? Promise.resolve() : runApps({ server: opts.server, project, token: opts.token, signal: apps.signal, log: opts.log, pace: opts.pace });
  try {
    await runFloor(opts, project);
  } finally {
    apps.abort();
    opts.signal?.removeEventListener('abort', stopApps);
    await others;
  }
}

async function runFloor(opts: DemoOptions, project: string): Promise<void> {
  const rate = opts.rate ?? 4;
  const demo = new Demo(opts.seed);
  const log = opts.log ?? (() => {});
  const end = opts.durationMs ? Date.now() + opts.durationMs : Infinity;
  // One abort listener per sleep, removed when the sleep ends either way (a
  // long run would otherwise pile them up on the signal until Node warns).
  const sleep = (ms: number) =>
    new Promise<void>((ok) => {
      const signal = opts.signal;
      const done = () => {
        clearTimeout(t);
        signal?.removeEventListener('abort', done);
        ok();
      };
      const t = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    });
  await post(opts.server, demo.opening(), opts.signal, project, opts.token);
  log(`roost demo: posting to ${opts.server} in project "${project}" (about ${rate} events/s on the floor); open ${new URL(`/?project=${project}`, opts.server).href}`);
  while (!opts.signal?.aborted && Date.now() < end) {
    // Exponential gaps: a believable, uneven rhythm.
    await sleep(Math.min(2_000, -Math.log(1 - Math.random()) * (1000 / rate)));
    if (opts.signal?.aborted) break;
    const events = demo.beat(Date.now());
    if (events.length === 0) continue;
    try {
      await post(opts.server, events, opts.signal, project, opts.token);
    } catch (e) {
      if (opts.signal?.aborted) break;
      log(`roost demo: ${(e as Error).message}; retrying`);
      await sleep(1_000);
    }
  }
}

// The demo's other apps (docs/demo.md): a demo Space whose bridge runs
// scripted Claude Code sessions on the fleet board and takes Work commands,
// a Work conversation, costs and a budget near its limit, earned trust, and
// the flock flying lists and talking in a nest on the demo model. Every write
// goes through the public HTTP API, as a client would: the bridge's own
// connection and Space link (src/bridge/client.ts, src/bridge/work.ts) for the
// board and Work, the routes a person's browser uses for the rest. Nothing
// here reaches into a store, so it runs against any server (`roost demo
// --server URL`), and a test runs it against a server started without --demo.
//
// Decisions a person makes change what happens next: an Allow of a session's
// tool call lets the scripted agent go on ("Migration applied…"); a Deny makes
// it say so and try another way.

import { randomBytes } from 'node:crypto';
import { BoardClient, Connection } from '../bridge/client.js';
import { SpaceLink, type DueCommand, type Observation } from '../bridge/work.js';

export const DEMO_PROJECT = 'demo';
export const DEMO_THREAD = 'default';
export const DEMO_SPACE = 'demo-space';
/** The name of every model the demo's flock may use (src/models/demo.ts). */
const DEMO_MODEL = 'demo model';

export interface AppsOptions {
  server: string;
  project?: string;
  token?: string;
  signal: AbortSignal;
  log?: (line: string) => void;
  /** Multiplies every pause of the story (default 1; a test may go faster). */
  pace?: number;
}

export interface Answer {
  status: number;
  json: Record<string, unknown> | null;
}

/** One request through the public API as the demo's client. */
export function demoApi(opts: { server: string; project?: string; token?: string; signal?: AbortSignal }) {
  const project = opts.project ?? DEMO_PROJECT;
  return async (method: string, path: string, body?: unknown, key?: string): Promise<Answer> => {
    const headers: Record<string, string> = { 'roost-project': project };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (key) headers['idempotency-key'] = key;
    const signal = opts.signal ? AbortSignal.any([opts.signal, AbortSignal.timeout(15_000)]) : AbortSignal.timeout(15_000);
    const r = await fetch(new URL(path, opts.server), { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
    const text = await r.text();
    let json: Record<string, unknown> | null = null;
    try {
      const j: unknown = JSON.parse(text);
      if (j && typeof j === 'object' && !Array.isArray(j)) json = j as Record<string, unknown>;
    } catch {}
    return { status: r.status, json };
  };
}

/**
 * Who may run the demo here. Local mode: anyone at the machine; the project
 * `demo` is made if it is missing. Shared mode: only an owner of the project
 * `demo` (a token of it with the owner role), never anyone else.
 */
export async function prepareDemoProject(opts: { server: string; project?: string; token?: string }): Promise<void> {
  const project = opts.project ?? DEMO_PROJECT;
  const api = demoApi(opts);
  const me = await api('GET', '/auth/me');
  if (me.status !== 200) throw new Error(`the server did not say who we are (${me.status}): ${String(me.json?.message ?? '')}`);
  const projects = Array.isArray(me.json?.projects) ? (me.json.projects as { id: string; role: string }[]) : [];
  if (me.json?.mode === 'shared') {
    const mine = projects.find((p) => p.id === project);
    if (mine?.role !== 'owner') throw new Error(`refusing the demo in shared mode: only an owner of the project "${project}" may run it (ROOST_TOKEN=<an owner's token of "${project}"> roost demo --server URL)`);
    return;
  }
  if (!projects.some((p) => p.id === project)) {
    const made = await api('POST', '/projects', { id: project, name: 'Demo' }, `demo-project:${project}`);
    if (made.status !== 200 && made.status !== 201 && made.status !== 409) throw new Error(`could not make the project "${project}" (${made.status}): ${String(made.json?.message ?? '')}`);
  }
}

interface Step {
  /** A member's prompt that starts the job. */
  prompt: string;
  say: string[];
  tool: [string, string];
  /** The tool call that waits for a person: [tool, digest]. */
  ask: [string, string];
  allowed: string[];
  denied: string[];
  /** The milestone after the job. */
  cost: number;
}

const SESSIONS: { key: string; name: string; root: string; steps: Step[] }[] = [
  {
    key: 'refunds',
    name: 'Refund flow',
    root: '~/code/shop',
    steps: [
      {
        prompt: 'Add partial refunds for split invoices',
        say: ["I'll read refunds.ts and the ledger schema first.", 'Split invoices need a refunded_cents column on invoice_lines. I wrote the migration.'],
        tool: ['Read', 'src/refunds.ts'],
        ask: ['Bash', 'npm run db:migrate -- --to 42'],
        allowed: ['Migration applied: 42 rows backfilled. Running the refund tests next.', 'All 38 refund tests pass. Partial refunds are in; the PR is ready for review.'],
        denied: ["Understood: I won't touch the database. Another way: I'll keep the partial amount in the refund record itself, no migration.", 'Done without a migration: refunds store their own split, and the tests pass.'],
        cost: 0.42,
      },
      {
        prompt: 'Retry webhook deliveries with backoff',
        say: ['Reading webhooks/retry.ts: failed deliveries are dropped today.', 'I added exponential backoff with jitter, capped at one hour.'],
        tool: ['Edit', 'src/webhooks/retry.ts'],
        ask: ['Bash', 'git push origin roost/webhook-retry'],
        allowed: ['Pushed the branch; CI is running on it.', 'CI is green. The retries are live behind the flag.'],
        denied: ["Not pushing, then. Another way: I'll leave the commit on the branch and write the PR description for you to push.", 'The PR description is in PR.md; the branch is ready whenever you want it pushed.'],
        cost: 0.31,
      },
    ],
  },
  {
    key: 'reindex',
    name: 'Search reindex',
    root: '~/code/search',
    steps: [
      {
        prompt: 'Reindex the products without downtime',
        say: ['Plan: build the new index beside the old one, then swap the alias.', 'The new index is built: 1.2 M products in 3 min 40 s.'],
        tool: ['Bash', 'python index_builder.py --target products_v8'],
        ask: ['Bash', 'curl -XPOST search:9200/_aliases -d @swap.json'],
        allowed: ['Alias swapped to products_v8; queries never stopped. Removing products_v7 tomorrow.', 'Reindex done without downtime.'],
        denied: ["OK, I won't swap the alias myself. Another way: I'll write the swap as a runbook step for the on-call.", 'Runbook step added to docs/reindex.md; the new index waits beside the old one.'],
        cost: 0.27,
      },
    ],
  },
];

const WORK_COMMANDS: [string, string[], string][] = [
  ['Write the release notes for 2.4', ['Collecting the merged PRs since 2.3', 'Grouping them: payments, search, mobile', 'Drafting the highlights'], 'Release notes for 2.4 are in CHANGELOG.md: 3 highlights, 14 fixes.'],
  ['Summarise the open bugs by area', ['Reading 37 open issues', 'Tagging them by area'], 'Payments 9, Search 12, Mobile 11, Infra 5. The two oldest are both in search ranking.'],
  ['Check the API docs against the code', ['Comparing 48 endpoints', 'Found 3 that changed without a docs update'], '3 endpoints drifted (refunds, webhooks, search suggest); fixes are in docs/api.md.'],
  ['Draft the on-call handover', ['Reading the last week of alerts'], 'Handover drafted: 2 flaky alerts to silence, 1 disk to grow.'],
];

const CONVERSATION: [string, string][] = [
  ['Ada', 'Release 2.4: refunds, webhook retries and the new search index. Who takes the notes?'],
  ['Ken', 'The docs writer agent has the release notes queued; I queued the bug summary too.'],
  ['Ada', 'Great. The migration waits for an approval in the inbox: look before you allow it.'],
  ['Linus', 'Reindex is built; the alias swap waits for someone to say yes.'],
  ['Grace', 'Mobile is frozen for the release. Ping me if the API docs change.'],
  ['Ken', "Budget check: we're near this month's limit on the Cost page."],
];

const LISTS = [
  '- Write a friendly changelog entry for partial refunds\n- Research how other shops word refund emails and compare two options\n- Plan the beta of the new search',
  '- Review the onboarding email for tone\n- Ideas for naming the new plan tiers',
];

const NEST_REQUESTS: [string, string][] = [
  ['Pepper', 'Pepper, please draft three taglines for the 2.4 launch'],
  ['Inky', 'Inky, write a two-line summary of the refund changes for support'],
  ['Pepper', 'Pepper, suggest a subject line for the release email'],
];

/** Everything but the floor (src/cli/demo.ts has the floor): runs until the signal aborts. */
export async function runApps(opts: AppsOptions): Promise<void> {
  const project = opts.project ?? DEMO_PROJECT;
  const log = opts.log ?? (() => {});
  const pace = opts.pace ?? 1;
  const signal = opts.signal;
  const api = demoApi({ server: opts.server, project, token: opts.token, signal });
  const sleep = (ms: number) => pauseFor(ms * pace, signal);
  const run = randomBytes(3).toString('hex');
  const tasks: Promise<void>[] = [];
  const guard = (what: string, f: () => Promise<void>) =>
    tasks.push(
      f().catch((e: unknown) => {
        if (!signal.aborted) log(`roost demo: ${what} stopped: ${(e as Error).message}`);
      }),
    );

  // ---- the bridge: a Space with scripted sessions on the board, also Work agents
  const conn = new Connection({ server: opts.server, token: opts.token, project, name: 'Demo bridge', log, approvalWindowMs: 30 * 60_000 });
  signal.addEventListener('abort', () => conn.close(), { once: true });
  const board = new BoardClient(conn, DEMO_THREAD);
  const bridge = conn.process;
  const sessions = new Map<string, { id: string; name: string; state: 'idle' | 'working' | 'blocked' }>();
  const writer = { key: 'docs', name: 'Docs writer', root: '~/code/shop/docs' };
  for (const s of [...SESSIONS, writer]) sessions.set(s.key, { id: `demo-${s.key}-${run}`, name: s.name, state: 'idle' });
  const observe = (): Observation[] => [...sessions.values()].map((s) => ({ session: s.id, label: s.name, origin: 'bridge', state: s.state, cwd: '~/code/shop' }));
  let n = 0;
  const boardPost = (events: Record<string, unknown>[], what: string) => board.post('', events, `${bridge}:${what}:${n++}`);
  const status = (id: string, state: string, activity: string) => boardPost([{ type: 'session.status', id, state, activity }], `${id}:status`);
  // Sessions of an earlier demo run still open on the board are closed (their bridge is gone).
  await endLeftovers(board, bridge);
  for (const s of [...SESSIONS, writer]) {
    const id = sessions.get(s.key)!.id;
    await boardPost([{ type: 'session.spawn', id, session: s.name, flavor: 'scoped', root: s.root, worktree: `${s.root}/.roost-bridge/worktrees/${id}`, by: 'demo' }], `${id}:spawn`);
    await status(id, 'idle', 'ready for a prompt');
  }
  // Following the board holds this bridge's approval requests open (docs/approvals.md).
  guard('the board stream', () => board.follow({ onFrame: () => undefined, idleMs: 40_000 }));

  const running = new Set<string>();
  const space = new SpaceLink({
    conn,
    name: DEMO_SPACE,
    project,
    contribute: true,
    log: () => {},
    observations: observe,
    onDue: (due: DueCommand[]) => {
      for (const c of due) if (!running.has(c.id)) void runCommand(c);
    },
  });
  const runCommand = async (c: DueCommand): Promise<void> => {
    running.add(c.id);
    const script = WORK_COMMANDS.find(([t]) => c.text === t);
    const s = [...sessions.values()].find((x) => x.id === c.session);
    const started = await space.execution(c.id, 'started');
    if (started.status !== 200 || !s) return;
    become(keyOf(s.id), 'working');
    await status(s.id, 'running', `Work: ${c.text.slice(0, 60)}`);
    let i = 0;
    for (const line of script?.[1] ?? [`Working on: ${c.text}`]) {
      await sleep(4_000);
      await space.execution(c.id, 'output', { text: line }, `${c.id}:output:${i++}`);
    }
    await sleep(3_000);
    await space.execution(c.id, 'finished', { status: 'done', result: script?.[2] ?? `Done: ${c.text}` });
    become(keyOf(s.id), 'idle');
    await status(s.id, 'idle', 'ready for a prompt');
  };
  const hasWork = (await space.register().catch(() => false)) === true;
  if (hasWork) space.start();

  // ---- the scripted sessions
  const ask = async (id: string, step: Step, k: number): Promise<boolean | null> => {
    const rid = `r-${id}-${k}`.slice(0, 64);
    const [tool, digest] = step.ask;
    await boardPost(
      [
        { type: 'session.approval', id, rid, tool, digest, state: 'pending' },
        { type: 'session.status', id, state: 'waiting', activity: `needs approval: ${tool} ${digest}` },
      ],
      `${id}:approval:${rid}`,
    );
    become(keyOf(id), 'blocked');
    // The first decision on the board is the answer (an Allow or Deny in the inbox lands here too).
    for (;;) {
      if (signal.aborted) return null;
      const b = (await board.getBoard().catch(() => null)) as { sessions?: { id: string; approvals: { rid: string; state: string }[] }[] } | null;
      const a = b?.sessions?.find((x) => x.id === id)?.approvals.find((x) => x.rid === rid);
      if (a && a.state !== 'pending') return a.state === 'allowed';
      if (!a && b?.sessions?.some((x) => x.id === id)) return false;
      await pauseFor(300, signal);
    }
  };
  const keyOf = (id: string) => [...sessions.entries()].find(([, v]) => v.id === id)![0];
  /** A session's Work state changed: the Space says so (the board's status says it on the board). */
  const become = (key: string, state: 'idle' | 'working' | 'blocked') => {
    const s = sessions.get(key)!;
    s.state = state;
    space.observe({ session: s.id, label: s.name, origin: 'bridge', state, cwd: '~/code/shop' });
  };
  const speak = async (id: string, text: string) => {
    // Partial text first (lossy frames), then the turn that carries it all.
    const words = text.split(' ');
    for (let i = 4; i < words.length; i += 4) {
      await board.postLossy('/live', { type: 'session.stream', id, text: words.slice(i - 4, i).join(' ') + ' ' });
      await sleep(250);
    }
    await boardPost([{ type: 'session.turn', id, text }], `${id}:turn`);
  };
  const scripted = (s: (typeof SESSIONS)[number]) => async () => {
    const id = sessions.get(s.key)!.id;
    for (let k = 0; !signal.aborted; k++) {
      const step = s.steps[k % s.steps.length];
      await sleep(s.key === 'refunds' ? 1_000 : 4_000);
      await boardPost([{ type: 'session.prompt', id, text: step.prompt }], `${id}:prompt`);
      become(s.key, 'working');
      await status(id, 'running', 'thinking');
      await sleep(1_500);
      await speak(id, step.say[0]);
      await status(id, 'running', `${step.tool[0]} ${step.tool[1]}`);
      await sleep(2_500);
      await speak(id, step.say[1]);
      const allowed = await ask(id, step, k);
      if (allowed === null) return;
      become(s.key, 'working');
      const [first, last] = allowed ? step.allowed : step.denied;
      await status(id, 'running', allowed ? `${step.ask[0]} ${step.ask[1]}` : 'trying another way');
      await speak(id, first);
      await sleep(3_000);
      await speak(id, last);
      const tokens = Math.round(step.cost * 200_000);
      await boardPost(
        [
          {
            type: 'session.result',
            id,
            summary: `done in ${(20 + k * 3.7).toFixed(1)} s, 5 turns, $${step.cost.toFixed(2)}${allowed ? '' : ', 1 tool call(s) denied'}`,
            usage: { claude: id, models: [{ model: 'claude-sonnet-4-5', input: Math.round(tokens * 0.8), output: Math.round(tokens * 0.2), cacheRead: tokens * 3, cacheWrite: 0, costUsd: step.cost }] },
          },
        ],
        `${id}:result`,
      );
      become(s.key, 'idle');
      await status(id, 'idle', 'ready for a prompt');
      await sleep(10_000);
    }
  };
  for (const s of SESSIONS) guard(`session ${s.name}`, scripted(s));

  // ---- earned trust on the board: the Test runner's `npm test` is allowed by the demo's owner
  // while it waits (three in a row earn the board's team trust), then runs on trust with nobody
  // asked; a person who revokes it in the inbox sees it wait (and earn it) again.
  guard('the board’s earned trust', async () => {
    const id = `demo-tests-${run}`;
    await boardPost([{ type: 'session.spawn', id, session: 'Test runner', flavor: 'scoped', root: '~/code/shop', by: 'demo' }], `${id}:spawn`);
    await status(id, 'idle', 'ready for a prompt');
    await api('PUT', '/api/trust/agents', { on: true });
    for (let k = 0; !signal.aborted; k++) {
      await sleep(k < 3 ? 2_500 : 12_000);
      await boardPost([{ type: 'session.prompt', id, text: 'Run the test suite' }], `${id}:prompt`);
      const rid = `r-${id}-${k}`.slice(0, 64);
      // As roost bridge asks: the digest for people, the whole command for its action class.
      await boardPost(
        [
          { type: 'session.approval', id, rid, tool: 'Bash', digest: '$ npm test', command: 'npm test', state: 'pending' },
          { type: 'session.status', id, state: 'waiting', activity: 'needs approval: Bash $ npm test' },
        ],
        `${id}:approval:${rid}`,
      );
      let allowed: boolean | null = null;
      for (let t = 0; allowed === null && !signal.aborted; t++) {
        const b = (await board.getBoard().catch(() => null)) as { sessions?: { id: string; approvals: { rid: string; state: string }[] }[] } | null;
        const a = b?.sessions?.find((x) => x.id === id)?.approvals.find((x) => x.rid === rid);
        if (a && a.state !== 'pending') allowed = a.state === 'allowed';
        else if (t === 6) {
          // Still waiting after about 2 s: the demo's owner allows it (a person's decision, which earns trust).
          const ap = await api('GET', '/approvals');
          const mine = ((ap.json?.pending ?? []) as { id: string; kind: string; scope?: { rid?: string } }[]).find((x) => x.kind === 'fleet' && x.scope?.rid === rid);
          if (mine) await api('POST', `/approvals/${encodeURIComponent(mine.id)}/decision`, { decision: 'allow', by: 'Demo' });
        }
        if (allowed === null) await pauseFor(300, signal);
      }
      if (allowed === null) return;
      await status(id, 'running', allowed ? 'Bash $ npm test' : 'trying another way');
      await sleep(1_500);
      await boardPost([{ type: 'session.turn', id, text: allowed ? 'npm test: 142 passed, 0 failed.' : 'Not allowed to run the tests; I will say what I changed instead.' }], `${id}:turn`);
      await status(id, 'idle', 'ready for a prompt');
    }
  });

  // ---- Work: a conversation, and commands queued to the docs writer
  if (hasWork) {
    guard('Work', async () => {
      await space.ready;
      const agent = `${space.id}:${sessions.get('docs')!.id}`;
      const conv = await api('POST', '/api/v2/conversations', { title: 'Release 2.4', project }, `demo-conv-${run}`);
      const cid = typeof conv.json?.id === 'string' ? conv.json.id : null;
      const queue = (i: number) => api('POST', '/api/v2/commands', { agent, text: WORK_COMMANDS[i % WORK_COMMANDS.length][0], project }, `demo-cmd-${run}-${i}`);
      for (let i = 0; i < 4; i++) await queue(i);
      for (let i = 0; !signal.aborted; i++) {
        const [who, text] = CONVERSATION[i % CONVERSATION.length];
        if (cid) await api('POST', `/api/v2/conversations/${encodeURIComponent(cid)}/messages`, { text: `${who}: ${text}`, project }, `demo-msg-${run}-${i}`);
        await sleep(9_000);
        if (i % 2 === 1) await queue(4 + i);
      }
    });
  }

  // ---- Cost: Claude Code's own telemetry (OTLP logs) of the floor's teams, every few seconds, and
  // a project budget kept a little above what the demo has spent (near its limit, not crossed).
  guard('cost', async () => {
    // Each team's Claude Code session starts (its hook), so its telemetry is booked to its room.
    for (const [team] of TELEMETRY) {
      await api('POST', `/hooks/claude-code?team=${team}`, { hook_event_name: 'SessionStart', session_id: `demo-${team.toLowerCase()}-${run}`, cwd: `/home/demo/${team.toLowerCase()}`, source: 'startup' });
    }
    for (let i = 0; !signal.aborted; i++) {
      const [team, model, cost] = TELEMETRY[i % TELEMETRY.length];
      await api('POST', '/v1/logs', otlpRecord(`demo-${team.toLowerCase()}-${run}`, model, cost, i));
      if (i >= 3) {
        const spent = spentUsd((await api('GET', '/usage')).json);
        if (spent > 0) await api('PUT', '/usage/budget', { usd: Math.ceil((spent / 0.87) * 100) / 100 });
      }
      await sleep(i < 4 ? 700 : 8_000);
    }
  });

  // ---- earned trust: an owner trusted `npm test` for Infra once, so the next ones run on trust
  guard('trust', () => trustStory(api, sleep, signal, run));

  // ---- the flock, when the demo model serves it
  guard('the flock', () => flockStory(api, sleep, signal, log));
  await Promise.allSettled(tasks);
}

/** What the usage answer says was spent, USD (0 when it cannot say). */
function spentUsd(u: Record<string, unknown> | null): number {
  const state = u?.state as { project?: { costMicros?: unknown } } | undefined;
  const micros = Number(state?.project?.costMicros ?? NaN);
  return Number.isFinite(micros) ? micros / 1_000_000 : 0;
}

/** Ends the board's sessions another demo bridge left open (a restart), so the board holds only live ones. */
async function endLeftovers(board: BoardClient, bridge: string): Promise<void> {
  const b = (await board.getBoard().catch(() => null)) as { sessions?: { id: string; by: string; endedAt?: number | null }[] } | null;
  const old = (b?.sessions ?? []).filter((s) => s.by === 'demo' && !s.endedAt && s.id.startsWith('demo-'));
  if (old.length) await board.post('', old.map((s) => ({ type: 'session.end', id: s.id, reason: 'demo restarted' })), `${bridge}:leftovers`);
}

type Api = ReturnType<typeof demoApi>;

const TELEMETRY: [string, string, number][] = [
  ['Payments', 'claude-sonnet-4-5', 0.061],
  ['Search', 'claude-haiku-4-5', 0.012],
  ['Infra', 'claude-sonnet-4-5', 0.048],
  ['Mobile', 'claude-opus-4-1', 0.133],
];

/** One `api_request` log record as Claude Code exports it (OTLP/HTTP JSON). */
function otlpRecord(session: string, model: string, cost: number, seq: number): unknown {
  const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
  const int = (key: string, v: number) => ({ key, value: { intValue: v } });
  const now = `${Date.now()}000000`;
  const input = Math.round(cost * 90_000);
  return {
    resourceLogs: [
      {
        resource: { attributes: [str('service.name', 'claude-code'), str('service.version', '2.1.197')] },
        scopeLogs: [
          {
            scope: { name: 'com.anthropic.claude_code.events', version: '2.1.197' },
            logRecords: [
              {
                timeUnixNano: now,
                observedTimeUnixNano: now,
                body: { stringValue: 'claude_code.api_request' },
                attributes: [
                  str('session.id', session),
                  str('event.name', 'api_request'),
                  str('event.timestamp', new Date().toISOString()),
                  int('event.sequence', seq),
                  str('model', model),
                  int('input_tokens', input),
                  int('output_tokens', Math.round(input / 6)),
                  int('cache_read_tokens', input * 4),
                  int('cache_creation_tokens', 0),
                  { key: 'cost_usd', value: { doubleValue: cost } },
                  int('duration_ms', 2400),
                ],
              },
            ],
          },
        ],
      },
    ],
  };
}

/**
 * Earned trust on the floor's Infra team: trust is turned on, the first
 * `npm test` waits and the demo's owner answers it with "Allow and trust"
 * (POST /approvals/:id/trust, what the inbox's button does); every later one
 * is allowed by trust at once, through the hook endpoint an agent's hook uses.
 */
async function trustStory(api: Api, sleep: (ms: number) => Promise<void>, signal: AbortSignal, run: string): Promise<void> {
  await api('PUT', '/api/trust/agents', { on: true });
  const session = `demo-ci-${run}`;
  const hook = (n: number) =>
    api('POST', '/hooks/claude-code?hold=1&approvals=Bash&team=Infra', {
      hook_event_name: 'PreToolUse',
      session_id: session,
      cwd: '/home/demo/infra',
      tool_name: 'Bash',
      tool_input: { command: 'npm test', description: 'Run the test suite' },
      tool_use_id: `toolu_demo_${run}_${n}`,
    });
  const first = hook(0);
  // The first call waits in the inbox; the demo's owner trusts its class.
  for (let i = 0; i < 50 && !signal.aborted; i++) {
    await sleep(300);
    const ap = await api('GET', '/approvals');
    const mine = ((ap.json?.pending ?? []) as { id: string; kind: string; scope?: { session?: string } }[]).find((a) => a.kind === 'tool' && a.scope?.session?.includes(session));
    if (mine) {
      await api('POST', `/approvals/${mine.id}/trust`, { reason: 'the test suite is safe to run' });
      break;
    }
  }
  await first.catch(() => undefined);
  for (let n = 1; !signal.aborted; n++) {
    await sleep(12_000);
    await hook(n);
  }
}

async function flockStory(api: Api, sleep: (ms: number) => Promise<void>, signal: AbortSignal, log: (l: string) => void): Promise<void> {
  const f = await api('GET', '/api/flock');
  const models = (Array.isArray(f.json?.models) ? f.json.models : []) as { role: string; model: string | null }[];
  const serving = models.filter((m) => m.model);
  if (!serving.length || serving.some((m) => m.model !== DEMO_MODEL)) {
    log(serving.length ? 'roost demo: the flock runs on your own model, so the demo hands it nothing (start with --demo alone, or --model demo, to see it fly)' : 'roost demo: no model serves the flock (start the server with --demo or --model demo to see it fly)');
    return;
  }
  const nest = await api('POST', '/api/nests', { name: 'Launch', crows: ['Pepper', 'Inky'] });
  const nestId = nest.status === 201 && typeof nest.json?.nest_id === 'string' ? nest.json.nest_id : 'launch';
  await api('POST', '/api/lists', { text: LISTS[0], requester: 'Demo' });
  let approved = 0;
  for (let i = 0; !signal.aborted; i++) {
    if (i % 2 === 0) {
      const [to, text] = NEST_REQUESTS[(i / 2) % NEST_REQUESTS.length];
      await api('POST', `/api/nests/${nestId}/messages`, { author: 'owner', kind: 'request', to, text });
    }
    // The demo's owner approves the flock's verdicts after a pause, but leaves the newest one for the person.
    const ap = await api('GET', '/approvals');
    const verdicts = ((ap.json?.pending ?? []) as { id: string; kind: string; requestedAt: number }[]).filter((a) => a.kind === 'verdict').sort((a, b) => a.requestedAt - b.requestedAt);
    for (const v of verdicts.slice(0, -1)) if ((await api('POST', `/approvals/${v.id}/decision`, { decision: 'allow', by: 'Demo' })).status === 200) approved++;
    if (i % 12 === 11) await api('POST', '/api/lists', { text: LISTS[(i / 12 + 1) % LISTS.length | 0], requester: 'Demo' });
    await sleep(6_000);
  }
  void approved;
}

/** Waits `ms`, cut short by the signal. */
export function pauseFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((ok) => {
    if (signal?.aborted) return ok();
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      ok();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * `roost demo --stop`: ends what the demo left running in its project (its
 * board sessions, and its Space's agents through an empty full snapshot). The
 * person's projects are never touched: every request names the demo project.
 */
export async function stopDemo(opts: { server: string; project?: string; token?: string; log?: (l: string) => void }): Promise<void> {
  const project = opts.project ?? DEMO_PROJECT;
  const conn = new Connection({ server: opts.server, token: opts.token, project, name: 'Demo bridge', log: () => {} });
  try {
    const board = new BoardClient(conn, DEMO_THREAD);
    await endLeftovers(board, conn.process);
    const api = demoApi({ server: opts.server, project, token: opts.token });
    const sp = await api('POST', '/api/v2/spaces', { name: DEMO_SPACE }, `space:${DEMO_SPACE}`);
    if (sp.status === 200 && typeof sp.json?.id === 'string') await api('POST', `/api/v2/spaces/${sp.json.id}/agents`, { project, full: true, agents: [] }, `demo-stop-${Date.now()}`);
    opts.log?.(`roost demo: stopped the demo's sessions in project "${project}"; your other projects were not touched`);
  } finally {
    conn.close();
  }
}

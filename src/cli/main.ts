// The `roost` command. Verbs: serve (the default), admin, demo, emit, bridge, hooks, mcp.

import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { VERSION } from '../server/package.js';
// Each verb loads what it needs when it runs (a dynamic import below): `roost
// hooks`, `emit` or `bridge` start without loading the server, whose modules
// cost about half a second of CPU to load (the hooks and bridge tests start
// dozens of these).

const HELP = `roost ${VERSION}: watch and steer a fleet of AI coding agents

usage:
  roost serve [--port 4319] [--host 127.0.0.1] [--data ./.roost] [--db postgres://...] [--demo]   (--demo: every app alive, in project "demo": docs/demo.md)
              [--shared] [--origin https://roost.example.com] [--public-url https://roost.example.com]   (shared mode: docs/security.md)
              [--model anthropic:<model> | openai:<model>[@URL] | ollama:<model> | demo] [--model-<role> ...]   (the flock: docs/models.md)
  roost admin create-owner --login NAME [--name "Full Name"] [--password-stdin]   (the first account)
  roost demo  [--server http://127.0.0.1:4319] [--rate 4] [--floor-only] [--stop]   (every app alive in project "demo"; --stop ends its sessions)
  roost mcp   [--server URL] [--agent ID] [--team T]   (an MCP server on stdio: status, messages, task, ask a person)
  roost emit  --type status --agent bot-1 [--team T] [--status working] [--activity "..."]
              [--tool T] [--text T] [--to a,b] [--task T] [--parent P] [--role R] [--source S]
              [--subagent TYPE[:KEY]] [--json '{...extra fields}'] [--server http://127.0.0.1:4319]
  roost bridge --server URL --root DIR [--token T] [--project P] [--thread default] [--space NAME]
              [--contribute] [--agents 0] [--hooks-port N]   (this machine as your Space: board and Work sessions)
  roost hooks install|uninstall|status [--tool claude-code|codex|gemini-cli|cursor]
              [--user | --project DIR] [--server URL] [--approvals all|RULES] [--window 10m] [--team T]
  roost doctor [--server URL] [--project DIR] [--json]   (what is wrong: server, hooks, telemetry, Spaces, budgets; exit 1 to fix)

environment: ROOST_PORT, ROOST_HOST, ROOST_DATA, ROOST_DB, ROOST_SERVER, ROOST_TOKEN (emit), ROOST_SHARED=1, ROOST_ORIGINS, ROOST_PUBLIC_URL,
             ROOST_PRESENCE_EXPIRE_MS (several nodes: a silent node's Work presence and bridges are forgotten after it, default 30000),
             ROOST_MODEL, ROOST_MODEL_<ROLE>, ROOST_FLOCK_WINDOW_MS (a flock verdict's and a nest ask's window, default 600000),
             ROOST_FLOCK_LEASE_MS, ROOST_FLOCK_CALL_TIMEOUT_MS, ROOST_FLOCK_BANTER_WAIT_MS,
             ROOST_FLOCK_AGENT_TIMEOUT_MS (a code item's Claude Code session, default 1800000),
             ROOST_JEV_BAND (alias CROWS_JEV_THRESHOLD, default 0.8), ROOST_MAX_SPUN_CROWS (MaxSpunCrows, default 8) (docs/flock.md),
             ROOST_MAX_LIVE_CONNECTIONS (open streams per process, default 10000 or half the open-file limit; then 503),
             ROOST_TOKENS_PER_PERSON (live tokens one person may hold, default 50) (docs/security.md, "Limits"),
             ROOST_WEBHOOK_BACKOFF_MS (a webhook's first retry, doubled per attempt, default 10000) (docs/webhooks.md),
             ROOST_FLOCK_NUDGE_MS (a crow's expectation before the harness nudges it, default 600000) (docs/flock.md)
`;

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

async function serve(argv: string[]): Promise<void> {
  const [{ openStore }, { startRoost }, { loadIdentity }, { MODEL_FLAG_OPTIONS, ModelRoster, modelSettings }, { runDemo }] = await Promise.all([
    import('../storage/index.js'),
    import('../server/index.js'),
    import('./owner.js'),
    import('../models/config.js'),
    import('./demo.js'),
  ]);
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      data: { type: 'string' },
      db: { type: 'string' },
      demo: { type: 'boolean' },
      shared: { type: 'boolean' },
      origin: { type: 'string', multiple: true },
      'public-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      ...MODEL_FLAG_OPTIONS,
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  // The models behind the flock (docs/models.md): none configured is allowed (lists then answer 503).
  const ms = modelSettings(values, process.env);
  if (!ms.ok) throw new Error(ms.message);
  const models = new ModelRoster(ms.value);
  const env = process.env;
  const host = values.host ?? env.ROOST_HOST ?? '127.0.0.1';
  const port = Number(values.port ?? env.ROOST_PORT ?? 4319);
  const dataDir = resolve(values.data ?? env.ROOST_DATA ?? '.roost');
  const db = values.db ?? env.ROOST_DB;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be a port number, got ${values.port ?? env.ROOST_PORT}`);
  /** A numeric setting from the environment: unset is the default; anything but a whole number ≥ min stops the start. */
  const setting = (name: string, min: number): number | undefined => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be a whole number of at least ${min}, got "${v.slice(0, 40)}"`);
    return n;
  };
  // Jev's high band: a probability above 0.5 and at most 1 (docs/flock.md, "Jev").
  const band = (name: string): number | undefined => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!(n > 0.5 && n <= 1)) throw new Error(`${name} must be a number above 0.5 and at most 1, got "${v.slice(0, 40)}"`);
    return n;
  };
  // The contract's name for the band, CROWS_JEV_THRESHOLD, is an alias of ROOST_JEV_BAND; both set must agree.
  const jevBand = (): number | undefined => {
    const ours = band('ROOST_JEV_BAND');
    const theirs = band('CROWS_JEV_THRESHOLD');
    if (ours !== undefined && theirs !== undefined && ours !== theirs) throw new Error(`ROOST_JEV_BAND (${ours}) and its alias CROWS_JEV_THRESHOLD (${theirs}) disagree; set one`);
    return ours ?? theirs;
  };
  // MaxSpunCrows: the Boss's registry cap, 0 (no spin-ups) to 64.
  const spunCap = (): number | undefined => {
    const n = setting('ROOST_MAX_SPUN_CROWS', 0);
    if (n !== undefined && n > 64) throw new Error(`ROOST_MAX_SPUN_CROWS must be at most 64, got ${n}`);
    return n;
  };
  const tuning = {
    heartbeatMs: setting('ROOST_HEARTBEAT_MS', 100),
    sweepEveryMs: setting('ROOST_SWEEP_MS', 10),
    snapshotEvery: setting('ROOST_SNAPSHOT_EVERY', 1),
    presenceExpireMs: setting('ROOST_PRESENCE_EXPIRE_MS', 1000),
    flockVerdictWindowMs: setting('ROOST_FLOCK_WINDOW_MS', 1000),
    flockLeaseMs: setting('ROOST_FLOCK_LEASE_MS', 1000),
    flockCallTimeoutMs: setting('ROOST_FLOCK_CALL_TIMEOUT_MS', 100),
    flockBanterWaitMs: setting('ROOST_FLOCK_BANTER_WAIT_MS', 0),
    flockAgentTimeoutMs: setting('ROOST_FLOCK_AGENT_TIMEOUT_MS', 1000),
    flockJevBand: jevBand(),
    flockMaxSpunCrows: spunCap(),
    flockNudgeMs: setting('ROOST_FLOCK_NUDGE_MS', 100),
    pushTimeoutMs: setting('ROOST_PUSH_TIMEOUT_MS', 100),
    maxLiveConnections: setting('ROOST_MAX_LIVE_CONNECTIONS', 1),
    tokensPerPerson: setting('ROOST_TOKENS_PER_PERSON', 1),
    webhookBackoffMs: setting('ROOST_WEBHOOK_BACKOFF_MS', 10),
  };
  // Web Push (docs/web.md, "Notifications"): the VAPID contact, and whether a shared server may push to private addresses.
  const pushSubject = env.ROOST_PUSH_SUBJECT || undefined;
  if (pushSubject !== undefined && !/^(mailto:|https:\/\/)\S{1,300}$/.test(pushSubject)) throw new Error(`ROOST_PUSH_SUBJECT must be a mailto: or https: URL, got "${pushSubject.slice(0, 60)}"`);
  const pushPrivateEndpoints = env.ROOST_PUSH_PRIVATE_ENDPOINTS === '1' ? true : undefined;
  const shared = values.shared === true || env.ROOST_SHARED === '1' || !isLoopback(host);
  // The demo writes as the person at the machine; in shared mode nobody is, so only an owner may start it, as a client.
  if (values.demo && shared) {
    throw new Error(
      'refusing --demo in shared mode: the demo runs only when an owner of the project "demo" asks for it.\n' +
        'Start the server without --demo, then, as that owner: ROOST_TOKEN=<your token of project "demo"> roost demo --server URL',
    );
  }
  const store = await openStore({ db, dataDir });
  // Beyond loopback every request must be authenticated: without an account
  // nobody could sign in, so refuse and say how to make the first one.
  if (shared && (await loadIdentity(store)).users.size === 0) {
    await store.close();
    throw new Error(
      `refusing to start in shared mode${isLoopback(host) ? '' : ` on ${host}`}: no account exists yet, so nobody could sign in.\n` +
        `Create the first owner, then start again:\n  roost admin create-owner --login NAME${values.data ? ` --data ${values.data}` : ''}${values.db ? ' --db ...' : ''}\n` +
        'Or listen on 127.0.0.1 (the default) for local mode, where the person at the machine is the owner.',
    );
  }
  const origins = [...(values.origin ?? []), ...(env.ROOST_ORIGINS ? env.ROOST_ORIGINS.split(',').map((s) => s.trim()) : [])].filter(Boolean);
  // The address people use, behind a TLS proxy: https makes every session cookie Secure (docs/security.md).
  const publicUrl = values['public-url'] ?? (env.ROOST_PUBLIC_URL || undefined);
  const roost = await startRoost(store, {
    host,
    port,
    shared,
    origins,
    publicUrl,
    models,
    pushSubject,
    pushPrivateEndpoints,
    ...tuning,
  });
  const where = store.kind === 'sqlite' ? `${dataDir}/roost.db` : 'postgres';
  console.log(`roost ${VERSION} serving on ${roost.url} (store: ${where}, floor at position ${roost.floor.position})`);
  const demo = values.demo ? new AbortController() : null;
  if (demo) void runDemo({ server: roost.url, signal: demo.signal, log: (l) => console.log(l) }).catch((e) => console.error('roost demo:', e));
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    demo?.abort();
    await roost.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

async function emit(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      server: { type: 'string' },
      type: { type: 'string' },
      agent: { type: 'string' },
      name: { type: 'string' },
      role: { type: 'string' },
      team: { type: 'string' },
      parent: { type: 'string' },
      source: { type: 'string' },
      status: { type: 'string' },
      activity: { type: 'string' },
      tool: { type: 'string' },
      to: { type: 'string' },
      text: { type: 'string' },
      task: { type: 'string' },
      subagent: { type: 'string' },
      json: { type: 'string' },
    },
  });
  const server = values.server ?? process.env.ROOST_SERVER ?? 'http://127.0.0.1:4319';
  let event: Record<string, unknown> = {};
  if (values.json) {
    try {
      event = JSON.parse(values.json) as Record<string, unknown>;
    } catch (e) {
      throw new Error(`--json is not valid JSON: ${(e as Error).message}`, { cause: e });
    }
    if (!event || typeof event !== 'object' || Array.isArray(event)) throw new Error('--json must be a JSON object of extra fields');
  }
  // `--subagent code-reviewer:ag_9` → the floor's subagent hint { type, key }.
  if (values.subagent !== undefined) {
    const [type, ...key] = values.subagent.split(':');
    event.subagent = { ...(type ? { type } : {}), ...(key.length ? { key: key.join(':') } : {}) };
  }
  for (const k of ['type', 'agent', 'name', 'role', 'team', 'parent', 'source', 'status', 'activity', 'tool', 'text', 'task'] as const) {
    if (values[k] !== undefined) event[k] = values[k];
  }
  if (values.to !== undefined) event.to = values.to.includes(',') ? values.to.split(',').map((s) => s.trim()) : values.to;
  if (event.type === undefined) event.type = 'status';
  if (event.source === undefined) event.source = 'cli';
  // Shared mode: a token scoped to a project (docs/security.md).
  const token = process.env.ROOST_TOKEN;
  const res = await fetch(new URL('/events', server), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(event),
  });
  const text = await res.text();
  if (!res.ok) {
    let msg = text;
    try {
      msg = (JSON.parse(text) as { message: string }).message;
    } catch {}
    throw new Error(`server said ${res.status}: ${msg}`);
  }
}

async function demoVerb(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { server: { type: 'string' }, rate: { type: 'string' }, stop: { type: 'boolean' }, 'floor-only': { type: 'boolean' } } });
  const server = values.server ?? process.env.ROOST_SERVER ?? 'http://127.0.0.1:4319';
  const token = process.env.ROOST_TOKEN || undefined;
  const [{ runDemo }, { stopDemo }] = await Promise.all([import('./demo.js'), import('./demo-apps.js')]);
  if (values.stop) return stopDemo({ server, token, log: (l) => console.log(l) });
  const rate = values.rate !== undefined ? Number(values.rate) : undefined;
  if (rate !== undefined && !(rate > 0 && rate <= 1000)) throw new Error(`--rate must be between 0 and 1000 events/s, got ${values.rate}`);
  const ac = new AbortController();
  process.once('SIGINT', () => ac.abort());
  process.once('SIGTERM', () => ac.abort());
  await runDemo({ server, rate, token, floorOnly: values['floor-only'], signal: ac.signal, log: (l) => console.log(l) });
}

export async function main(argv: string[]): Promise<void> {
  const [verb, ...rest] = argv;
  switch (verb) {
    case undefined:
    case 'serve':
      return serve(rest);
    case 'emit':
      return emit(rest);
    case 'demo':
      return demoVerb(rest);
    case 'mcp':
      return (await import('./mcp.js')).mcpCommand(rest);
    case 'hooks':
      await (await import('./hooks.js')).hooksCommand(rest);
      return;
    case 'admin':
      return (await import('./admin.js')).adminCommand(rest);
    case 'doctor':
      process.exitCode = await (await import('./doctor.js')).doctorCommand(rest);
      return;
    case 'bridge':
      return (await import('../bridge/index.js')).bridgeCommand(rest);
    case 'space':
      // The separate Work connector is gone: the bridge is the Space.
      throw new Error('roost space is now part of roost bridge: run `roost bridge --space NAME --contribute --project P` (see roost bridge --help)');
    case '--version':
    case 'version':
      console.log(VERSION);
      return;
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(HELP);
      return;
    default:
      if (verb.startsWith('-')) return serve(argv);
      throw new Error(`unknown command "${verb}"\n\n${HELP}`);
  }
}

// Wires the store, the apps and the routes into one HTTP server.

import { createServer, type Server } from 'node:http';
import type { EventStore } from '../storage/types.js';
import { PACKAGE_ROOT, VERSION } from './package.js';
import { FloorService, floorRoutes, floorScope } from './floor.js';
import { ApprovalService, approvalsRoutes, approvalsScope } from './approvals.js';
import { historyRoutes } from './timeline.js';
import { searchRoutes } from './search.js';
import { trendsRoutes } from './trends.js';
import { HOLDER_DEFAULTS, Holders } from './holders.js';
import type { Access } from './access.js';
import { Live } from './live/index.js';
import { IdentityService } from './identity/service.js';
import { SharedAccess } from './identity/access.js';
import { IdentityRoutes } from './identity/routes.js';
import { DeviceCookies } from './identity/devices.js';
import { PerProject } from './scoped.js';
import { invitePage, signInPage } from './signin.js';
import { FleetService } from './fleet/service.js';
import { FleetRoutes } from './fleet/routes.js';
import { HookService } from './hooks.js';
import { UsageService, usageRoutes, usageScope } from './usage.js';
import { askRoutes } from './ask.js';
import { FLOCK_DEFAULTS, FlockService } from './flock/service.js';
import { BoardSessions } from './flock/agents.js';
import { flockRoutes, flockScopes } from './flock/routes.js';
import { trustRoutes } from './trust.js';
import { bulkRoutes } from './approvals-bulk.js';
import type { ModelRoster } from '../models/config.js';
import { WorkService } from './work/service.js';
import { WorkRoutes } from './work/routes.js';
import { PRESENCE_EXPIRE_MS } from './presence.js';
import { staticFiles } from './static.js';
import { Edge } from './edge.js';
import { PUSH_DEFAULTS, PushService } from './push/service.js';
import { Notices } from './push/notices.js';
import { Router, sendJson } from './http.js';
import { WEBHOOK_DEFAULTS, WebhookService, systemResolver } from './webhooks/service.js';
import { WebhookTriggers } from './webhooks/triggers.js';
import { webhookRoutes } from './webhooks/routes.js';
import type { Resolver } from './net-address.js';
import { mountRoutes, route, type Route } from './route.js';
import { paceOwnRoutes } from './flock/pace.js';
import { liveConnectionCap } from './fd-limit.js';

export interface RoostConfig {
  host: string;
  port: number;
  heartbeatMs: number;
  sweepEveryMs: number;
  snapshotEvery: number;
  ringSize: number;
  maxBufferedBytes: number;
  /** A paced catch-up (a replay, a large snapshot) whose reader takes nothing for this long is cut, ms. */
  stallMs: number;
  maxReplay: number;
  minFlushIntervalMs: number;
  /** Shared mode even before any account exists (docs/security.md). */
  shared: boolean;
  /** Origins besides the server's own from which a signed-in browser may write. */
  origins: string[];
  /**
   * The origin people reach this server at, when it is not the address it
   * listens on (a TLS proxy in front: `https://roost.example`). It may write
   * like the server's own origin, its Host is answered, and when it is https
   * every session cookie is `Secure` (docs/security.md). null: the listening address.
   */
  publicUrl: string | null;
  /** Shared mode's limits per caller (a person, a token, or an address when anonymous). */
  requestsPerMinute: number;
  /** Failed sign-ins in a row for one login, from any address, before it must wait (src/server/identity/backoff.ts). */
  loginFailuresFree: number;
  /** The first wait after them, ms; each further failure doubles it, up to 15 minutes. */
  loginBackoffMs: number;
  streamsPerCaller: number;
  /** Live (unrevoked) tokens one person may hold; minting one more is a 409 (docs/security.md, "Limits"). */
  tokensPerPerson: number;
  /** Open live connections per process, everyone together; one more is a 503 with Retry-After (docs/security.md, "Limits"). */
  maxLiveConnections: number;
  /** Several nodes: another node's Work presence and bridges are forgotten after this long without a repeat. */
  presenceExpireMs: number;
  /**
   * An approval's asker (a hook's connection, a bridge's stream) counts as
   * gone once nobody has held it for this long; also how long a node that
   * has just started waits before it judges (docs/approvals.md).
   */
  holderGraceMs: number;
  /** A request's headers must arrive within this (slowloris). */
  headersTimeoutMs: number;
  /** A whole request (headers and body) must arrive within this; responses (streams, held hooks) may last longer. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection closes after this (above a load balancer's own idle timeout). */
  keepAliveTimeoutMs: number;
  /** The models behind the flock's crows (`--model`, docs/models.md); null: lists answer 503. */
  models: ModelRoster | null;
  /** A flock verdict's approval window (default 10 minutes; shorter in tests). */
  flockVerdictWindowMs: number;
  /** The flock driver's lease (docs/flock.md, "The lease"). */
  flockLeaseMs: number;
  /** One try of one flock model call. */
  flockCallTimeoutMs: number;
  /** How long a finished list waits for banter in the air. */
  flockBanterWaitMs: number;
  /** How long a code item's Claude Code session may fly before it lands ok:false (docs/flock.md, "Code items"). */
  flockAgentTimeoutMs: number;
  /** Jev's high band (ROOST_JEV_BAND, or its alias CROWS_JEV_THRESHOLD). */
  flockJevBand: number;
  /** MaxSpunCrows: how many crows the Boss may spin up (ROOST_MAX_SPUN_CROWS, default 8). */
  flockMaxSpunCrows: number;
  /** A crow's expectation before the harness nudges it (docs/flock.md, "Nudges"; default 10 minutes). */
  flockNudgeMs: number;
  /** Web Push's VAPID contact (mailto: or https:); default: the public URL when https, else a mailto: placeholder. */
  pushSubject: string | null;
  /**
   * Shared mode: push endpoints on loopback or private addresses are allowed
   * (tests; a push service on the server's own network). https stays required.
   */
  pushPrivateEndpoints: boolean;
  /** One push delivery's time limit, ms. */
  pushTimeoutMs: number;
  /** Outbound webhooks (docs/webhooks.md): the first retry's delay, doubled per attempt. */
  webhookBackoffMs: number;
  /** How long a failing delivery is retried (24 h). */
  webhookWindowMs: number;
  /** One webhook attempt's time limit. */
  webhookTimeoutMs: number;
  /** The webhook sender's lease (several nodes: one sends). */
  webhookLeaseMs: number;
  /** Resolves a webhook target's host (tests inject one); null: the system's resolver. */
  webhookResolve: Resolver | null;
}

export const DEFAULTS: RoostConfig = {
  host: '127.0.0.1',
  port: 4319,
  heartbeatMs: 15_000,
  sweepEveryMs: 1_000,
  snapshotEvery: 10_000,
  ringSize: 10_000,
  maxBufferedBytes: 4 * 1024 * 1024,
  stallMs: 60_000,
  maxReplay: 200_000,
  minFlushIntervalMs: 5,
  shared: false,
  origins: [],
  publicUrl: null,
  requestsPerMinute: 1200,
  loginFailuresFree: 5,
  loginBackoffMs: 1000,
  streamsPerCaller: 32,
  tokensPerPerson: 50,
  maxLiveConnections: 10_000,
  presenceExpireMs: PRESENCE_EXPIRE_MS,
  holderGraceMs: HOLDER_DEFAULTS.graceMs,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
  models: null,
  flockVerdictWindowMs: FLOCK_DEFAULTS.verdictWindowMs,
  flockLeaseMs: FLOCK_DEFAULTS.leaseMs,
  flockCallTimeoutMs: FLOCK_DEFAULTS.callTimeoutMs,
  flockBanterWaitMs: FLOCK_DEFAULTS.banterWaitMs,
  flockAgentTimeoutMs: FLOCK_DEFAULTS.agentTimeoutMs,
  flockJevBand: FLOCK_DEFAULTS.jevBand,
  flockMaxSpunCrows: FLOCK_DEFAULTS.maxSpunCrows!,
  flockNudgeMs: 10 * 60 * 1000,
  pushSubject: null,
  pushPrivateEndpoints: false,
  pushTimeoutMs: PUSH_DEFAULTS.timeoutMs,
  webhookBackoffMs: WEBHOOK_DEFAULTS.backoffMs,
  webhookWindowMs: WEBHOOK_DEFAULTS.windowMs,
  webhookTimeoutMs: WEBHOOK_DEFAULTS.timeoutMs,
  webhookLeaseMs: WEBHOOK_DEFAULTS.leaseMs,
  webhookResolve: null,
};

export { PACKAGE_ROOT, VERSION };

export interface Roost {
  server: Server;
  /** Every app's routes, as mounted (docs/security.md's table is made from them). */
  routes: Route[];
  floor: FloorService;
  approvals: ApprovalService;
  /** The fleet boards (one per thread). */
  fleet: FleetService;
  /** Every project's floor and approvals (`floor` and `approvals` above are the default project's). */
  floors: PerProject<FloorService>;
  approvalsByProject: PerProject<ApprovalService>;
  /** The default project's tokens and cost; `usageByProject` has every project's. */
  usage: UsageService;
  usageByProject: PerProject<UsageService>;
  /** The default project's flock; `flocks` has every project's. */
  flock: FlockService;
  flocks: PerProject<FlockService>;
  /** Web Push: keys, subscriptions, choices, sending (docs/web.md, "Notifications"). */
  push: PushService;
  /** The one place notices are made from the folds (src/server/push/notices.ts). */
  notices: Notices;
  /** Outbound webhooks: targets, deliveries, the sender (docs/webhooks.md). */
  webhooks: WebhookService;
  identity: IdentityService;
  access: Access;
  /** Every live connection and the scopes the apps declare (src/server/live/). */
  live: Live;
  work: WorkService;
  store: EventStore;
  url: string;
  close(): Promise<void>;
}

/** The server's own routes: health and the shared-mode sign-in pages. */
function serverRoutes(access: Access, floor: FloorService, store: EventStore, live: Live): Route[] {
  return [
    // Many scopes on one connection, each authorized on its own (src/core/live-wire.ts, docs/architecture.md).
    route({
      method: 'GET',
      path: '/live',
      auth: 'principal',
      stream: true,
      doc: 'each scope is checked on its own, as on its single-scope stream',
      handler: ({ req, res, url, principal }) => live.serveMux(req, res, url, principal!),
    }),
    route({
      method: 'GET',
      path: '/health',
      auth: 'public',
      doc: 'in shared mode it says nothing about a project',
      // Public (load balancers, `roost` itself); in shared mode it says nothing about a project.
      handler: ({ req, res }) => (access.mode === 'local' ? floor.getHealth(req, res) : sendJson(res, 200, { ok: true, version: VERSION, protocol: 1, store: store.kind, mode: 'shared' })),
    }),
    route({ method: 'GET', path: '/signin', auth: 'public', doc: 'the sign-in page', handler: ({ req, res, url }) => signInPage(req, res, url) }),
    route({ method: 'GET', path: '/invite/:code', auth: 'public', doc: 'the join page', handler: ({ req, res, url }) => invitePage(req, res, url) }),
  ];
}

/**
 * The origin of a public URL (`https://roost.example`, `http://host:8080`):
 * http or https, no user, no path, query or fragment. Anything else stops the
 * start with a message.
 */
export function publicOriginOf(raw: string): string {
  let u: URL | null = null;
  try {
    u = new URL(raw);
  } catch {}
  if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || u.username || u.password || (u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) {
    throw new Error(`the public URL must be an http or https origin such as https://roost.example (no path), got "${raw.slice(0, 200)}"`);
  }
  return u.origin;
}

export async function startRoost(store: EventStore, partial: Partial<RoostConfig> = {}): Promise<Roost> {
  // An option given as undefined (an unset environment variable) keeps its default.
  const given = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined)) as Partial<RoostConfig>;
  const cfg: RoostConfig = { ...DEFAULTS, ...given };
  const publicOrigin = cfg.publicUrl === null ? null : publicOriginOf(cfg.publicUrl);
  // The public origin writes like our own: it is one of the allowed origins everywhere.
  const origins = publicOrigin && !cfg.origins.includes(publicOrigin) ? [...cfg.origins, publicOrigin] : cfg.origins;
  // Who is calling, and what may they do (docs/security.md): local mode until
  // accounts exist (or `shared`), then people, tokens, projects and roles.
  const identity = new IdentityService(store);
  await identity.start();
  // Browsers that signed in before: their sign-ins keep a share of the password checks under a flood.
  const devices = await DeviceCookies.open(store);
  const access = new SharedAccess(identity, {
    forced: cfg.shared,
    origins,
    requestsPerMinute: cfg.requestsPerMinute,
    device: (req) => devices.verify(req)?.id ?? null,
  });
  // Web Push: the key pair is made at the first start and kept in the log.
  const push = new PushService(store, {
    access,
    subject: cfg.pushSubject ?? (publicOrigin?.startsWith('https:') ? publicOrigin : 'mailto:roost@localhost.invalid'),
    privateEndpoints: cfg.pushPrivateEndpoints,
    timeoutMs: cfg.pushTimeoutMs,
    freshMs: PUSH_DEFAULTS.freshMs,
  });
  await push.start();
  const notices = new Notices(push);
  const stopCommitNotices = notices.commits(store);
  // Outbound webhooks: folded from their stream; the lease holder sends (docs/webhooks.md).
  const webhooks = new WebhookService(store, {
    backoffMs: cfg.webhookBackoffMs,
    windowMs: cfg.webhookWindowMs,
    timeoutMs: cfg.webhookTimeoutMs,
    leaseMs: cfg.webhookLeaseMs,
    resolve: cfg.webhookResolve ?? systemResolver,
    localMode: () => access.mode === 'local',
    version: VERSION,
  });
  await webhooks.start();
  const triggers = new WebhookTriggers(webhooks);
  triggers.work(store);
  // The one live mechanism: every stream of every app, single-scope or multiplexed, keeps its rules.
  const live = new Live(access, { epoch: store.epoch, heartbeatMs: cfg.heartbeatMs, maxBufferedBytes: cfg.maxBufferedBytes, stallMs: cfg.stallMs, perCaller: cfg.streamsPerCaller, maxConnections: liveConnectionCap(cfg.maxLiveConnections) });
  const channel = (ringSize: number) => ({ ringSize, minFlushIntervalMs: cfg.minFlushIntervalMs });
  // The replay ring of a scope that many frames pass through quickly (the
  // flock's: about 8 per item; usage: one per model call). A reader further
  // behind catches up from the log, paced, so the ring is a cache; and every
  // frame it holds outlives a young-generation collection and is copied by it
  // (1,000 frames made the flock's scavenges ~25% longer: docs/flock.md).
  const CHURN_RING = 200;
  // Every project has its own floor and approvals; the default project's are started now.
  const floors = new PerProject((project) => {
    const f = new FloorService(store, {
      live,
      channel: channel(cfg.ringSize),
      project,
      sweepEveryMs: cfg.sweepEveryMs,
      snapshotEvery: cfg.snapshotEvery,
      maxReplay: cfg.maxReplay,
      version: VERSION,
    });
    notices.floor(project, f);
    triggers.floor(project, f);
    return f;
  });
  const floor = await floors.get('default');
  // Approvals and agent hooks (docs/approvals.md, docs/integrations.md). One
  // holder registry per process: which askers' waits this node holds, and
  // what the other nodes say they hold.
  const holders = new Holders(store, { graceMs: cfg.holderGraceMs, repeatMs: Math.max(50, Math.min(HOLDER_DEFAULTS.repeatMs, Math.floor(cfg.holderGraceMs / 3))) });
  holders.start();
  const approvalsByProject = new PerProject((project) => {
    const s = new ApprovalService(store, {
      live,
      channel: channel(1000),
      maxReplay: cfg.maxReplay,
      project,
      access,
      holders,
    });
    // The fleet board shows each outcome of its requests (kind fleet) as the server's echo.
    s.onClosed((a) => void fleet.boardApprovals.echo(project, a).catch((e) => console.error('roost: echoing an approval on its board failed', e)));
    notices.approvals(project, s);
    triggers.approvals(project, s);
    return s;
  });
  // The fleet boards: one stream per thread (docs/fleet.md); their requests are approvals of kind fleet.
  const fleet = new FleetService(store, {
    live,
    channel: channel(1000),
    snapshotEvery: Math.min(cfg.snapshotEvery, 1000),
    maxReplay: cfg.maxReplay,
    approvals: approvalsByProject,
    holders,
    presenceExpireMs: cfg.presenceExpireMs,
    // Declared below; called only when a result is posted.
    usage: (project) => usageByProject.get(project),
  });
  fleet.start();
  const approvals = await approvalsByProject.get('default');
  // Every project's approvals start now, not on first use: a request left
  // pending by a restart is withdrawn when its asker is gone, whether or not
  // anyone opens that project.
  for (const p of identity.state.projects.keys()) if (p !== 'default') void approvalsByProject.get(p).catch((e) => console.error(`roost: approvals of project ${p} did not start`, e));
  // Tokens and cost: the OTLP receiver and the usage roll-up (docs/integrations.md).
  const usageByProject = new PerProject(
    (project) =>
      new UsageService(store, {
        live,
        channel: channel(CHURN_RING),
        maxReplay: cfg.maxReplay,
        project,
      }),
  );
  const usage = await usageByProject.get('default');
  // The flock: lists handed to crows, verdicts as approvals (docs/flock.md).
  const flocks = new PerProject((project) => {
    const f = new FlockService(store, {
      live,
      channel: channel(CHURN_RING),
      maxReplay: cfg.maxReplay,
      snapshotEvery: cfg.snapshotEvery,
      project,
      approvals: () => approvalsByProject.get(project),
      floor: () => floors.get(project),
      usage: () => usageByProject.get(project),
      // Code items: Claude Code sessions on the project's boards, through a member's bridge.
      agents: new BoardSessions(fleet, project, { timeoutMs: cfg.flockAgentTimeoutMs }),
      settings: { models: cfg.models, verdictWindowMs: cfg.flockVerdictWindowMs, leaseMs: cfg.flockLeaseMs, callTimeoutMs: cfg.flockCallTimeoutMs, banterWaitMs: cfg.flockBanterWaitMs, jevBand: cfg.flockJevBand, maxSpunCrows: cfg.flockMaxSpunCrows, nudgeAfterMs: cfg.flockNudgeMs },
    });
    notices.flock(project, f);
    triggers.flock(project, f);
    return f;
  });
  const flock = await flocks.get('default');
  // Transcripts are read only in local mode: a hook on this machine names a file on this machine.
  const hooks = new HookService(floors, approvalsByProject, usageByProject, () => access.mode === 'local');
  const ids = new IdentityRoutes(identity, access, { loginFailuresFree: cfg.loginFailuresFree, loginBackoffMs: cfg.loginBackoffMs, tokensPerPerson: cfg.tokensPerPerson, secureCookies: publicOrigin?.startsWith('https:') ?? false, devices });
  // Work: conversations, Spaces' agents, commands and results (docs/work.md).
  const work = new WorkService(store, {
    live,
    channel: channel(1000),
    maxReplay: cfg.maxReplay,
    access,
    // A blocked execution's approval pointer is checked against the board it names.
    boards: fleet,
    presenceExpireMs: cfg.presenceExpireMs,
    // Every project of the identity state; `default` always (local mode has no project events).
    projects: () => [{ id: 'default', name: 'Default' }, ...[...identity.state.projects.values()].filter((p) => p.id !== 'default').map((p) => ({ id: p.id, name: p.name }))],
    // A spent budget refuses a new command (a Work agent is `<space>:<Claude Code session id>`).
    budgetPause: async (project, agent) => (await usageByProject.get(project)).pauseReason({ session: `claude-code:${agent.slice(agent.lastIndexOf(':') + 1)}` }),
  });
  await work.start();
  // The live scopes of every app (docs/architecture.md, "Live streams").
  live.declare('floor', floorScope(floors)).declare('approvals', approvalsScope(approvalsByProject)).declare('usage', usageScope(usageByProject)).declare('fleet', fleet.scope);
  const fs = flockScopes(flocks);
  live.declare('flock', fs.flock).declare('flock.list', fs.list).declare('flock.nest', fs.nest);
  for (const [app, spec] of Object.entries(work.scopes())) live.declare(app, spec);
  live.declare('members', ids.membersScope(store.epoch));

  // One route table per app, every one mounted the same way (src/server/route.ts);
  // GET requests no route claims are files (the web app, /lib/*.js).
  const routes: Route[] = [
    ...serverRoutes(access, floor, store, live),
    ...floorRoutes(floors, live),
    ...historyRoutes(store, floors, approvalsByProject),
    ...searchRoutes(store),
    ...trendsRoutes(store),
    ...approvalsRoutes(approvalsByProject, live),
    ...new FleetRoutes(fleet).list(),
    ...hooks.routes(),
    ...usageRoutes(usageByProject, floors, live),
    ...askRoutes(floors, approvalsByProject),
    ...flockRoutes(flocks, approvalsByProject, live, access),
    ...trustRoutes(flocks, approvalsByProject, access),
    ...bulkRoutes(approvalsByProject, access),
    ...ids.routes(),
    ...new WorkRoutes(work).routes(),
    ...push.routes(),
    ...webhookRoutes(webhooks, access),
  ];
  const router = mountRoutes(new Router(), routes, { access, space: (id, p) => work.needSpace(id, p) }).otherwise(staticFiles(PACKAGE_ROOT, access));
  // The flock's pacer yields to every request but those of routes marked `flock` (flock/pace.ts).
  paceOwnRoutes(routes);

  // The edge (src/server/edge.ts) sees every request first: Host, Origin, security headers.
  const edge = new Edge({ listenHost: cfg.host, origins });
  // Slow requests are cut: headers must arrive within headersTimeoutMs, the
  // whole request (body included) within requestTimeoutMs, and an idle
  // keep-alive connection closes after keepAliveTimeoutMs. Streams are long
  // responses, not long requests: none of these apply once a request is in.
  // The connections are checked every quarter of the headers timeout (at
  // most every second), so a slow socket is closed within about 1.25 times it.
  const server = createServer(
    {
      headersTimeout: cfg.headersTimeoutMs,
      requestTimeout: cfg.requestTimeoutMs,
      keepAliveTimeout: cfg.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(cfg.headersTimeoutMs / 4))),
    },
    (req, res) => {
      if (edge.admit(req, res)) router.handle(req, res);
    },
  );
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    const timedOut = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    if (socket.writable) socket.end(timedOut ? 'HTTP/1.1 408 Request Timeout\r\nconnection: close\r\n\r\n' : 'HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy(err);
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(cfg.port, cfg.host, () => {
      server.off('error', fail);
      ok();
    });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : cfg.port;
  edge.listening(port);
  const host = cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host;
  return {
    server,
    routes,
    floor,
    approvals,
    fleet,
    floors,
    approvalsByProject,
    usage,
    usageByProject,
    flock,
    flocks,
    push,
    notices,
    webhooks,
    identity,
    access,
    live,
    work,
    store,
    url: `http://${host}:${port}`,
    async close() {
      live.stop();
      await flocks.stopAll();
      await floors.stopAll();
      await approvalsByProject.stopAll();
      holders.stop();
      await usageByProject.stopAll();
      access.stop();
      await identity.stop();
      await fleet.stop();
      await work.stop();
      stopCommitNotices();
      await notices.settled();
      triggers.stop();
      await triggers.settled();
      await webhooks.stop();
      await push.stop();
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
      await store.close();
    },
  };
}


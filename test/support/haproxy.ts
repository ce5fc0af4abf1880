// A real load balancer in front of Roost nodes: Debian's HAProxy (`apt-get
// install haproxy`; `.ci/run` installs it), configured as docs/scale-out.md
// says (round-robin, nothing sticky, health-checked on /health, no buffering,
// idle timeouts above the 15 s heartbeat), on a free port of its own.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, tempDir } from './server.js';

/** The haproxy binary (ROOST_HAPROXY, else the one on PATH or in /usr/sbin), or null. */
export function haproxyPath(): string | null {
  if (process.env.ROOST_HAPROXY) return process.env.ROOST_HAPROXY;
  try {
    return execFileSync('sh', ['-c', 'command -v haproxy || ls /usr/sbin/haproxy'], { encoding: 'utf8' }).trim().split('\n')[0] || null;
  } catch {
    return null;
  }
}

export interface ProxyOptions {
  /** How often a node's /health is checked, ms (default 1000). */
  checkMs?: number;
  /** Checks failed in a row before a node is out (default 3), and passed before it is back in (default 2). */
  fall?: number;
  rise?: number;
  /** The Host the health check names (default the proxy's own, 127.0.0.1:<port>). */
  host?: string;
  /** The proxy's port (default a free one): known before the nodes start, for their --origin. */
  port?: number;
}

/**
 * The configuration: one frontend on `port`, one backend with a server per
 * node (`node1`, `node2`, ...), each response carrying the node that answered
 * as `X-Roost-Node` (for tests and for people reading a browser's network tab).
 */
export function haproxyConfig(port: number, nodes: { host: string; port: number }[], opts: ProxyOptions = {}): string {
  const check = opts.checkMs ?? 1000;
  return `global
    maxconn 4000
    log stderr format short local0 notice

defaults
    mode http
    log global
    option dontlognull
    # A refused connection (a node that just died) is tried again on another node;
    # nothing was sent yet, so this never doubles a request.
    retries 3
    option redispatch 1
    timeout connect 2s
    # Streams and held hooks: idle timeouts well above the 15 s heartbeat; a held
    # approval's hook waits up to its window with no byte sent, so the server side is long.
    timeout client 120s
    timeout server 15m
    timeout tunnel 1h
    timeout http-request 10s
    timeout http-keep-alive 30s
    timeout queue 5s
    # Keep-alive to the nodes (agents post many small events). HAProxy forwards a
    # response as it arrives: no compression, no response buffering to turn off.
    option http-keep-alive

frontend roost
    bind 127.0.0.1:${port}
    default_backend nodes

backend nodes
    balance roundrobin
    # The check names the public Host (a node in local mode answers only its own
    # names and its configured origins: start the nodes with --origin <the public URL>).
    option httpchk
    http-check send meth GET uri /health ver HTTP/1.1 hdr Host ${opts.host ?? `127.0.0.1:${port}`}
    http-check expect status 200
    # A refused check (a dead node) fails at once; a slow one has 5 s, so a node
    # that is only busy is not taken out. No on-marked-down shutdown-sessions: a
    # busy node wrongly marked down would have its healthy streams and held hooks
    # cut (a dead node's sockets are closed by its kernel anyway).
    timeout check 5s
    default-server inter ${check}ms fastinter ${Math.min(check, 250)}ms downinter ${check}ms fall ${opts.fall ?? 3} rise ${opts.rise ?? 2}
    http-response set-header X-Roost-Node %s
${nodes.map((n, i) => `    server node${i + 1} ${n.host}:${n.port} check`).join('\n')}
`;
}

export interface Haproxy {
  url: string;
  port: number;
  proc: ChildProcess;
  config: string;
  log(): string;
  stop(): Promise<void>;
}

/** Starts HAProxy in the foreground in front of `nodes` (ports on 127.0.0.1) and waits until it answers /health. */
export async function startHaproxy(nodePorts: number[], opts: ProxyOptions = {}): Promise<Haproxy> {
  const bin = haproxyPath();
  if (!bin) throw new Error('haproxy not found (apt-get install haproxy)');
  const port = opts.port ?? (await freePort());
  const dir = tempDir('roost-haproxy-');
  const config = haproxyConfig(port, nodePorts.map((p) => ({ host: '127.0.0.1', port: p })), opts);
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  // -db: stay in the foreground (no daemon), so the test owns the process.
  const proc = spawn(bin, ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`haproxy exited (${proc.exitCode}): ${out}`);
    try {
      if ((await fetch(url + '/health')).ok) break;
    } catch {}
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`haproxy did not answer: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    port,
    proc,
    config,
    log: () => out,
    stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
      return new Promise((ok) => {
        proc.once('exit', () => ok());
        proc.kill('SIGTERM');
      });
    },
  };
}

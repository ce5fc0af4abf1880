// The load generator: a separate process from the server, driven by bench/run.ts.
// Usage: node dist/bench/load.js '<json config>'; prints one JSON line of results
// (the idle mode prints {"ready":...} and then holds its streams until killed).

import autocannon from 'autocannon';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

type Config =
  | { mode: 'post'; posts: string[]; rate: number; seconds: number }
  | { mode: 'http'; url: string; body: string; connections: number; seconds: number; warmupSeconds?: number }
  | { mode: 'fanout'; streams: string[]; posts: string[]; subscribers: number; measured: number; rate: number; seconds: number; path?: string }
  | { mode: 'idle'; streams: string[]; subscribers: number; path?: string }
  | { mode: 'storm'; streams: string[]; posts: string[]; subscribers: number; rate: number };

const cfg = JSON.parse(process.argv[2]) as Config;
const now = () => performance.timeOrigin + performance.now();
const agent = new Agent({ keepAlive: true, maxSockets: 16 });

function percentile(sorted: Float64Array | number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function postEvent(base: string, body: string): Promise<{ status: number; last: number }> {
  return new Promise((ok, fail) => {
    const u = new URL('/events', base);
    const req = request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          let last = 0;
          try {
            last = (JSON.parse(text) as { last: number }).last;
          } catch {}
          ok({ status: res.statusCode ?? 0, last });
        });
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

interface Sub {
  lastPos: number;
  seen: number;
  gaps: number;
  dups: number;
  tail: string;
  req: import('node:http').ClientRequest | null;
  gotSnapshot: boolean;
  lastId: string;
}

const ID_RE = /^id: ([^:\n]+):(\d+)$/gm;

/** Opens one SSE stream; `onFrames` gets complete frames' text. */
function openStream(base: string, lastId: string | null, sub: Sub, onText: ((s: Sub, text: string) => void) | null, path = '/stream'): Promise<void> {
  return new Promise((ok, fail) => {
    const u = new URL(path, base);
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (lastId) headers['last-event-id'] = lastId;
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, headers, agent: false }, (res) => {
      res.setEncoding('utf8');
      let first = true;
      res.on('data', (chunk: string) => {
        if (first) {
          first = false;
          ok();
        }
        if (onText) onText(sub, chunk);
      });
      res.on('error', () => {});
    });
    req.on('error', (e) => {
      if (sub.req === req) fail(e);
    });
    sub.req = req;
    req.end();
  });
}

/** Tracks positions from `id:` lines: counts gaps and duplicates. */
function trackIds(s: Sub, chunk: string): void {
  const text = s.tail + chunk;
  const end = text.lastIndexOf('\n\n');
  if (end < 0) {
    s.tail = text;
    return;
  }
  s.tail = text.slice(end + 2);
  const body = text.slice(0, end);
  ID_RE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = ID_RE.exec(body))) {
    const pos = Number(m[2]);
    s.lastId = `${m[1]}:${m[2]}`;
    if (!s.gotSnapshot) {
      s.gotSnapshot = true;
      s.lastPos = pos;
      continue;
    }
    if (pos <= s.lastPos) s.dups++;
    else if (pos !== s.lastPos + 1) s.gaps++;
    if (pos > s.lastPos) s.lastPos = pos;
    s.seen++;
  }
}

function newSub(): Sub {
  return { lastPos: 0, seen: 0, gaps: 0, dups: 0, tail: '', req: null, gotSnapshot: false, lastId: '' };
}

/** A stream that only drains its bytes (raw socket: no HTTP parsing, no decoding). */
function openDrain(base: string, path = '/stream'): Promise<Sub> {
  return new Promise((ok, fail) => {
    const u = new URL(path, base);
    const sock = connect(Number(u.port), u.hostname, () => sock.write(`GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nAccept: text/event-stream\r\n\r\n`));
    const sub = newSub();
    sock.once('data', () => ok(sub));
    sock.on('data', () => {});
    sock.on('error', fail);
    sub.req = { destroy: () => sock.destroy() } as unknown as Sub['req'];
  });
}

async function openDrained(n: number, streams: string[], path?: string): Promise<Sub[]> {
  const subs: Sub[] = [];
  for (let i = 0; i < n; i += 200) {
    const chunk: Promise<Sub>[] = [];
    for (let j = i; j < Math.min(n, i + 200); j++) chunk.push(openDrain(streams[j % streams.length], path));
    subs.push(...(await Promise.all(chunk)));
  }
  return subs;
}

async function openMany(n: number, streams: string[], onText: ((s: Sub, text: string) => void) | null, path?: string): Promise<Sub[]> {
  const subs: Sub[] = [];
  for (let i = 0; i < n; i += 200) {
    const chunk: Promise<void>[] = [];
    for (let j = i; j < Math.min(n, i + 200); j++) {
      const s = newSub();
      subs.push(s);
      chunk.push(openStream(streams[j % streams.length], null, s, onText, path));
    }
    await Promise.all(chunk);
  }
  return subs;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Posts `rate` events/s, one per request, until stopped; returns acknowledged positions. */
function poster(posts: string[], rate: number, make: (i: number) => string) {
  let i = 0;
  let maxAck = 0;
  let errors = 0;
  let running = true;
  const tickMs = 10;
  const t0 = now();
  // What is due is counted from the clock, not from ticks: a late tick (a busy
  // machine) sends what it owes, so the rate is the one asked for.
  const timer = setInterval(() => {
    if (!running) return;
    const due = Math.floor(((now() - t0) * rate) / 1000);
    while (i < due) {
      const n = i++;
      postEvent(posts[n % posts.length], make(n)).then(
        (r) => {
          if (r.status === 200) maxAck = Math.max(maxAck, r.last);
          else errors++;
        },
        () => errors++,
      );
    }
  }, tickMs);
  return {
    get sent() {
      return i;
    },
    get maxAck() {
      return maxAck;
    },
    get errors() {
      return errors;
    },
    stop() {
      running = false;
      clearInterval(timer);
    },
  };
}

async function main(): Promise<unknown> {
  switch (cfg.mode) {
    case 'http': {
      const r = await autocannon({
        url: cfg.url,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: cfg.body,
        connections: cfg.connections,
        duration: cfg.seconds,
        // The same load, not counted, first: what is measured is a running server, not its first seconds' compiling.
        ...(cfg.warmupSeconds ? { warmup: { connections: cfg.connections, duration: cfg.warmupSeconds } } : {}),
      });
      return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts, non2xx: r.non2xx, total: r.requests.total };
    }
    case 'fanout': {
      // Latency is parsed on `measured` subscribers; the others drain their bytes.
      const lat: number[] = [];
      let received = 0;
      const onMeasured = (_s: Sub, chunk: string) => {
        const t = now();
        let at = chunk.indexOf('"activity":"bench:');
        while (at >= 0) {
          const end = chunk.indexOf('"', at + 18);
          const sent = Number(chunk.slice(at + 18, end));
          if (Number.isFinite(sent)) {
            lat.push(t - sent);
            received++;
          }
          at = chunk.indexOf('"activity":"bench:', end);
        }
      };
      // `path`: another stream than the floor's /stream (the mux workload: `/live?s=...`, four scopes per connection).
      const measured = await openMany(cfg.measured, cfg.streams.slice().reverse(), onMeasured, cfg.path);
      const drained = await openDrained(cfg.subscribers - cfg.measured, cfg.streams, cfg.path);
      await sleep(500);
      lat.length = 0;
      received = 0;
      // The poster is a process of its own, so the subscribers' work cannot delay the sending.
      const p = await new Promise<{ sent: number; errors: number }>((ok, fail) => {
        const child = spawn(process.execPath, [fileURLToPath(import.meta.url), JSON.stringify({ mode: 'post', posts: cfg.posts, rate: cfg.rate, seconds: cfg.seconds })], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.on('exit', (c) => (c === 0 ? ok(JSON.parse(out)) : fail(new Error('poster failed'))));
      });
      await sleep(1000);
      for (const s of [...measured, ...drained]) s.req?.destroy();
      const sorted = Float64Array.from(lat).sort();
      return { sent: p.sent, errors: p.errors, expected: p.sent * cfg.measured, received, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] };
    }
    case 'post': {
      const p = poster(cfg.posts, cfg.rate, (i) => JSON.stringify({ type: 'status', agent: `fan-${i % 50}`, team: 'bench', activity: `bench:${now()}` }));
      await sleep(cfg.seconds * 1000);
      p.stop();
      await sleep(300);
      return { sent: p.sent, errors: p.errors };
    }
    case 'idle': {
      const subs = await openDrained(cfg.subscribers, cfg.streams, cfg.path);
      await sleep(1500);
      process.stdout.write(JSON.stringify({ ready: subs.length }) + '\n');
      await new Promise(() => {});
      return null;
    }
    case 'storm': {
      const subs = await openMany(cfg.subscribers, cfg.streams, trackIds);
      const p = poster(cfg.posts, cfg.rate, (i) => JSON.stringify({ type: 'status', agent: `storm-${i % 50}`, team: 'storm', activity: `n=${i}` }));
      await sleep(2000);
      // Everyone drops at once and comes back with the last id it saw.
      for (const s of subs) {
        const old = s.req;
        s.req = null;
        s.tail = '';
        old?.destroy();
      }
      const target = p.maxAck;
      const t0 = now();
      await Promise.all(subs.map((s, j) => openStream(cfg.streams[(j + 1) % cfg.streams.length], s.lastId, s, trackIds)));
      let caughtUp = NaN;
      for (;;) {
        if (subs.every((s) => s.lastPos >= target)) {
          caughtUp = now() - t0;
          break;
        }
        if (now() - t0 > 30_000) break;
        await sleep(5);
      }
      await sleep(500);
      p.stop();
      await sleep(500);
      for (const s of subs) s.req?.destroy();
      return {
        caughtUpMs: caughtUp,
        gaps: subs.reduce((a, s) => a + s.gaps, 0),
        duplicates: subs.reduce((a, s) => a + s.dups, 0),
        subscribers: subs.length,
        sent: p.sent,
        errors: p.errors,
      };
    }
  }
}

main().then(
  (r) => {
    if (r !== null) process.stdout.write(JSON.stringify(r) + '\n');
    process.exit(0);
  },
  (e) => {
    process.stderr.write(String(e?.stack ?? e) + '\n');
    process.exit(1);
  },
);

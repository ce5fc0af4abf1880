// An SSE client as a browser's EventSource behaves behind a load balancer:
// when its stream ends it reconnects (to whichever node the balancer picks)
// with `Last-Event-ID`, and it checks what it gets: every durable frame is the
// next position of its stream, none skipped, none twice, no snapshot again.
// Raw node:http, so two hundred of them cost the test little.
import http from 'node:http';

export interface FollowerFrame {
  id: string;
  event: string;
  data: string;
}

export class Follower {
  /** The position of the last durable frame (-1 before the snapshot). */
  last = -1;
  lastId = '';
  frames = 0;
  gaps: string[] = [];
  duplicates = 0;
  /** Snapshots after the first: the stream started over instead of resuming. */
  resets = 0;
  /** Streams that ended (the node died, or the balancer cut it). */
  drops = 0;
  /** From the end of a stream to the next one's 200, ms, per reconnect. */
  resumes: number[] = [];
  /** The node that serves the current stream (`X-Roost-Node`, set by the balancer). */
  node = '';
  /** Kept frames, when asked to keep them. */
  kept: FollowerFrame[] = [];
  private downAt = 0;
  private closed = false;
  private req: http.ClientRequest | null = null;
  private opened: (() => void) | null = null;

  constructor(
    readonly base: string,
    readonly path: string,
    readonly opts: { keep?: boolean; retryMs?: number } = {},
  ) {}

  /** Resolves when the first stream is open. */
  start(): Promise<void> {
    return new Promise((ok) => {
      this.opened = ok;
      this.connect();
    });
  }

  close(): void {
    this.closed = true;
    this.req?.destroy();
  }

  private connect(): void {
    if (this.closed) return;
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (this.lastId) headers['last-event-id'] = this.lastId;
    let over = false;
    const again = () => {
      if (over) return;
      over = true;
      if (this.closed) return;
      if (!this.downAt) this.downAt = Date.now();
      const base = this.opts.retryMs ?? 250;
      setTimeout(() => this.connect(), base + Math.random() * base);
    };
    const req = http.get(this.base + this.path, { headers, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        again();
        return;
      }
      this.node = String(res.headers['x-roost-node'] ?? '');
      if (this.downAt) {
        this.resumes.push(Date.now() - this.downAt);
        this.downAt = 0;
      }
      this.opened?.();
      this.opened = null;
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (d: string) => {
        buf += d;
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          this.block(block);
        }
      });
      res.on('error', () => {});
      res.on('close', () => {
        this.drops++;
        again();
      });
    });
    req.on('error', again);
    this.req = req;
  }

  private block(block: string): void {
    let id = '';
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (!id) return;
    const pos = Number(id.slice(id.lastIndexOf(':') + 1));
    if (event === 'snapshot') {
      if (this.last >= 0) this.resets++;
      this.last = pos;
    } else if (this.last >= 0) {
      if (pos <= this.last) {
        this.duplicates++;
        return;
      }
      if (pos !== this.last + 1) this.gaps.push(`${this.last} → ${pos}`);
      this.last = pos;
      this.frames++;
    } else {
      this.last = pos;
      this.frames++;
    }
    this.lastId = id;
    if (this.opts.keep) this.kept.push({ id, event, data: data.join('\n') });
  }
}

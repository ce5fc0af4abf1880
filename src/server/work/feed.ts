// The Space command feeds: `GET /api/v2/spaces/:id/commands`, what a
// member's bridge should run now.
//
// For each idle agent of the Space in every project it is contributed to, the
// head of the queue. The whole due set is sent on connect and whenever it
// changes (never the same set twice in a row), so a reconnect replays exactly
// what has not been started (`execution.started` acknowledges a command). Each
// frame also names the projects the Space acts in now, so a bridge hears of a
// contribution (or a revocation) made in a browser and reconciles at once.

import type { ServerResponse } from 'node:http';
import { dueCommands } from '../../core/work.js';
import type { Principal } from '../access.js';
import type { Book } from './book.js';

interface Feed {
  space: string;
  res: ServerResponse;
  /** The last frame's data, so an unchanged due set is not sent again. */
  last: string;
  p: Principal;
}

export class SpaceFeeds {
  private feeds = new Set<Feed>();

  /** `contributions(space, p)`: the project books a Space acts in for its owner now. */
  constructor(private contributions: (space: string, p: Principal) => Book[]) {}

  /** Serves one feed on `res` (the caller checked that `p` owns the Space). */
  open(res: ServerResponse, space: string, p: Principal): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' });
    res.write('retry: 1000\n\n');
    const f: Feed = { space, res, last: '', p };
    this.feeds.add(f);
    res.on('close', () => this.feeds.delete(f));
    this.push(f);
  }

  /** Something a feed may show changed (a Work entry folded, a member's role changed). */
  pushAll(): void {
    for (const f of this.feeds) this.push(f);
  }

  heartbeat(): void {
    for (const f of this.feeds) f.res.write(':\n\n');
  }

  stop(): void {
    for (const f of this.feeds) f.res.end();
  }

  private dueFor(space: string, p: Principal): unknown[] {
    const out: unknown[] = [];
    for (const b of this.contributions(space, p)) {
      const project = (b.scope as { project: string }).project;
      for (const c of dueCommands(b.state, space)) {
        const a = b.state.agents.get(c.agent);
        if (a) out.push({ project, id: c.id, agent: c.agent, session: a.session, text: c.text, by: c.by, at: c.at, position: c.position });
      }
    }
    return out;
  }

  private push(f: Feed): void {
    const projects = this.contributions(f.space, f.p).map((b) => (b.scope as { project: string }).project);
    const data = JSON.stringify({ commands: this.dueFor(f.space, f.p), projects });
    if (data === f.last) return;
    f.last = data;
    f.res.write(`event: commands\ndata: ${data}\n\n`);
  }
}

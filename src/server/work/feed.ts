// The Space command feeds: the live scope `space:<id>` (the single-scope
// endpoint `GET /api/v2/spaces/:id/commands`), what a member's bridge should
// run now. A lossy channel of the one live mechanism (src/server/live/), so
// it keeps every stream's rules: the per-caller limit, the slow-consumer cut,
// and the end of the connection when its token is revoked or its sign-in ends.
//
// For each idle agent of the Space in every project it is contributed to, the
// head of the queue. The whole due set is sent on connect and whenever it
// changes (never the same set twice in a row to one subscription), so a
// reconnect replays exactly what has not been started (`execution.started`
// acknowledges a command). Each frame also names the projects the Space acts
// in now, so a bridge hears of a contribution (or a revocation) made in a
// browser and reconciles at once. What a subscription sees depends on its
// holder (a Space acts in a project only while its owner is a member there,
// a token only in its own project), so each frame is made per subscription.

import { dueCommands } from '../../core/work.js';
import type { Principal } from '../access.js';
import { LossyChannel, type Subscription } from '../live/index.js';
import type { Book } from './book.js';

export class SpaceFeeds {
  private channels = new Map<string, LossyChannel>();

  /** `contributions(space, p)`: the project books a Space acts in for its owner now. */
  constructor(
    private epoch: string,
    private contributions: (space: string, p: Principal) => Book[],
  ) {}

  /** The channel of a Space's feed (the caller checked that the subscriber owns the Space). */
  channel(space: string): LossyChannel {
    let ch = this.channels.get(space);
    if (!ch) {
      ch = new LossyChannel(`space:${space}`, this.epoch);
      ch.opened = (sub) => this.push(space, sub);
      this.channels.set(space, ch);
    }
    return ch;
  }

  /** Something a feed may show changed (a Work entry folded, a member's role changed). */
  pushAll(): void {
    for (const [space, ch] of this.channels) for (const sub of ch.subs) this.push(space, sub);
  }

  stop(): void {
    for (const ch of this.channels.values()) ch.stop();
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

  private push(space: string, sub: Subscription): void {
    const projects = this.contributions(space, sub.who).map((b) => (b.scope as { project: string }).project);
    const data = JSON.stringify({ commands: this.dueFor(space, sub.who), projects });
    if (data === sub.memo) return;
    sub.memo = data;
    sub.channel.send(sub, 'commands', data);
  }
}

// Nests and messages: a nest created, a message posted (one at a time per
// node: a msg_id is the next number), hooks on every post, Jev's tag logged.

import { flockTs } from '../../core/flock.js';
import { randomUUID } from 'node:crypto';
import type { JevAnswer } from './jev.js';
import { type Obj } from './settings.js';
import { FlockStreams } from './streams.js';

export abstract class FlockNests extends FlockStreams {

  /** A new nest (already checked by the route). */
  async createNest(nest_id: string, name: string, crows: string[], by: string): Promise<boolean> {
    await this.append([{ type: 'nest.created', nest_id, name, crows, by, ts: flockTs(Date.now()) }]);
    return this.state.nests.get(nest_id)?.name === name;
  }

  /**
   * Posts a message (checked by the route; `build` makes the event from the
   * state at the moment of the append, so its msg_id is the next one). One
   * post at a time on this node; another node's post taking the number first
   * is retried. Resolves with the msg_id, or '' when the fold refused it.
   */
  postMessage(nest_id: string, build: () => Obj, opts: { key?: string } = {}): Promise<string> {
    let ev: Obj = {};
    const run = async (): Promise<string> => {
      for (let tries = 0; tries < 5; tries++) {
        const before = this.state.nests.get(nest_id)?.count;
        if (before === undefined) return '';
        const msg_id = `${nest_id}-${before + 1}`;
        const post = randomUUID();
        const b = build();
        // A post may carry its own time (an ask decided in the inbox: the decision's); else now.
        ev = { type: 'nest.message', nest_id, msg_id, ...b, post, ts: typeof b.ts === 'string' ? b.ts : flockTs(Date.now()) };
        // Keyed (an ask decided in the inbox, posted as the owner's reply by whichever node hears it first): once in the log.
        await this.append([ev], opts.key);
        const frames = this.nestFrames.get(nest_id) ?? [];
        for (let i = frames.length - 1; i >= 0; i--) if (frames[i].msg_id === msg_id) {
          if (frames[i].post === post) return msg_id;
          break;
        }
        // Refused by the fold (nothing moved), or another node's post took the number: try the next.
        if (this.state.nests.get(nest_id)?.count === before) return '';
      }
      return '';
    };
    const p = this.posting.then(run, run);
    this.posting = p.catch(() => {});
    // The hooks run after this node's post is folded and outside the queue (a hook may post in turn).
    return p.then(async (msg_id) => {
      if (msg_id) for (const h of this.postedHooks) await h(nest_id, msg_id, ev);
      return msg_id;
    });
  }
  /** Hears each message this node posted, once folded (the watchdog, ask_owner's approvals: watchdog.ts). */
  onPosted(h: (nest_id: string, msg_id: string, ev: Obj) => Promise<void>): () => void {
    this.postedHooks.add(h);
    return () => this.postedHooks.delete(h);
  }

  /** Jev's probabilities for a posted message: one `jev.tag` per question (the mode on a request only). */
  async logJev(nest_id: string, msg_id: string, request: boolean, a: JevAnswer, header: { kind?: string; mode?: string } = {}): Promise<void> {
    const ts = flockTs(Date.now());
    const base = { type: 'jev.tag', nest_id, msg_id, band: this.settings.jevBand, source: this.jev.source, ts };
    // The author's own header rides along (the fold ignores it): one source of truth labels for the calibration (jev-log.ts).
    const evs: Obj[] = [{ ...base, question: 'kind', probs: a.kindProbs, header: header.kind ?? '', ...(a.tokens ? { tokens: a.tokens } : {}) }];
    if (request && a.modeProbs) evs.push({ ...base, question: 'mode', probs: a.modeProbs, header: header.mode ?? '' });
    await this.append(evs);
  }
}

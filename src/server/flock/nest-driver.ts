// Must-respond (spec/flock-events.md, "Nest messages"; docs/flock.md,
// "Must-respond"): a message that calls for a response invokes exactly one
// crow (a conspiracy request: up to `invited` crows, each a distinct reading).
// Quill answers or relays, the Boss answers and its spin-up orders are
// executed here.
//
// Invariants:
// - Nothing polls. A nest is looked at only when one of its events is folded
//   (`kick`), when a flight lands anywhere while it waited for a free crow
//   (`kickStarved`), or when this node takes the lease (`kickAll`). A nest
//   with nothing pending makes no call and appends nothing.
// - Only the lease holder drives, so a crow is invoked once per missing
//   response: the fold's `pendingResponses` counts responders plus crows in
//   the air, and `nest.flying` is accepted once per message and crow.
// - A crow is sent again for a message only when one sent before came back
//   without a response that counts (a failed call, an answer the post check
//   refused), at most RETRIES times per message; then the message rests.
// - A solo or split request is taken by its first claim (or deliver, or
//   decline): a crow coming back after another took it posts nothing.
// - A crow's answer is posted through the one post check (post.ts): Jev
//   tags it with the crow's kind as the header, like any crow's post.
//   What the harness posts for a service role (Quill's deliver, relay or
//   say; the Boss's say) has the kind the harness decided: `tagged_by:
//   "harness"`.

import {
  crowAvailable,
  FLOCK_LIMITS,
  flockSaturated,
  flockTs,
  isWorkerCrow,
  pendingResponses,
  pickCrows,
  spinRefusal,
  isCrow,
  type FlockState,
  type NestRecord,
} from '../../core/flock.js';
import { isServiceRole, WORKER_NAMES } from '../../core/personas.js';
import type { ModelOutcome, ModelRequest } from '../../models/index.js';
import type { ModelRole } from '../../models/config.js';
import type { Jev, JevAnswer } from './jev.js';
import { bossRequest, quillRequest, relayable, respondRequest, serviceRequest, type OrderInput, type QuillInput, type RespondInput } from './nest-prompts.js';
import { checkPost } from './post.js';
import { Passes } from './passes.js';

type Obj = Record<string, unknown>;

/** More crows a message may be sent after one came back without a response that counts. */
export const RETRIES = 2;

/** What the driver needs of the flock service (service.ts implements it). */
export interface NestHost {
  readonly state: FlockState;
  /** True while this node holds the lease and a model is configured. */
  readonly driving: boolean;
  readonly jev: Jev;
  readonly jevBand: number;
  /** MaxSpunCrows, the registry's cap (a setting). */
  readonly maxSpunCrows: number;
  append(events: Obj[], key?: string): Promise<void>;
  postMessage(nest_id: string, build: () => Obj): Promise<string>;
  logJev(nest_id: string, msg_id: string, request: boolean, a: JevAnswer, header?: { kind?: string; mode?: string }): Promise<void>;
  call(role: ModelRole, req: ModelRequest, who: { crow: string; item_id: string; nest_id: string }): Promise<ModelOutcome>;
  /** Claims the lease when nobody holds it (taking it calls `kickAll`). */
  wantLease(): Promise<void>;
}

const ROLE_OF: Record<string, ModelRole> = { Quill: 'quill', Boss: 'boss', Sentry: 'sentry', Elder: 'elder' };

export class NestDriver {
  private stopped = false;
  private passes = new Passes(
    (id) => this.track(this.pass(id)),
    (id, e) => {
      if (!this.stopped) console.error(`roost: flock nest ${id}`, e);
    },
    () => this.stopped,
  );
  /** Nests with a message waiting for a free crow (looked at again when a flight lands). */
  private starved = new Set<string>();
  /** Calls this node has in the air: `<nest>\0<msg>\0<crow>`. */
  private calls = new Set<string>();
  private work = new Set<Promise<unknown>>();
  readonly stats = { calls: 0, passes: 0 };

  constructor(private host: NestHost) {}

  kick(nest_id: string): void {
    this.passes.kick(nest_id);
  }

  /** A flight landed or a crow became free: nests waiting for one look again. */
  kickStarved(): void {
    for (const n of this.starved) this.kick(n);
  }

  /** This node took the lease: every nest with something open or in the air. */
  kickAll(): void {
    for (const [id, nest] of this.host.state.nests) if (nest.open.size > 0) this.kick(id);
    for (const k of this.host.state.airborne.keys()) if (k.startsWith('N\u0000')) this.kick(k.split('\u0000')[1]);
  }

  /** Whether any nest wants a crow now or has one in the air (the lease is held only while there is work). */
  hasWork(): boolean {
    const s = this.host.state;
    for (const k of s.airborne.keys()) if (k.startsWith('N\u0000')) return true;
    for (const id of s.nests.keys()) if (this.wanted(id).length > 0) return true;
    return false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.race([Promise.allSettled([...this.work]), new Promise((r) => setTimeout(r, 2000).unref())]);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.work.add(p);
    void p.finally(() => this.work.delete(p)).catch(() => {});
    return p;
  }

  /** Messages of a nest that want a crow now: open, short of responders, not addressed to a person, not rested. */
  private wanted(nest_id: string): { rec: NestRecord; missing: number; sent: string[]; responders: string[] }[] {
    const nest = this.host.state.nests.get(nest_id);
    if (!nest) return [];
    const out: { rec: NestRecord; missing: number; sent: string[]; responders: string[] }[] = [];
    for (const p of pendingResponses(this.host.state, nest_id)) {
      const rec = nest.messages.get(p.msg_id);
      // A request to the owner waits for a person; one whose crows all came back without answering rests.
      if (!rec || p.to === 'owner' || p.sent.length >= p.needed + RETRIES) continue;
      // A service role answers a message once.
      if (isServiceRole(p.to) && p.sent.includes(p.to)) continue;
      const inAir = p.flying.filter((c) => !p.responders.includes(c)).length;
      const missing = p.needed - p.responders.length - inAir;
      if (missing > 0) out.push({ rec, missing, sent: p.sent, responders: p.responders });
    }
    return out;
  }

  /** One look at a nest: relaunch calls lost with another node, then one crow per missing response. */
  private async pass(nest_id: string): Promise<void> {
    this.stats.passes++;
    const host = this.host;
    if (!host.driving) {
      if (this.wanted(nest_id).length > 0) await host.wantLease();
      return;
    }
    this.starved.delete(nest_id);
    // Flights in the log with no call on this node (a restart, or the lease moved): fly them again.
    const prefix = `N\u0000${nest_id}\u0000`;
    for (const k of host.state.airborne.keys()) {
      if (!k.startsWith(prefix)) continue;
      const [, , msg_id, crow] = k.split('\u0000');
      if (!this.calls.has(`${nest_id}\u0000${msg_id}\u0000${crow}`)) this.launch(nest_id, msg_id, crow);
    }
    for (const w of this.wanted(nest_id)) {
      if (!host.driving || this.stopped) return;
      const rec = w.rec;
      const picks: string[] = [];
      if (isServiceRole(rec.to)) {
        // The Boss works through the flock like any crow: found in a saturated flock, its order is dropped
        // (no reply, no registry write, ever; the fold checks the saturation).
        if (rec.to === 'Boss' && flockSaturated(host.state)) {
          await host.append([{ type: 'nest.dropped', nest_id, msg_id: rec.msg_id, crow: 'Boss', reason: 'saturated', ts: flockTs(Date.now()) }]);
          continue;
        }
        // Quill, the Sentry, the Elder: the addressed role or nobody. Busy: it waits.
        if (crowAvailable(host.state, rec.to)) picks.push(rec.to);
      } else {
        const addressed = isWorkerCrow(host.state, rec.to) && !w.sent.includes(rec.to) && !w.responders.includes(rec.to) ? rec.to : '';
        if (addressed && !host.state.quarantine.has(addressed)) {
          // The addressed crow first; when it is busy the message waits for it (another crow is not sent instead).
          if (!crowAvailable(host.state, addressed)) {
            this.starved.add(nest_id);
            continue;
          }
          picks.push(addressed);
        }
        // The open (and conspiracy) selector: the nest's core first, then borrowed, never the author or a crow sent before.
        if (picks.length < w.missing) {
          const exclude = [...w.sent, ...w.responders, ...picks, rec.author];
          for (const p of pickCrows(host.state, nest_id, w.missing - picks.length, exclude)) picks.push(p.crow);
        }
      }
      if (picks.length === 0) {
        this.starved.add(nest_id);
        continue;
      }
      const ts = flockTs(Date.now());
      await host.append(picks.map((crow) => ({ type: 'nest.flying', nest_id, msg_id: rec.msg_id, crow, ts })));
      const nest = host.state.nests.get(nest_id);
      for (const crow of picks) if (nest?.flights.get(`${rec.msg_id}\u0000${crow}`)?.state === 'flying') this.launch(nest_id, rec.msg_id, crow);
    }
  }

  /** One crow's call for one message; its answer posted, then its landing (so it counts as flying until it answered). */
  private launch(nest_id: string, msg_id: string, crow: string): void {
    const key = `${nest_id}\u0000${msg_id}\u0000${crow}`;
    if (this.calls.has(key) || this.stopped) return;
    this.calls.add(key);
    void this.track(
      (async () => {
        const host = this.host;
        const rec = host.state.nests.get(nest_id)?.messages.get(msg_id);
        let landed: Obj = { ok: false, tokens: 0, error: 'bad_request: the message is no longer kept' };
        if (rec) {
          const role = ROLE_OF[crow] ?? 'crow';
          const req = this.request(nest_id, rec, crow);
          this.stats.calls++;
          let out: ModelOutcome;
          try {
            out = await host.call(role, req, { crow, item_id: msg_id, nest_id });
          } catch (e) {
            out = { ok: false, error: { kind: 'bad_response', message: (e as Error).message, retryable: false }, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, estimated: false }, model: '' };
          }
          if (this.stopped) return;
          const tokens = Math.max(0, Math.min(FLOCK_LIMITS.callTokens, Math.round(out.usage.total)));
          if (!out.ok) landed = { ok: false, tokens, error: `${out.error.kind}: ${out.error.message}`.slice(0, FLOCK_LIMITS.error) };
          else {
            const error = await this.answer(nest_id, rec, crow, out);
            landed = error ? { ok: false, tokens, error: error.slice(0, FLOCK_LIMITS.error) } : { ok: true, tokens };
          }
        }
        if (this.stopped) return;
        await host.append([{ type: 'nest.landed', nest_id, msg_id, crow, ...landed, ts: flockTs(Date.now()) }]);
      })()
        .catch((e) => {
          if (!this.stopped) console.error(`roost: flock nest flight ${crow} for ${msg_id}`, e);
        })
        .finally(() => this.calls.delete(key)),
    );
  }

  private request(nest_id: string, rec: NestRecord, crow: string): ModelRequest {
    const s = this.host.state;
    if (crow === 'Boss') return bossRequest(s, nest_id, rec, this.host.maxSpunCrows);
    if (crow === 'Quill' && rec.author === 'owner' && rec.kind === 'request') return quillRequest(s, nest_id, rec);
    if (isServiceRole(crow)) return serviceRequest(s, nest_id, rec, crow);
    const reading = rec.mode === 'conspiracy' ? rec.sent.indexOf(crow) + 1 : 0;
    return respondRequest(s, nest_id, rec, crow, reading, rec.invited);
  }

  /** Posts what a call came back with; resolves with an error ('' when it answered, or had nothing to post). */
  private async answer(nest_id: string, rec: NestRecord, crow: string, out: ModelOutcome & { ok: true }): Promise<string> {
    if (crow === 'Boss') return this.boss(nest_id, rec, out);
    if (isServiceRole(crow)) return this.service(nest_id, rec, crow, out);
    // A working crow: its kind is the header of its post, tagged by Jev like any crow's.
    const given = out.kind === 'tool' ? (out.input as RespondInput) : { kind: 'deliver' as const, text: out.text };
    const { kind, text } = given;
    if (!text.trim()) return 'bad_response: the answer was empty';
    const now = this.host.state.nests.get(nest_id)?.messages.get(rec.msg_id);
    if (!now) return 'bad_request: the message is no longer kept';
    // Solo and split: the first claim took it. Conspiracy: its readings are all in.
    const needed = now.mode === 'conspiracy' ? now.invited : 1;
    if (!now.responders.includes(crow) && now.responders.length >= needed) return '';
    return this.post(nest_id, { author: crow, kind, text: text.slice(0, FLOCK_LIMITS.messageText), to: rec.author !== crow && (rec.author === 'owner' || isCrow(this.host.state, rec.author)) ? rec.author : '', refers_to: rec.msg_id });
  }

  /** A crow's post through the one post check (Jev tags it), then Jev's probabilities logged. */
  private async post(nest_id: string, body: { author: string; kind: string; text: string; to: string; refers_to: string }): Promise<string> {
    const host = this.host;
    let checked;
    try {
      checked = await checkPost(host.state, nest_id, body, host.jev, host.jevBand);
    } catch (e) {
      return `refused: ${(e as Error).message}`;
    }
    const msg_id = await host.postMessage(nest_id, () => checked.ev);
    if (!msg_id) return 'refused: the fold did not take the answer';
    const rec = host.state.nests.get(nest_id)?.messages.get(msg_id);
    if (checked.answer && rec) await host.logJev(nest_id, msg_id, rec.kind === 'request', checked.answer, { kind: body.kind });
    return '';
  }

  /** What the harness posts for a service role: the kind it decided (`tagged_by: "harness"`). */
  private async harness(nest_id: string, ev: Obj): Promise<string> {
    const msg_id = await this.host.postMessage(nest_id, () => ({ tagged_by: 'harness', ...ev }));
    return msg_id ? '' : 'refused: the fold did not take the answer';
  }

  /**
   * Quill (or the Sentry, or the Elder) answering a message addressed to it.
   * Quill and the owner's request: a relay to the member crow the owner named
   * (one `request`, nothing else), or one `say` back when it names no member;
   * otherwise one `deliver`.
   */
  private async service(nest_id: string, rec: NestRecord, crow: string, out: ModelOutcome & { ok: true }): Promise<string> {
    const back = { author: crow, to: rec.author, refers_to: rec.msg_id };
    if (out.kind === 'tool' && crow === 'Quill') {
      const q = out.input as QuillInput;
      if (q.action === 'relay') {
        const name = q.crow.trim();
        const members = relayable(this.host.state, nest_id);
        if (!members.includes(name)) {
          const who = name ? `${name} is not a crow of this nest` : 'you named no crow of this nest';
          return this.harness(nest_id, { ...back, kind: 'say', text: `I can't pass this on: ${who}. Ask ${members.slice(0, 8).join(', ') || 'a member crow'}, or me.` });
        }
        return this.harness(nest_id, { author: 'Quill', kind: 'request', to: name, refers_to: rec.msg_id, text: q.text.trim() || rec.text, mode: 'solo', mode_tagged_by: 'harness' });
      }
      if (!q.text.trim()) return 'bad_response: the answer was empty';
      return this.harness(nest_id, { ...back, kind: 'deliver', text: q.text.trim() });
    }
    const text = (out.kind === 'text' ? out.text : out.text || JSON.stringify(out.input)).trim();
    if (!text) return 'bad_response: the answer was empty';
    return this.harness(nest_id, { ...back, kind: 'deliver', text: text.slice(0, FLOCK_LIMITS.messageText) });
  }

  /**
   * The Boss: one `say` back naming the outcome. A `SPIN` order is executed
   * here: the fold's `spinRefusal` decides (cap, a taken name, an unknown
   * persona, a bad name), starting trust is clamped to regular, and the
   * registry is written (`crow.spun`) before the reply names the crow.
   */
  private async boss(nest_id: string, rec: NestRecord, out: ModelOutcome & { ok: true }): Promise<string> {
    const back = { author: 'Boss', kind: 'say', to: rec.author, refers_to: rec.msg_id };
    const o = (out.kind === 'tool' ? out.input : { order: 'REPLY', text: out.text }) as OrderInput;
    if (o.order !== 'SPIN') {
      const text = (o.text ?? '').trim();
      return this.harness(nest_id, { ...back, text: (text || 'Noted.').slice(0, FLOCK_LIMITS.messageText) });
    }
    const name = (o.name ?? '').trim();
    const persona = (o.persona ?? '').trim();
    const trust = o.trust === 'regular' || o.trust === 'trusted' ? 'regular' : 'stranger';
    const s = this.host.state;
    const cap = this.host.maxSpunCrows;
    let why = spinRefusal(s, name, persona, cap);
    if (why === '') {
      await this.host.append([{ type: 'crow.spun', name, persona, trust, by: 'Boss', nest_id, msg_id: rec.msg_id, cap, ts: flockTs(Date.now()) }]);
      // Another order may have taken the name or the last place meanwhile.
      if (s.spun.get(name)?.persona !== persona) why = spinRefusal(s, name, persona, cap) || 'name taken';
    }
    const shown = name.slice(0, FLOCK_LIMITS.crowName) || 'a crow with no name';
    let text: string;
    switch (why) {
      case '':
        text = `${name} joined the flock: a ${trust} crow on ${persona}'s habits${o.trust === 'trusted' ? ' (trust is earned, not minted: it starts as a regular)' : ''}.`;
        break;
      case 'cap reached':
        text = `No new crow: cap reached. The flock has ${cap} spun crow${cap === 1 ? '' : 's'}, the most it may have, so ${shown} was not spun up.`;
        break;
      case 'name taken':
        text = `No new crow: name taken. ${shown} is already a crow of this flock; pick another name.`;
        break;
      case 'persona unknown':
        text = `No new crow: persona unknown. "${persona.slice(0, 40)}" is not one of the working crows (${WORKER_NAMES.join(', ')}).`;
        break;
      default:
        text = `No new crow: bad name. A crow's name is 1 to ${FLOCK_LIMITS.crowName} letters, digits, spaces, ' or -, starting with a letter.`;
    }
    return this.harness(nest_id, { ...back, text });
  }
}

// Who is here, across nodes: a generic presence service over the store's lossy
// broadcast (Work uses it for "who has a project open"; any app can).
//
// Each node announces who is present on it, per scope (a project id for
// Work), over one broadcast topic: on change (at most once per event-loop
// turn), and again every third of `expireMs` so the others know it is alive.
// Every node keeps what it heard from the others and forgets a node not heard
// for `expireMs` (one that died or lost the database). Presence in a scope is
// the union of this node's and the others'.
//
// Invariants:
// - a broadcast is input like any other: it is re-validated and capped
//   (`parsePresence`), never trusted more than a request;
// - an announcement that does not fit one broadcast is sent in parts; a
//   different part count is a new announcement, whose older parts are gone;
// - time is this node's monotonic clock (performance.now()), never the sender's;
// - a node that stops says goodbye (one empty announcement per scope where it
//   had someone), so the others need not wait for the expiry.
//
// Wire form (unchanged since it lived in the Work service, so nodes of both
// versions understand each other): `{project, part, parts, people}` where
// `project` carries the scope key, or `{ask: true}` from a node that just
// started (the others answer with what they have at once).

import { BROADCAST_MAX_BYTES, type EventStore } from '../storage/types.js';

/** Another node's presence not repeated for this long is forgotten (the default of `expireMs`). */
export const PRESENCE_EXPIRE_MS = 30_000;
/** At most this many parts per scope and node (each up to a broadcast's size): several hundred people. */
const PRESENCE_MAX_PARTS = 64;
/** A scope key on the wire (a project id, today). */
const SCOPE_KEY = /^[A-Za-z0-9_-]{1,64}$/;

export interface Person {
  uid: string;
  name: string;
}

/** One other node's presence in one scope, as last heard (in parts, when it did not fit one broadcast). */
interface Heard {
  parts: number;
  chunks: Map<number, Person[]>;
  /** When it was last heard, by this node's monotonic clock (performance.now(), ms): never the sender's. */
  at: number;
}

export interface PresenceOptions {
  /** The broadcast topic (one per app). */
  topic: string;
  /** How long another node's presence lasts without a repeat. */
  expireMs: number;
  /** Who is present in a scope on this node now (uid → name). */
  local(scope: string): Map<string, string>;
  /** The union in a scope changed (here or on another node): tell this node's watchers. */
  onChange(scope: string): void;
}

function byName(a: Person, b: Person): number {
  return a.name.localeCompare(b.name) || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0);
}

/** The people of one announcement, split into payloads that each fit a broadcast (at least one, possibly empty). */
function presencePayloads(scope: string, people: Person[]): string[] {
  const budget = BROADCAST_MAX_BYTES - 200; // the envelope: scope key, part numbers
  const chunks: Person[][] = [[]];
  let used = 0;
  for (const p of people) {
    const size = Buffer.byteLength(JSON.stringify(p)) + 1;
    if (used + size > budget && chunks[chunks.length - 1].length) {
      if (chunks.length === PRESENCE_MAX_PARTS) break;
      chunks.push([]);
      used = 0;
    }
    chunks[chunks.length - 1].push(p);
    used += size;
  }
  return chunks.map((c, i) => JSON.stringify({ project: scope, part: i, parts: chunks.length, people: c }));
}

/** Another node's announcement, re-validated (a broadcast is not trusted more than any input). */
function parsePresence(payload: string): { ask: true } | { scope: string; part: number; parts: number; people: Person[] } | null {
  let v: unknown;
  try {
    v = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const m = v as Record<string, unknown>;
  if (m.ask === true) return { ask: true };
  const { project: scope, part, parts, people } = m;
  if (typeof scope !== 'string' || !SCOPE_KEY.test(scope)) return null;
  if (!Number.isInteger(parts) || (parts as number) < 1 || (parts as number) > PRESENCE_MAX_PARTS) return null;
  if (!Number.isInteger(part) || (part as number) < 0 || (part as number) >= (parts as number)) return null;
  if (!Array.isArray(people)) return null;
  const out: Person[] = [];
  for (const x of people.slice(0, 2000)) {
    const { uid, name } = (typeof x === 'object' && x !== null ? x : {}) as Record<string, unknown>;
    if (typeof uid === 'string' && uid && typeof name === 'string') out.push({ uid: uid.slice(0, 200), name: name.slice(0, 200) });
  }
  return { scope, part: part as number, parts: parts as number, people: out };
}

export class Presence {
  /** Other nodes' presence: node (the store's sender name) → scope → what it announced. */
  private heard = new Map<string, Map<string, Heard>>();
  /** What this node last announced, per scope where someone is present here (the people, as JSON). */
  private announced = new Map<string, string>();
  /** Scopes whose presence here changed since the last announcement. */
  private dirty = new Set<string>();
  private announcing = false;
  private repeatAsked = false;
  private timers: NodeJS.Timeout[] = [];
  private unbroadcast: (() => void) | null = null;
  private stopped = false;

  constructor(
    private store: EventStore,
    private opts: PresenceOptions,
  ) {}

  /** Who is present in a scope now, on this node or on another one sharing the store. */
  people(scope: string): Person[] {
    const seen = this.opts.local(scope);
    const fresh = performance.now() - this.opts.expireMs;
    for (const scopes of this.heard.values()) {
      const h = scopes.get(scope);
      if (!h || h.at < fresh) continue;
      for (const chunk of h.chunks.values()) for (const x of chunk) if (!seen.has(x.uid)) seen.set(x.uid, x.name);
    }
    return [...seen].map(([uid, name]) => ({ uid, name })).sort(byName);
  }

  /** This node's presence in a scope changed: tell its watchers now, and the other nodes (once per turn). */
  changed(scope: string): void {
    this.opts.onChange(scope);
    if (this.stopped || !this.store.capabilities.crossNodeBroadcast) return;
    this.dirty.add(scope);
    if (this.announcing) return;
    this.announcing = true;
    setImmediate(() => {
      this.announcing = false;
      const dirty = [...this.dirty];
      this.dirty.clear();
      for (const s of dirty) this.announce(s, false);
    });
  }

  start(): void {
    if (!this.store.capabilities.crossNodeBroadcast) return;
    this.unbroadcast = this.store.onBroadcast((topic, payload, from) => {
      if (topic === this.opts.topic) this.hear(payload, from);
    });
    // Just started: the others answer with what they have now instead of at their next repeat.
    this.store.broadcast(this.opts.topic, JSON.stringify({ ask: true }));
    const repeat = setInterval(() => {
      for (const s of [...this.announced.keys()]) this.announce(s, true);
    }, this.opts.expireMs / 3);
    const sweep = setInterval(() => this.forgetSilent(), Math.min(1000, this.opts.expireMs / 10));
    for (const t of [repeat, sweep]) t.unref();
    this.timers.push(repeat, sweep);
  }

  /** Says goodbye (an empty announcement for every scope where someone was here), so the others need not wait for the expiry. */
  stop(): void {
    if (this.stopped) return;
    for (const t of this.timers) clearInterval(t);
    this.unbroadcast?.();
    if (this.store.capabilities.crossNodeBroadcast) {
      for (const scope of this.announced.keys()) {
        try {
          this.store.broadcast(this.opts.topic, presencePayloads(scope, [])[0]);
        } catch {}
      }
    }
    this.announced.clear();
    this.stopped = true;
  }

  /** Sends this node's presence in a scope, when it changed since the last time (or always, to repeat it). */
  private announce(scope: string, repeat: boolean): void {
    if (this.stopped) return;
    const people = [...this.opts.local(scope)].map(([uid, name]) => ({ uid: uid.slice(0, 200), name: name.slice(0, 200) })).sort(byName);
    const now = JSON.stringify(people);
    const before = this.announced.get(scope) ?? '[]';
    if (!repeat && now === before) return;
    // Nobody here any more: one empty announcement, then silence (not repeated).
    if (people.length) this.announced.set(scope, now);
    else this.announced.delete(scope);
    try {
      for (const payload of presencePayloads(scope, people)) this.store.broadcast(this.opts.topic, payload);
    } catch (e) {
      console.error(`roost: announcing presence (${this.opts.topic}) failed`, e);
    }
  }

  /** Another node's announcement (or its request for ours). */
  private hear(payload: string, from: string): void {
    const m = parsePresence(payload);
    if (!m) return;
    if ('ask' in m) {
      if (this.repeatAsked) return;
      this.repeatAsked = true;
      setImmediate(() => {
        this.repeatAsked = false;
        for (const s of [...this.announced.keys()]) this.announce(s, true);
      });
      return;
    }
    const before = JSON.stringify(this.people(m.scope));
    let scopes = this.heard.get(from);
    if (!scopes) this.heard.set(from, (scopes = new Map()));
    let h = scopes.get(m.scope);
    // A different number of parts is a new announcement: its older parts are gone.
    if (!h || h.parts !== m.parts) scopes.set(m.scope, (h = { parts: m.parts, chunks: new Map(), at: 0 }));
    h.chunks.set(m.part, m.people);
    h.at = performance.now();
    if (m.parts === 1 && m.people.length === 0) {
      scopes.delete(m.scope);
      if (!scopes.size) this.heard.delete(from);
    }
    if (JSON.stringify(this.people(m.scope)) !== before) this.opts.onChange(m.scope);
  }

  /** Forgets what other nodes announced and did not repeat in time, and tells the watchers whom that removed. */
  private forgetSilent(): void {
    const old = performance.now() - this.opts.expireMs;
    const changed = new Set<string>();
    for (const [from, scopes] of this.heard) {
      for (const [scope, h] of scopes) {
        if (h.at >= old) continue;
        scopes.delete(scope);
        changed.add(scope);
      }
      if (!scopes.size) this.heard.delete(from);
    }
    // `people()` already leaves out what is stale, so the frame goes out when it is dropped here.
    for (const scope of changed) this.opts.onChange(scope);
  }
}

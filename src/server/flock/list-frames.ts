// One list's contract events with their log positions: what its stream
// replays (`GET /api/events?list_id=`) and its snapshot shows a new reader.
//
// While the list runs they are an array of frames. When it finishes they are
// packed into one buffer (the positions, each event's name and the bytes of
// its data), and the array is dropped. A finished list is kept for a while
// (FLOCK_LIMITS.keepFinishedLists) and its stream is rarely read again, but
// every object it keeps outlives a young-generation collection and is copied
// by it: at about ten frames a list, that was half of what each scavenge
// copied under a steady flow of lists, and the scavenges were the flock's
// slowest items (docs/flock.md, "The driver"). The buffer's bytes live
// outside V8's heap; a packed list is two small objects.

import type { Ev } from '../live/index.js';

/** The contract's list events (spec/flock-events.md): what a list's stream carries. */
const LIST_EVENT_NAMES = [
  'list.started',
  'item.triaged',
  'crow.flying',
  'crow.landed',
  'item.answered',
  'verdict',
  'trust.changed',
  'item.skipped',
  'requester.pranked',
  'list.finished',
  'crow.banter',
] as const;
export const LIST_EVENTS: ReadonlySet<string> = new Set(LIST_EVENT_NAMES);
const NAME_INDEX = new Map<string, number>(LIST_EVENT_NAMES.map((n, i) => [n, i]));

export interface ListFrame {
  position: number;
  ev: Ev;
}

/** Per frame in a packed buffer: position (f64), end of its data (u32), its name's index (u32). */
const ROW = 16;

export class ListFrames {
  private frames: ListFrame[] | null = [];
  private packed: Buffer | null = null;
  private count = 0;

  get length(): number {
    return this.count;
  }

  /** The first frame's position (Infinity when there is none). */
  get first(): number {
    if (this.count === 0) return Infinity;
    return this.frames ? this.frames[0].position : this.packed!.readDoubleLE(0);
  }

  push(position: number, ev: Ev): void {
    if (!this.frames) this.unpack();
    this.frames!.push({ position, ev });
    this.count++;
  }

  /** Frames put before these (a rebuild from the log after a start from a snapshot). */
  prepend(older: ListFrame[]): void {
    if (!this.frames) this.unpack();
    this.frames = [...older, ...this.frames!];
    this.count = this.frames.length;
  }

  /** The frames with after < position ≤ upTo, in position order. */
  between(after: number, upTo: number): ListFrame[] {
    const out: ListFrame[] = [];
    if (this.frames) {
      for (const f of this.frames) if (f.position > after && f.position <= upTo) out.push(f);
      return out;
    }
    const buf = this.packed!;
    let start = this.count * ROW;
    for (let i = 0; i < this.count; i++) {
      const position = buf.readDoubleLE(i * ROW);
      const end = buf.readUInt32LE(i * ROW + 8);
      if (position > after && position <= upTo) out.push({ position, ev: { name: LIST_EVENT_NAMES[buf.readUInt32LE(i * ROW + 12)], data: buf.toString('utf8', start, end) } });
      start = end;
    }
    return out;
  }

  /** The last frame named `name` whose data passes `match`, newest first (the running list's lookups). */
  findLast(name: string, match: (data: string) => boolean): Ev | null {
    const all = this.frames ?? this.between(-Infinity, Infinity);
    for (let i = all.length - 1; i >= 0; i--) if (all[i].ev.name === name && match(all[i].ev.data)) return all[i].ev;
    return null;
  }

  // Measured: unpacked, finished lists' frames were half of what each scavenge copied under a steady flow of lists, and those scavenges the flock's slowest items (docs/flock.md, "The driver").
  /** Packs the frames into one buffer (the list finished; a later push unpacks them again). */
  pack(): void {
    const frames = this.frames;
    if (!frames || frames.length === 0 || frames.some((f) => !NAME_INDEX.has(f.ev.name))) return;
    const data = frames.map((f) => f.ev.data);
    let bytes = 0;
    for (const d of data) bytes += Buffer.byteLength(d);
    const buf = Buffer.allocUnsafe(frames.length * ROW + bytes);
    let at = frames.length * ROW;
    frames.forEach((f, i) => {
      at += buf.write(data[i], at, 'utf8');
      buf.writeDoubleLE(f.position, i * ROW);
      buf.writeUInt32LE(at, i * ROW + 8);
      buf.writeUInt32LE(NAME_INDEX.get(f.ev.name)!, i * ROW + 12);
    });
    this.packed = buf;
    this.frames = null;
  }

  private unpack(): void {
    this.frames = this.between(-Infinity, Infinity);
    this.packed = null;
  }
}

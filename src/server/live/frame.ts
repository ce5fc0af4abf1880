// The bytes of a frame, in the two forms a connection may take: one scope's
// SSE (`id:`, `event:`: /stream, /approvals/stream, /api/v2/events, ...) and
// the mux envelope of `GET /live` (src/core/live-wire.ts).
//
// Why the bytes are kept: each form of a frame (single-scope bytes, mux
// bytes) is serialized once, on first use; a flush's frames are concatenated
// once per form and the same bytes are written to every subscription of that
// form (src/server/live/durable.ts), so a frame costs one serialization however
// many read it (docs/architecture.md, "One serialization per form"; the
// `fanout` workload of bench/ measures it).

/** How a connection's frames are written: one scope's SSE (`id:`, `event:`), or the mux envelope. */
export type Form = 'single' | 'mux';

/** One event of a frame: its SSE event name and its data, one line of JSON. */
export interface Ev {
  name: string;
  data: string;
}

/** What a channel's frames need to know of it to write themselves. */
export interface Head {
  epoch: string;
  /** The scope as a JSON string, ready for the mux envelope. */
  scopeJson: string;
}

/**
 * A durable frame: one log position and its events. The bytes of each form
 * are made on first use and then shared by every subscription of that form.
 * Work's frames differ by form (`mux`): the single-scope endpoint keeps the
 * contract's `*.changed` families, the mux form carries the event itself.
 */
export class Frame {
  private single: Buffer | null = null;
  private muxed: Buffer | null = null;

  constructor(
    readonly position: number,
    private head: Head,
    /** The events, or a function making them on first use (a history of thousands of frames costs only what is written). */
    private evs: readonly Ev[] | (() => readonly Ev[]) | null,
    private muxEvs: readonly Ev[] | null = null,
  ) {}

  bytes(form: Form): Buffer {
    if (form === 'single') return (this.single ??= this.build(form));
    return (this.muxed ??= this.build(form));
  }

  private build(form: Form): Buffer {
    if (typeof this.evs === 'function') this.evs = this.evs();
    const evs = (form === 'mux' && this.muxEvs) || this.evs || [];
    const { epoch, scopeJson } = this.head;
    let text = '';
    // Every message carries its own id (a resume from any of them is exact): the
    // frame's last one `<epoch>:<position>`, an earlier one `<epoch>:<position>.<k>`
    // (its index in the frame), which resumes with the rest of the frame.
    const last = evs.length - 1;
    for (let k = 0; k <= last; k++) {
      const e = evs[k];
      const id = k === last ? `${epoch}:${this.position}` : `${epoch}:${this.position}.${k}`;
      if (form === 'single') text += `id: ${id}\nevent: ${e.name}\ndata: ${e.data}\n\n`;
      else text += `data: {"s":${scopeJson},"e":"${e.name}","p":"${id}","d":${e.data}}\n\n`;
    }
    const b = Buffer.from(text);
    // Once both forms exist the events are not needed any more (a ring holds thousands of frames).
    if (this.single && form === 'mux') this.evs = this.muxEvs = null;
    else if (this.muxed && form === 'single') this.evs = this.muxEvs = null;
    return b;
  }
}

/** The bytes of a lossy frame (no `id:` line, no `p`: it never moves a cursor). */
export function lossyBytes(form: Form, head: Head, name: string, data: string): Buffer {
  return Buffer.from(form === 'single' ? `event: ${name}\ndata: ${data}\n\n` : `data: {"s":${head.scopeJson},"e":"${name}","d":${data}}\n\n`);
}

/** The last frame of a connection that ends, giving the reason. */
export function errorBytes(reason: string): string {
  return `event: error\ndata: ${JSON.stringify({ reason })}\n\n`;
}

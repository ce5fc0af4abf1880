// A minimal Server-Sent Events reader over fetch for tests that need to see the
// raw stream (comments, frame boundaries) rather than what an EventSource
// chooses to surface.

export interface SseFrame {
  id?: string;
  event: string;
  data: string;
}

export interface SseReader {
  frames: SseFrame[];
  /** Comment lines (heartbeats are `:`) seen so far. */
  comments: number;
  /** Resolves with the first frame at or after index `from` that matches. */
  waitFor(pred: (f: SseFrame) => boolean, timeoutMs?: number, from?: number): Promise<SseFrame>;
  /** Resolves once the server has ended the stream. */
  ended: Promise<void>;
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ac.signal });
  if (res.status !== 200 || !res.body) throw new Error(`stream answered ${res.status}`);
  const frames: SseFrame[] = [];
  const waiters = new Set<() => void>();
  const reader: SseReader = {
    frames,
    comments: 0,
    ended: Promise.resolve(),
    waitFor(pred, timeoutMs = 5000, from = 0) {
      return new Promise((ok, fail) => {
        const check = () => {
          for (let i = from; i < frames.length; i++) {
            if (pred(frames[i])) {
              waiters.delete(check);
              clearTimeout(timer);
              ok(frames[i]);
              return;
            }
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          fail(new Error(`no matching SSE frame within ${timeoutMs} ms; got ${frames.map((f) => f.event).join(',')}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => ac.abort(),
  };
  const decoder = new TextDecoder();
  let buf = '';
  reader.ended = (async () => {
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          const f: SseFrame = { event: 'message', data: '' };
          const data: string[] = [];
          let isFrame = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) reader.comments++;
            else if (line.startsWith('id: ')) (f.id = line.slice(4)), (isFrame = true);
            else if (line.startsWith('event: ')) (f.event = line.slice(7)), (isFrame = true);
            else if (line.startsWith('data: ')) data.push(line.slice(6)), (isFrame = true);
          }
          if (isFrame && data.length) {
            f.data = data.join('\n');
            frames.push(f);
          }
        }
        for (const w of [...waiters]) w();
      }
    } catch {
      // aborted or cut: the stream is over
    }
  })();
  return reader;
}

// What every scripted stand-in of a model API shares (Anthropic Messages,
// OpenAI chat completions, OpenAI Responses, Gemini): the script (the first
// unused step whose `when` holds answers a request), the requests it heard,
// and the HTTP server on a free port of 127.0.0.1 with its close. Each
// stand-in keeps only what its API's wire says.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { handled } from './handled.js';

/** One scripted answer: `reply` (or a function of the request making it), for the first request `when` accepts. */
export interface ScriptStep<Req, Reply> {
  reply: Reply | ((req: Req) => Reply);
  when?: (req: Req) => boolean;
  used?: boolean;
}

/** A stand-in as a test holds it. */
export interface Scripted<Req, Step> {
  url: string;
  /** Every request heard, in order. */
  requests: Req[];
  /** The requests a step of the script answered. */
  scripted(): Req[];
  /** More steps at the end of the script. */
  push(...steps: Step[]): void;
  close(): Promise<void>;
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((ok, fail) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => ok(Buffer.concat(chunks).toString('utf8')));
    req.on('error', fail);
  });
}

/** A request body as JSON, or `{}` when it is not (a stand-in answers whatever it is sent). */
export function jsonOf(raw: string): any {
  try {
    return JSON.parse(raw);
  } catch {
    return {};
  }
}

/**
 * The reply of the first unused step that `rec` fits (and `accept` takes),
 * marking it used and noting its index in `rec.step`; undefined when none.
 */
export function takeStep<Req extends { step: number }, Reply>(steps: ScriptStep<Req, Reply>[], rec: Req, accept: (s: ScriptStep<Req, Reply>) => boolean = () => true): Reply | undefined {
  const i = steps.findIndex((s) => !s.used && (!s.when || s.when(rec)));
  if (i < 0 || !accept(steps[i])) return undefined;
  steps[i].used = true;
  rec.step = i;
  const r = steps[i].reply;
  return typeof r === 'function' ? (r as (req: Req) => Reply)(rec) : r;
}

/** Waits for a reply's `until` (a test holding the answer back), then its `delayMs`; false when the client went away meanwhile (nothing more to write). */
export async function delayed(res: ServerResponse, reply: { delayMs?: number; until?: Promise<unknown> }): Promise<boolean> {
  if (reply.until) await reply.until;
  if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
  return !res.destroyed;
}

/** Serves `handle` on a free port of 127.0.0.1 with the script's `steps` and `requests`. */
export async function serveScripted<Req extends { step: number }, Step>(
  steps: Step[],
  requests: Req[],
  handle: (req: IncomingMessage, res: ServerResponse, url: URL, raw: string) => Promise<void>,
): Promise<Scripted<Req, Step>> {
  const server = createServer(
    handled(async (req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      await handle(req, res, url, await readBody(req));
    }),
  );
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    scripted: () => requests.filter((r) => r.step >= 0),
    push: (...s) => steps.push(...s),
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

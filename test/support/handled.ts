// An async request handler for node:http, whose failure ends that request
// (a test's stand-in that throws must not become an unhandled rejection that
// takes the whole test file down, nor leave its client waiting).
import type { IncomingMessage, ServerResponse } from 'node:http';

export function handled(f: (req: IncomingMessage, res: ServerResponse) => Promise<void>): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    f(req, res).catch((e: unknown) => {
      console.error('stand-in handler failed:', e);
      res.destroy();
    });
  };
}

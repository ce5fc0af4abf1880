// Requests to a workstation bridge, and the lossy frames it relays.
//
// The sessions contract has no event for "a member asks the bridge to start a
// session": `session.spawn` is the bridge's, once the process runs. So a
// member posts a `request.start` to the thread's own stream (the same stream
// as the board, `sessions:<thread>`), and the bridge, which follows that
// stream with exact replay, acts on it. The sessions fold ignores `request.*`
// types (unknown types fold to a no-op), so the board and the chat do not
// change; the request is an ordered, durable fact that a bridge cannot miss.
//
//   request.start   { id, session, flavor, root }   a member: start a session with this id
//   request.refused { id, reason }                  the bridge: it will not (bad root, no git, ...)
//
// Closing is not a request: a member posts `session.end`, which the board
// shows at once and the bridge obeys (docs/bridge.md).
//
// Lossy frames (`session.tool`, `session.stream`) are never stored: they are
// checked here and relayed live to the readers of the thread's stream.
//
// Pure: imports nothing, no clock, no I/O.

export const REQUEST_TYPES = ['request.start', 'request.refused'] as const;
export type RequestType = (typeof REQUEST_TYPES)[number];

export const LIVE_TYPES = ['session.tool', 'session.stream'] as const;

export const REQUEST_LIMITS = {
  session: 80,
  root: 300,
  reason: 120,
  /** Text of a lossy frame (tool output, partial text). */
  liveText: 4000,
  tool: 120,
} as const;

const ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface StartRequest {
  type: 'request.start';
  id: string;
  session: string;
  flavor: 'scoped' | 'plain';
  root: string;
}

export interface RefusedRequest {
  type: 'request.refused';
  id: string;
  reason: string;
}

function str(o: Record<string, unknown>, k: string, cap: number): string | { error: string } {
  const v = o[k];
  if (v === undefined) return '';
  if (typeof v !== 'string') return { error: `"${k}" must be a string` };
  if (v.length > cap) return { error: `"${k}" is longer than ${cap} characters` };
  return v.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

/**
 * Checks a posted request. `newId` supplies an id when a start request has
 * none. Returns the stored form (known fields only) or why it is refused.
 */
export function checkRequest(x: unknown, newId: () => string): { ok: StartRequest | RefusedRequest } | { error: string } {
  if (x === null || typeof x !== 'object' || Array.isArray(x)) return { error: 'a request must be a JSON object' };
  const o = x as Record<string, unknown>;
  const type = o.type ?? 'request.start';
  if (type !== 'request.start' && type !== 'request.refused') return { error: `"type" must be one of ${REQUEST_TYPES.join(', ')}` };
  if (o.id !== undefined && (typeof o.id !== 'string' || !ID.test(o.id))) return { error: '"id" must be 1 to 64 letters, digits, "-" or "_"' };
  if (type === 'request.refused') {
    if (o.id === undefined) return { error: '"id" is required: the request refused' };
    const reason = str(o, 'reason', REQUEST_LIMITS.reason);
    if (typeof reason !== 'string') return reason;
    return { ok: { type, id: o.id as string, reason: reason || 'refused' } };
  }
  const session = str(o, 'session', REQUEST_LIMITS.session);
  if (typeof session !== 'string') return session;
  if (!session) return { error: '"session" is required: the name of the session' };
  if (o.flavor !== undefined && o.flavor !== 'scoped' && o.flavor !== 'plain') return { error: '"flavor" must be scoped or plain' };
  const root = str(o, 'root', REQUEST_LIMITS.root);
  if (typeof root !== 'string') return root;
  return { ok: { type, id: (o.id as string | undefined) ?? newId(), session, flavor: o.flavor === 'plain' ? 'plain' : 'scoped', root } };
}

/** Checks a lossy frame: `{type: session.tool|session.stream, id, tool?, text?}`; returns its relayed form or why not. */
export function checkLive(x: unknown): { ok: { type: string; id: string; tool?: string; text?: string } } | { error: string } {
  if (x === null || typeof x !== 'object' || Array.isArray(x)) return { error: 'a live frame must be a JSON object' };
  const o = x as Record<string, unknown>;
  if (o.type !== 'session.tool' && o.type !== 'session.stream') return { error: `"type" must be one of ${LIVE_TYPES.join(', ')}` };
  if (typeof o.id !== 'string' || !ID.test(o.id)) return { error: '"id" must be 1 to 64 letters, digits, "-" or "_"' };
  const out: { type: string; id: string; tool?: string; text?: string } = { type: o.type, id: o.id };
  if (o.tool !== undefined) {
    if (typeof o.tool !== 'string') return { error: '"tool" must be a string' };
    out.tool = o.tool.slice(0, REQUEST_LIMITS.tool);
  }
  if (o.text !== undefined) {
    if (typeof o.text !== 'string') return { error: '"text" must be a string' };
    out.text = o.text.slice(0, REQUEST_LIMITS.liveText);
  }
  return { ok: out };
}

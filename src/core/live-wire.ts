// The one live connection's wire (docs/architecture.md, "Live streams"): the
// scope names a connection asks for, the cursors it resumes from, and the
// envelope of a multiplexed frame. Shared by the server (src/server/live/)
// and the browser (web/src/live/), so both read the same grammar.
//
// Pure: imports nothing.
//
// A connection: `GET /live?s=<scope>[@<epoch>:<position>]&s=...`, at most
// MAX_LIVE_SCOPES scopes, each named once. One `text/event-stream` response;
// every frame is one `data:` line holding a MuxFrame (no `event:`, no `id:`
// line: the browser never resumes a mux stream by itself, it reopens with a
// cursor per scope):
//   durable:  {"s":"floor:default","e":"event","p":"<epoch>:<position>","d":<data>}
//   snapshot: {"s":"floor:default","e":"snapshot","p":"<epoch>:<position>","d":<snapshot>}
//   lossy:    {"s":"work.live:alpha","e":"presence","d":{...}}              (no `p`)
//   control:  {"s":"","e":"hello","d":{"protocol":1,"epoch":"..."}}           (first frame)
//             {"s":"<scope>","e":"closed","d":{"reason":"...","status":403}} (that scope ends; the others go on)
// `d` is exactly the data the same frame carries on its single-scope endpoint
// (Work's durable frames excepted: see docs/work.md). The connection itself
// ends with `event: error` / `data: {"reason": ...}`, as a single-scope stream
// does (a slow consumer, a revoked token, a sign-out), and carries a
// heartbeat comment (`:`) every 15 s.

/** The mux protocol's version; `hello` carries it. History: 1, the first. */
export const LIVE_PROTOCOL_VERSION = 1;

/** Scopes one connection may carry. */
export const MAX_LIVE_SCOPES = 64;

/** One frame of a multiplexed stream (the JSON of its `data:` line). */
export interface MuxFrame<D = unknown> {
  /** The scope, or "" for the connection's own control frames. */
  s: string;
  /** The frame's name: its single-scope `event:` name, or `hello` / `closed`. */
  e: string;
  /** `<epoch>:<position>` of a durable or snapshot frame; absent on lossy and control frames. */
  p?: string;
  d: D;
}

export interface HelloData {
  protocol: number;
  epoch: string;
}

export interface ClosedData {
  reason: string;
  /** The HTTP status the scope would have had on its own: 400 malformed, 403 not readable (any more), 404 unknown, 503 shutting down. */
  status: number;
}

/**
 * A scope: `<app>:<key>` or a bare `<app>` (`work.private`). The app is
 * lowercase letters and dots; the key is ids joined by `/` (letters, digits,
 * `_ . : / -`), never `@` (the cursor's separator), at most 300 characters.
 */
export const SCOPE_PATTERN = /^[a-z][a-z.]{0,31}(?::[A-Za-z0-9_.:/-]{1,300})?$/;

/**
 * A cursor: `<epoch>:<position>`, as a durable frame's `p` and a single-scope
 * stream's `id:`; or `<epoch>:<position>.<k>` on a message before the last of
 * a frame of several (its index k from 0), which resumes with the rest of that
 * frame. Every message carries its own cursor: a resume from any is exact.
 */
export const CURSOR_PATTERN = /^[A-Za-z0-9_-]{1,64}:\d{1,15}(?:\.\d{1,6})?$/;

/** The app and key of a well-formed scope (`work.private` → app `work.private`, key ""). */
export function splitScope(scope: string): { app: string; key: string } {
  const i = scope.indexOf(':');
  return i < 0 ? { app: scope, key: '' } : { app: scope.slice(0, i), key: scope.slice(i + 1) };
}

/**
 * One `s=` value: the scope and its cursor (null when none). A malformed
 * scope is null; a malformed cursor is kept as `invalid` (the scope then
 * starts from a fresh snapshot marked reset, as a bad Last-Event-ID does).
 */
export function parseScopeParam(v: string): { scope: string; cursor: string | null } | null {
  const at = v.indexOf('@');
  const scope = at < 0 ? v : v.slice(0, at);
  if (!SCOPE_PATTERN.test(scope)) return null;
  if (at < 0) return { scope, cursor: null };
  const cursor = v.slice(at + 1);
  return { scope, cursor: CURSOR_PATTERN.test(cursor) ? cursor : 'invalid' };
}

/** The `s=` value for a scope resuming from `cursor` (or starting fresh). */
export function scopeParam(scope: string, cursor?: string | null): string {
  return cursor ? `${scope}@${cursor}` : scope;
}

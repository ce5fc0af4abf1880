// The one way the web app talks to the server's JSON API. Every view reads
// and writes through these functions, so every write carries a fresh
// Idempotency-Key (a retried POST is recorded once), and every refusal comes
// back the same way: the server's `{message, kind}` (docs/security.md), or
// our own words when there was no answer at all.
//
// A write's answer only says whether it was accepted: what it changed arrives
// on the live stream, like everyone else's changes (no optimistic copies).

/** What a request came to: the 2xx body, or why not. `status` 0: the server could not be reached. */
export type Answer<T = unknown> = { ok: true; status: number; body: T } | { ok: false; status: number; kind: string; message: string };

/** A random key, `bytes` random bytes in hex: Idempotency-Keys and the random tail of new ids. */
export function randomKey(bytes = 12): string {
  const a = new Uint8Array(bytes);
  crypto.getRandomValues(a);
  return Array.from(a, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** `GET path` as JSON. */
export function getJson<T = unknown>(path: string): Promise<Answer<T>> {
  return request<T>(path, { headers: { accept: 'application/json' } });
}

/**
 * `POST path` with a JSON body and a fresh Idempotency-Key. `headers` adds to
 * them (the fleet board's `Roost-Name` label in local mode).
 */
export function postJson<T = unknown>(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> {
  return request<T>(path, {
    method: 'POST',
    headers: { ...headers, accept: 'application/json', 'content-type': 'application/json', 'idempotency-key': randomKey() },
    body: JSON.stringify(body),
  });
}

/** `PUT` or `DELETE path` (with a JSON body, when given) and a fresh Idempotency-Key. */
export function sendJson<T = unknown>(method: 'PUT' | 'DELETE', path: string, body?: unknown): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: 'application/json', 'idempotency-key': randomKey() };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return request<T>(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

async function request<T>(path: string, init: RequestInit): Promise<Answer<T>> {
  let r: Response;
  try {
    r = await fetch(path, init);
  } catch {
    return { ok: false, status: 0, kind: 'network', message: 'Roost cannot be reached; try again' };
  }
  let body: unknown = null;
  try {
    body = await r.json();
  } catch {
    // No JSON (a proxy's HTML error page, an empty answer): the status says enough.
  }
  if (r.ok) return { ok: true, status: r.status, body: body as T };
  const e = (body ?? {}) as { message?: unknown; kind?: unknown };
  return {
    ok: false,
    status: r.status,
    kind: typeof e.kind === 'string' ? e.kind : 'error',
    message: typeof e.message === 'string' ? e.message : `the server answered ${r.status}`,
  };
}

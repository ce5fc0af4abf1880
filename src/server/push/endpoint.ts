// A push endpoint is a URL a browser gave us, and the server will POST to it:
// an outbound request chosen by a client. The rules (docs/security.md, "Push
// endpoints"):
//
// - the URL is http(s), with no user or password, at most 1000 characters;
// - shared mode: https only, and the host must not be, or resolve to, a
//   loopback, private, link-local, CGNAT, multicast or otherwise reserved
//   address (no request into the server's own network on a member's say-so);
//   `pushPrivateEndpoints` lifts the address rule (tests, a push service on
//   the same network), never the https one;
// - local mode: any http(s) endpoint (the person at the machine owns the
//   server; a page of another site cannot subscribe, the edge checks Origin);
// - the address is checked again at every send, on the address actually
//   connected to (a `lookup` that refuses), so a name that resolved to a
//   public address at subscribe time cannot be rebound to a private one;
// - no redirect is followed, the answer is read up to 4 KiB, and a send
//   takes at most `timeoutMs`.

import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { isPrivateAddress } from '../net-address.js';
import { PUSH_LIMITS } from '../../core/push.js';

export interface EndpointPolicy {
  /** https only. */
  httpsOnly: boolean;
  /** Loopback, private and reserved addresses allowed. */
  privateOk: boolean;
}

// Which addresses are private, in every IPv6 form that carries an IPv4 one,
// is decided in one place for every outbound request (../net-address.ts).
export { isPrivateAddress } from '../net-address.js';

/** The endpoint as a URL, or the reason it is refused (words for a 400). */
export function checkEndpoint(raw: string, policy: EndpointPolicy): URL | string {
  if (raw.length > PUSH_LIMITS.endpoint) return `"endpoint" is longer than ${PUSH_LIMITS.endpoint} characters`;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return '"endpoint" must be an absolute URL';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return '"endpoint" must be an http or https URL';
  if (policy.httpsOnly && u.protocol !== 'https:') return 'a push endpoint must be https on a shared server';
  if (u.username || u.password) return '"endpoint" must not carry a user or password';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!policy.privateOk && (isIP(host) ? isPrivateAddress(host) : host === 'localhost' || host.endsWith('.localhost') || !host.includes('.'))) {
    return 'a push endpoint must be a public address (not loopback, private or link-local)';
  }
  return u;
}

/** A `lookup` that refuses private addresses: the check sits on the address the socket will connect to. */
function publicLookup(): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      const cb = callback;
      if (err) return cb(err, []);
      const bad = addresses.find((a) => isPrivateAddress(a.address));
      if (bad || addresses.length === 0) return cb(Object.assign(new Error(`push endpoint ${hostname} resolves to a private address`), { code: 'EPRIVATE' }), []);
      if ((options as { all?: boolean }).all) cb(null, addresses);
      else cb(null, addresses[0].address, addresses[0].family);
    });
  };
}

export interface Delivery {
  status: number;
  body: string;
}

/**
 * POSTs one push message (headers and encrypted body made by web-push's
 * `generateRequestDetails`) to its endpoint, under the policy. Resolves with
 * the push service's status; rejects on a refused address, a network error
 * or the timeout.
 */
export function deliver(endpoint: URL, headers: Record<string, string | number>, body: Buffer | null, policy: EndpointPolicy, timeoutMs: number): Promise<Delivery> {
  return new Promise((ok, fail) => {
    const host = endpoint.hostname.replace(/^\[|\]$/g, '');
    if (!policy.privateOk && isIP(host) && isPrivateAddress(host)) return fail(new Error(`push endpoint ${host} is a private address`));
    const send = endpoint.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      endpoint,
      {
        method: 'POST',
        headers,
        timeout: timeoutMs,
        ...(policy.privateOk ? {} : { lookup: publicLookup() }),
      },
      (res: IncomingMessage) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          if (text.length < 4096) text += d.slice(0, 4096 - text.length);
        });
        res.on('end', () => ok({ status: res.statusCode ?? 0, body: text }));
        res.on('error', fail);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`push endpoint did not answer within ${timeoutMs} ms`)));
    req.on('error', fail);
    req.end(body ?? undefined);
  });
}

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
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { PUSH_LIMITS } from '../../core/push.js';

export interface EndpointPolicy {
  /** https only. */
  httpsOnly: boolean;
  /** Loopback, private and reserved addresses allowed. */
  privateOk: boolean;
}

// Two lists: a BlockList also matches IPv4 addresses against IPv4-mapped IPv6 rules, and the reverse.
const blocked4 = new BlockList();
const blocked6 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked4.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  blocked6.addSubnet(net, bits, 'ipv6');

/** An IPv6 address's 8 groups (a trailing dotted IPv4 part and a zone index allowed), or null when it is not one. */
function groups6(address: string): number[] | null {
  const a = address.replace(/%.*$/, '');
  if (isIP(a) !== 6) return null;
  let text = a;
  // A dotted IPv4 tail (::ffff:1.2.3.4) is two groups.
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [b1, b2, b3, b4] = dotted.slice(2).map(Number);
    text = `${dotted[1]}${((b1 << 8) | b2).toString(16)}:${((b3 << 8) | b4).toString(16)}`;
  }
  const halves = text.split('::');
  const part = (s: string) => (s === '' ? [] : s.split(':').map((h) => parseInt(h, 16)));
  const head = part(halves[0]);
  const tail = halves.length === 2 ? part(halves[1]) : [];
  const out = halves.length === 2 ? [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail] : head;
  return out.length === 8 && out.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? out : null;
}

const quad = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;

/**
 * The IPv4 addresses an IPv6 address carries, in every form that carries
 * one: IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96),
 * IPv4-compatible (::/96, but :: and ::1), 6to4 (2002::/16, bits 16 to 48),
 * Teredo (2001::/32: the server's address, bits 32 to 64, and the client's,
 * the last 32 bits inverted) and NAT64's well-known prefix (64:ff9b::/96).
 * Empty for any other address, and for what is not an IPv6 address.
 */
export function embeddedIPv4(address: string): string[] {
  const g = groups6(address);
  if (!g) return [];
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return [quad(g[6], g[7])];
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return [quad(g[6], g[7])];
  if (zero(0, 6) && (g[6] !== 0 || g[7] > 1)) return [quad(g[6], g[7])];
  if (g[0] === 0x2002) return [quad(g[1], g[2])];
  if (g[0] === 0x2001 && g[1] === 0) return [quad(g[2], g[3]), quad(g[6] ^ 0xffff, g[7] ^ 0xffff)];
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return [quad(g[6], g[7])];
  return [];
}

/**
 * Whether an address is one a member may not point the server at in shared
 * mode: a reserved IPv4 address, a reserved IPv6 one, or an IPv6 address
 * carrying a reserved IPv4 one in any form (`embeddedIPv4`).
 */
export function isPrivateAddress(address: string): boolean {
  const v = isIP(address);
  if (v === 0) return true;
  if (v === 6) {
    if (embeddedIPv4(address).some((a) => blocked4.check(a, 'ipv4'))) return true;
    return blocked6.check(address.replace(/%.*$/, ''), 'ipv6');
  }
  return blocked4.check(address, 'ipv4');
}

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

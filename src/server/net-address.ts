// Which addresses the server may be pointed at by someone else's say-so (a
// webhook target an owner typed, a push endpoint a browser gave): the one
// place that decides "loopback, private, link-local or otherwise reserved",
// for IPv4 and IPv6 alike (docs/security.md, "Outbound requests").
//
// An IPv6 address can carry an IPv4 address inside it, and a network that
// translates or tunnels may deliver it to that IPv4 address: `::ffff:127.0.0.1`
// (IPv4-mapped), `::127.0.0.1` (IPv4-compatible, deprecated), `2002:7f00:1::`
// (6to4), `2001:0:…:80ff:fffe` (Teredo: the client's address inverted in the
// last 32 bits), `64:ff9b::7f00:1` and `64:ff9b:1::/48` (NAT64). Each is
// decoded, and the IPv4 address inside is judged as itself. Pure: no I/O; the
// resolver is the caller's (`resolveChecked` takes it as an argument).

import { BlockList, isIP } from 'node:net';

// IPv4 ranges no outside party may aim the server at (RFC 6890 and friends).
const blocked4 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata lives here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
] as const)
  blocked4.addSubnet(net, bits, 'ipv4');

// IPv6 ranges judged on their own (the ones carrying IPv4 are decoded first).
const blocked6 = new BlockList();
for (const [net, bits] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['2001:10::', 28], // ORCHID
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed by some)
  ['ff00::', 8], // multicast
] as const)
  blocked6.addSubnet(net, bits, 'ipv6');

/** An IPv6 address's eight 16-bit groups, or null when it is not one. A zone (`%eth0`) is dropped. */
export function ipv6Groups(address: string): number[] | null {
  let a = address.replace(/^\[|\]$/g, '');
  const zone = a.indexOf('%');
  if (zone >= 0) a = a.slice(0, zone);
  if (isIP(a) !== 6) return null;
  // A dotted IPv4 tail becomes two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (dotted) {
    const [b0, b1, b2, b3] = dotted.slice(1).map(Number);
    a = a.slice(0, dotted.index) + ((b0 << 8) | b1).toString(16) + ':' + ((b2 << 8) | b3).toString(16);
  }
  const halves = a.split('::');
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length > 1 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length > 1 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array<string>(fill).fill('0'), ...tail].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : null;
}

const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;

/**
 * The IPv4 address an IPv6 address carries, with the form that carries it,
 * or null for a plain IPv6 address.
 */
export function embeddedIPv4(address: string): { ipv4: string; form: 'mapped' | 'compatible' | '6to4' | 'teredo' | 'nat64' } | null {
  const g = ipv6Groups(address);
  if (!g) return null;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  // ::ffff:a.b.c.d (and ::ffff:0:a.b.c.d, the "IPv4-translated" form of RFC 2765).
  if (zeros(0, 5) && g[5] === 0xffff) return { ipv4: v4(g[6], g[7]), form: 'mapped' };
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return { ipv4: v4(g[6], g[7]), form: 'mapped' };
  // ::a.b.c.d, but not :: and ::1 (judged as IPv6).
  if (zeros(0, 6) && (g[6] !== 0 || g[7] > 1)) return { ipv4: v4(g[6], g[7]), form: 'compatible' };
  // 2002:AABB:CCDD::/16
  if (g[0] === 0x2002) return { ipv4: v4(g[1], g[2]), form: '6to4' };
  // 2001:0000::/32, the client's address inverted in the last 32 bits.
  if (g[0] === 0x2001 && g[1] === 0) return { ipv4: v4(g[6] ^ 0xffff, g[7] ^ 0xffff), form: 'teredo' };
  // 64:ff9b::/96 (well-known) and 64:ff9b:1::/48 (local use, RFC 8215): the last 32 bits.
  if (g[0] === 0x64 && g[1] === 0xff9b && (zeros(2, 6) || g[2] === 1)) return { ipv4: v4(g[6], g[7]), form: 'nat64' };
  return null;
}

/**
 * Every IPv4 address an IPv6 address carries: the one `embeddedIPv4` names,
 * and for Teredo the server's address too (bits 32 to 64), since either end
 * of the tunnel could be inside. Empty for a plain IPv6 address or a non-IPv6 one.
 */
export function carriedIPv4(address: string): string[] {
  const inner = embeddedIPv4(address);
  if (!inner) return [];
  if (inner.form !== 'teredo') return [inner.ipv4];
  const g = ipv6Groups(address)!;
  return [v4(g[2], g[3]), inner.ipv4];
}

/**
 * Why an address may not be aimed at by an outside party ('loopback',
 * 'private', 'link-local', ...), or null when it is a public address. Not an
 * IP address at all: 'not an IP address'.
 */
export function privateReason(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const v = isIP(bare);
  if (v === 0) return 'not an IP address';
  if (v === 6) {
    for (const ipv4 of carriedIPv4(bare)) {
      const why = privateReason(ipv4);
      if (why) return why;
    }
    if (embeddedIPv4(bare)) return null;
    if (!blocked6.check(bare, 'ipv6')) return null;
    const g = ipv6Groups(bare)!;
    if (g.slice(0, 7).every((x) => x === 0)) return g[7] === 1 ? 'loopback' : 'unspecified';
    if ((g[0] & 0xffc0) === 0xfe80) return 'link-local';
    if ((g[0] & 0xfe00) === 0xfc00) return 'private';
    return 'reserved';
  }
  if (!blocked4.check(bare, 'ipv4')) return null;
  if (bare.startsWith('127.')) return 'loopback';
  if (bare.startsWith('169.254.')) return 'link-local';
  if (/^(10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.)/.test(bare)) return 'private';
  return 'reserved';
}

/** A refused address in words: "a loopback address", "a loopback address (127.0.0.1 inside an IPv6 mapped address)"; null when public. */
export function explainPrivate(address: string): string | null {
  const why = privateReason(address);
  if (!why) return null;
  const inner = isIP(address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')) === 6 ? embeddedIPv4(address) : null;
  return `a ${why} address${inner ? ` (${inner.ipv4} inside an IPv6 ${inner.form} address)` : ''}`;
}

/** Whether an address is one an outside party may not aim the server at. */
export function isPrivateAddress(address: string): boolean {
  return privateReason(address) !== null;
}

/** A name's addresses, as `dns.promises.lookup(name, { all: true })` gives them. */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** The address to connect to, checked; or the reason it is refused. */
export type Checked = { ok: true; address: string; family: 4 | 6 } | { ok: false; reason: string };

/**
 * Resolves a host (a name, or an IP literal as is), and checks every address
 * it has: one private address among them refuses the host (a name that
 * answers with a public and a private address could be connected to either).
 * The caller connects to the returned address and no other, so DNS cannot
 * move the target between this check and the connection.
 */
export async function resolveChecked(host: string, resolve: Resolver, allowPrivate: boolean): Promise<Checked> {
  const bare = host.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  if (isIP(bare)) addresses = [{ address: bare, family: isIP(bare) }];
  else {
    try {
      addresses = await resolve(bare);
    } catch (e) {
      return { ok: false, reason: `${bare} did not resolve (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
    }
  }
  if (addresses.length === 0) return { ok: false, reason: `${bare} has no address` };
  if (!allowPrivate) {
    for (const a of addresses) {
      const why = explainPrivate(a.address);
      if (why) return { ok: false, reason: `${bare === a.address ? bare : `${bare} resolves to ${a.address}`}, ${why}` };
    }
  }
  const first = addresses[0];
  return { ok: true, address: first.address, family: isIP(first.address) === 6 ? 6 : 4 };
}

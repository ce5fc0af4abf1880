// The push address check (src/server/push/endpoint.ts) decodes the IPv4
// address an IPv6 address carries, in every form that carries one, before it
// judges it: so 127.0.0.1 or 10.0.0.1 written as IPv6 is refused in shared
// mode like the IPv4 address itself. A table over the pure decoder, then the
// check itself on the URLs a member could send.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkEndpoint, isPrivateAddress } from '../src/server/push/endpoint.js';
import { carriedIPv4 as embeddedIPv4 } from '../src/server/net-address.js';

test('embeddedIPv4: the IPv4 address each IPv6 form carries, and none where there is none', () => {
  const table: [string, string[]][] = [
    // IPv4-mapped (::ffff:0:0/96), in both spellings.
    ['::ffff:127.0.0.1', ['127.0.0.1']],
    ['::ffff:7f00:1', ['127.0.0.1']],
    ['::FFFF:a00:1', ['10.0.0.1']],
    ['0:0:0:0:0:ffff:808:808', ['8.8.8.8']],
    // IPv4-translated (::ffff:0:0:0/96).
    ['::ffff:0:7f00:1', ['127.0.0.1']],
    // IPv4-compatible (::/96, deprecated but routable by some stacks).
    ['::7f00:1', ['127.0.0.1']],
    ['::127.0.0.1', ['127.0.0.1']],
    ['::a9fe:a9fe', ['169.254.169.254']],
    // 6to4 (2002::/16): the IPv4 address in bits 16 to 48.
    ['2002:7f00:1::', ['127.0.0.1']],
    ['2002:c0a8:101:1::1', ['192.168.1.1']],
    ['2002:808:808::1', ['8.8.8.8']],
    // Teredo (2001::/32): the server's address, and the client's (bits inverted).
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', ['65.54.227.120', '192.0.2.45']],
    ['2001:0:808:808:0:0:80ff:fffe', ['8.8.8.8', '127.0.0.1']],
    // NAT64, the well-known prefix (64:ff9b::/96).
    ['64:ff9b::7f00:1', ['127.0.0.1']],
    ['64:ff9b::10.1.2.3', ['10.1.2.3']],
    // A zone index does not hide it.
    ['::ffff:7f00:1%eth0', ['127.0.0.1']],
    // None carried.
    ['2a00:1450:4001::1', []],
    ['fe80::1', []],
    ['::1', []],
    ['::', []],
    ['2001:db8::1', []],
    ['not an address', []],
    ['127.0.0.1', []],
  ];
  for (const [addr, want] of table) assert.deepEqual(embeddedIPv4(addr), want, addr);
});

test('the check refuses a private IPv4 address in any IPv6 dress, and lets a public one through', () => {
  for (const a of ['::7f00:1', '::ffff:7f00:1', '::ffff:0:a00:1', '2002:7f00:1::', '2002:a00:1::1', '2001:0:808:808::80ff:fffe', '2001:0:7f00:1::', '64:ff9b::7f00:1', '::ffff:a9fe:a9fe', '::a9fe:a9fe'])
    assert.equal(isPrivateAddress(a), true, a);
  for (const a of ['2002:808:808::1', '::ffff:808:808', '2a00:1450:4001::1', '2001:0:4136:e378:8000:63bf:f7f7:f7f7']) assert.equal(isPrivateAddress(a), false, a);
  const shared = { httpsOnly: true, privateOk: false };
  for (const url of ['https://[::7f00:1]/x', 'https://[2002:7f00:1::]/x', 'https://[2001:0:808:808::80ff:fffe]/x', 'https://[::ffff:0:7f00:1]/x'])
    assert.equal(typeof checkEndpoint(url, shared), 'string', `${url} is refused in shared mode`);
  assert.ok(checkEndpoint('https://[2002:808:808::1]/push', shared) instanceof URL, 'a 6to4 address of a public one is allowed');
});

// The one address rule for outbound requests (src/server/net-address.ts):
// IPv6 forms that carry an IPv4 address are judged by the IPv4 address inside.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { embeddedIPv4, isPrivateAddress, privateReason, resolveChecked } from '../src/server/net-address.js';

test('IPv4: loopback, private, link-local, CGNAT and reserved ranges are refused; public addresses pass', () => {
  for (const a of ['127.0.0.1', '127.255.0.9', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '198.18.0.1']) assert.ok(isPrivateAddress(a), a);
  for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '93.184.216.34']) assert.equal(privateReason(a), null, a);
  assert.equal(privateReason('127.0.0.1'), 'loopback');
  assert.equal(privateReason('169.254.169.254'), 'link-local');
  assert.equal(privateReason('192.168.0.3'), 'private');
});

test('IPv6 forms that embed IPv4 are decoded: mapped, compatible, 6to4, Teredo, NAT64', () => {
  const cases: [string, string, string][] = [
    ['::ffff:127.0.0.1', '127.0.0.1', 'mapped'],
    ['::ffff:7f00:1', '127.0.0.1', 'mapped'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', '169.254.169.254', 'mapped'],
    ['::127.0.0.1', '127.0.0.1', 'compatible'],
    ['::a00:1', '10.0.0.1', 'compatible'],
    ['2002:7f00:1::', '127.0.0.1', '6to4'],
    ['2002:c0a8:101::1', '192.168.1.1', '6to4'],
    // Teredo: the client's address is the last 32 bits inverted (127.0.0.1 → 80ff:fffe).
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', '127.0.0.1', 'teredo'],
    ['64:ff9b::7f00:1', '127.0.0.1', 'nat64'],
    ['64:ff9b::10.0.0.1', '10.0.0.1', 'nat64'],
    ['64:ff9b:1::a9fe:a9fe', '169.254.169.254', 'nat64'],
  ];
  for (const [v6, v4, form] of cases) {
    assert.deepEqual(embeddedIPv4(v6), { ipv4: v4, form }, v6);
    assert.ok(isPrivateAddress(v6), `${v6} is refused`);
  }
  // The same forms around a public IPv4 address pass.
  for (const a of ['::ffff:8.8.8.8', '2002:808:808::1', '64:ff9b::808:808']) assert.equal(privateReason(a), null, a);
  // Plain IPv6: loopback, unspecified, link-local, unique local, multicast refused; global unicast passes.
  for (const a of ['::1', '::', 'fe80::1', 'fe80::1%eth0', 'fd00::1', 'fc12::3', 'ff02::1', '[::1]']) assert.ok(isPrivateAddress(a), a);
  assert.equal(privateReason('2606:4700:4700::1111'), null);
  assert.equal(embeddedIPv4('2606:4700:4700::1111'), null);
  assert.ok(isPrivateAddress('not-an-ip'));
});

test('resolveChecked: every address of a name is checked; one private address refuses it; the checked address is returned to connect to', async () => {
  const resolve = async (h: string) => (h === 'mixed.test' ? [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.5', family: 4 }] : h === 'pub.test' ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
  assert.deepEqual(await resolveChecked('pub.test', resolve, false), { ok: true, address: '93.184.216.34', family: 4 });
  const mixed = await resolveChecked('mixed.test', resolve, false);
  assert.equal(mixed.ok, false);
  assert.deepEqual(await resolveChecked('localhost', resolve, true), { ok: true, address: '127.0.0.1', family: 4 });
  assert.equal((await resolveChecked('[::ffff:127.0.0.1]', resolve, false)).ok, false);
});

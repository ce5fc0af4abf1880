// Idempotency keys and store errors through the HTTP API (issue 12 part 4):
// what a client retrying a request, or reusing a key by mistake, sees.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess, post } from './support/server.js';

test('a store that cannot write answers 503 unavailable (retry later with the same key), not 500', async () => {
  const srv = await inProcess();
  try {
    assert.equal((await post(srv.url, { type: 'join', agent: 'a1' })).status, 200);
    await srv.store.close(); // what a node sees while its database is gone or it is shutting down
    const r = await post(srv.url, { type: 'join', agent: 'a2' }, { 'idempotency-key': 'k-503' });
    assert.equal(r.status, 503);
    assert.equal(r.json.kind, 'unavailable');
    assert.match(r.json.message, /retry/);
  } finally {
    await srv.close();
  }
});

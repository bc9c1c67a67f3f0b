// The harness itself: a server starts with keys, refuses a request without
// one and answers with one.
import test from 'node:test';
import assert from 'node:assert/strict';
import { startEngram } from './lib/engram.mjs';

test('engram serve starts and requires its key', async (t) => {
  const e = await startEngram();
  t.after(e.stop);
  let r = await fetch(`${e.url}/v1/memories?org=acme&project=app`);
  assert.equal(r.status, 401);
  r = await fetch(`${e.url}/v1/memories?org=acme&project=app`, { headers: { Authorization: `Bearer ${e.key}` } });
  assert.equal(r.status, 200, await r.text());
});

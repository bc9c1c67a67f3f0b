// Mem0's own client, MemoryClient from the pinned mem0ai package, against
// engram's Mem0-compatible API (engram serve, under /mem0). The network
// guard of bench/mem0 is loaded before mem0ai, so any connection the client
// tries beyond loopback (its telemetry, its default host) is refused and
// fails the test.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEngram, makeKey } from './lib/engram.mjs';

const require = createRequire(import.meta.url);
require('../bench/mem0/guard.cjs');
const guard = globalThis.__netGuard;
// mem0ai reads these when it loads: telemetry off, and its config
// directory (written only with telemetry on) kept out of $HOME.
process.env.MEM0_TELEMETRY = 'false';
process.env.MEM0_DIR = mkdtempSync(join(tmpdir(), 'mem0-dir-'));
const { MemoryClient, MemoryNotFoundError, ValidationError } = await import('mem0ai');

test('the network guard refuses and counts what it claims to', async () => {
  const r = await guard.selfTest();
  assert.ok(r.passed, `guard self-test: ${JSON.stringify(r)}`);
});

test('MemoryClient: a scripted session against engram', async (t) => {
  const e = await startEngram();
  t.after(e.stop);
  const client = new MemoryClient({ apiKey: e.key, host: `${e.url}/mem0` });
  await client.ping();
  assert.equal(client.organizationId, 'acme');
  assert.equal(client.projectId, 'app');

  // add, infer false: each message verbatim.
  const verbatim = await client.add(
    [{ role: 'user', content: 'I keep bees in my garden' }],
    { user_id: 'ann', infer: false, metadata: { source: 'it' } },
  );
  assert.equal(verbatim.results.length, 1);
  const bees = verbatim.results[0];
  assert.equal(bees.event, 'ADD');
  assert.equal(bees.memory, 'I keep bees in my garden');
  assert.equal(bees.userId, 'ann');
  assert.deepEqual(bees.metadata, { source: 'it' });

  // add, infer true: engram forms memories from the messages.
  const formed = await client.add(
    [{ role: 'user', content: 'My sister Lena moved to Lisbon last year' }, { role: 'assistant', content: 'Lisbon is lovely.' }],
    { userId: 'ann' },
  );
  assert.ok(formed.results.some((r) => r.event === 'ADD' && r.memory.includes('Lena')), JSON.stringify(formed));

  // search finds it.
  const found = await client.search('where does Lena live', { filters: { user_id: 'ann' }, topK: 3 });
  assert.ok(found.results.length > 0 && found.results.length <= 3, JSON.stringify(found));
  assert.match(found.results[0].memory, /Lisbon/);
  assert.equal(typeof found.results[0].score, 'number');

  // get all, v3 with filters and paging.
  const all = await client.getAll({ filters: { AND: [{ user_id: 'ann' }] }, page: 1, pageSize: 50 });
  assert.ok(all.count >= 3, JSON.stringify(all));
  assert.ok(all.results.some((m) => m.id === bees.id));

  // get, update, history.
  assert.equal((await client.get(bees.id)).memory, 'I keep bees in my garden');
  const updated = await client.update(bees.id, { text: 'I keep bees and hens in my garden' });
  assert.equal(updated.memory, 'I keep bees and hens in my garden');
  const hens = await client.search('hens', { filters: { user_id: 'ann' } });
  assert.equal(hens.results[0].id, bees.id);
  const history = await client.history(bees.id);
  assert.deepEqual(history.map((h) => h.event), ['ADD', 'UPDATE']);
  assert.equal(history[1].oldMemory, 'I keep bees in my garden');
  assert.equal(history[1].newMemory, 'I keep bees and hens in my garden');
  assert.equal(history[1].memoryId, bees.id);

  // A key bound to bob cannot see ann's memory.
  const bobKey = makeKey(e.dataDir, { user: 'bob', role: 'write' });
  const bob = new MemoryClient({ apiKey: bobKey, host: `${e.url}/mem0` });
  await assert.rejects(bob.get(bees.id), MemoryNotFoundError);
  await assert.rejects(bob.search('bees', { filters: { user_id: 'ann' } }), /outside this key's binding/);
  await bob.add([{ role: 'user', content: 'Bob plays chess' }], { userId: 'bob', infer: false });

  // entities.
  const users = await client.users();
  assert.deepEqual(users.results.map((u) => `${u.type}:${u.name}`).sort(), ['user:ann', 'user:bob']);

  // delete one: gone for get, recorded in history.
  assert.match((await client.delete(bees.id)).message, /deleted/);
  await assert.rejects(client.get(bees.id), MemoryNotFoundError);
  assert.deepEqual((await client.history(bees.id)).map((h) => h.event), ['ADD', 'UPDATE', 'DELETE']);

  // delete all of a user, and an entity.
  assert.match((await client.deleteAll({ userId: 'ann' })).message, /deleted/);
  assert.equal((await client.getAll({ filters: { user_id: 'ann' } })).count, 0);
  await client.deleteUsers({ userId: 'bob' });
  assert.equal((await client.users()).results.length, 0);

  // Bad calls throw with a message that names the field.
  await assert.rejects(
    client.add([{ role: 'user', content: 'no owner' }], {}),
    (err) => err instanceof ValidationError && /user_id/.test(err.message),
  );
  await assert.rejects(
    client.search('x', { filters: { user_id: 'ann', categories: { in: ['a'] } } }),
    (err) => err instanceof ValidationError && /filters\.categories/.test(err.message),
  );
});

test('MemoryClient: German, Spanish and Chinese round-trip', async (t) => {
  const e = await startEngram();
  t.after(e.stop);
  const client = new MemoryClient({ apiKey: e.key, host: `${e.url}/mem0` });
  for (const [user, text, query] of [
    ['de', 'Ich trinke jeden Morgen Kaffee in Köln.', 'Kaffee Köln'],
    ['es', 'Mi hermana vive en Sevilla desde marzo.', 'hermana Sevilla'],
    ['zh', '我每天早上在上海喝咖啡。', '上海 咖啡'],
  ]) {
    await client.add([{ role: 'user', content: text }], { userId: user });
    const found = await client.search(query, { filters: { user_id: user } });
    assert.equal(found.results[0]?.memory, text, `${user}: ${JSON.stringify(found)}`);
  }
});

test('MemoryClient: --no-auth serves the tenant of --mem0-org and --mem0-project', async (t) => {
  const e = await startEngram({ noAuth: true, args: ['--mem0-org', 'local', '--mem0-project', 'dev'] });
  t.after(e.stop);
  // mem0ai requires some key; a server without keys ignores it.
  const client = new MemoryClient({ apiKey: 'unused', host: `${e.url}/mem0` });
  await client.ping();
  assert.equal(client.organizationId, 'local');
  assert.equal(client.projectId, 'dev');
  const added = await client.add([{ role: 'user', content: 'tea at five' }], { userId: 'ann', runId: 's1', infer: false });
  const r = await fetch(`${e.url}/v1/memories/${added.results[0].id}?org=local&project=dev&user=ann&session=s1`);
  assert.equal(r.status, 200, await r.clone().text());
  assert.equal((await r.json()).value, 'tea at five');
});

test('MemoryClient made no connection beyond loopback', () => {
  assert.equal(guard.blocked, 0, `refused: ${guard.destinations.join(', ')}`);
});

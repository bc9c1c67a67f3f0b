// engram's MCP server with the official TypeScript client, over both
// transports: `engram mcp` spawned on stdio, and `engram serve` at /mcp over
// streamable HTTP with an API key. Each run initialises, lists the tools,
// remembers then recalls, makes an invalid call and forgets.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bin, startEngram, makeKey } from './lib/engram.mjs';

const tools = ['forget', 'get', 'history', 'list', 'recall', 'remember', 'update'];

async function connect(transport) {
  const client = new Client({ name: 'engram-integration', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

// call calls a tool that must succeed and returns its structured output.
async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(!res.isError, `${name}: ${JSON.stringify(res.content)}`);
  assert.equal(res.content[0].type, 'text');
  return res.structuredContent;
}

// failing calls a tool that must fail with a tool error containing want.
async function failing(client, name, args, want) {
  const res = await client.callTool({ name, arguments: args });
  assert.equal(res.isError, true, `${name} ${JSON.stringify(args)} succeeded: ${JSON.stringify(res.content)}`);
  assert.match(res.content[0].text, want);
}

// session is the scripted session both transports go through.
async function session(client) {
  const info = client.getServerVersion();
  assert.equal(info.name, 'engram');
  const listed = await client.listTools();
  assert.deepEqual(listed.tools.map((t) => t.name).sort(), tools);
  for (const t of listed.tools) {
    assert.ok(t.description, `${t.name} has a description`);
    assert.equal(t.inputSchema.type, 'object');
  }
  const recall = listed.tools.find((t) => t.name === 'recall');
  assert.deepEqual(recall.inputSchema.required, ['query']);

  const rem = await call(client, 'remember', {
    turns: [
      { role: 'user', speaker: 'Ann', content: 'My sister Greta just moved to Tromsø for a job at the aquarium.' },
      { role: 'assistant', content: 'Tromsø! That is far north.' },
    ],
  });
  assert.equal(rem.episodes.length, 2);
  const fact = await call(client, 'remember', { fact: 'Ann schwimmt jeden Morgen im Fluss.' });
  assert.equal(fact.memories.length, 1);

  let found = await call(client, 'recall', { query: 'Where did Greta move?' });
  assert.match(found.context, /Tromsø/);
  const gretaID = found.hits[0].id;
  assert.ok(rem.memories.some((m) => m.id === gretaID), 'the best hit is a memory remember formed');
  found = await call(client, 'recall', { query: 'Wann schwimmt Ann?' });
  assert.equal(found.hits[0].id, fact.memories[0].id);

  // Invalid calls say what is wrong and store nothing.
  await failing(client, 'remember', { turns: [{ role: 'user', content: 'fine' }, { role: 'user', content: '' }] }, /turns\[1\]\.content/);
  await failing(client, 'recall', {}, /query/);
  await failing(client, 'get', { id: '' }, /id is required/);
  const after = await call(client, 'list', { contains: 'fine' });
  assert.equal(after.memories.length, 0, 'the bad remember stored nothing');

  // Forget: soft keeps it in history, hard purges it.
  let gone = await call(client, 'forget', { id: gretaID, reason: 'asked to' });
  assert.equal(gone.forgotten, 'soft');
  assert.equal((await call(client, 'get', { id: gretaID })).status, 'deleted');
  const hist = await call(client, 'history', { id: gretaID });
  assert.equal(hist.versions.at(-1).op, 'DELETE');
  found = await call(client, 'recall', { query: 'Where did Greta move?' });
  assert.ok(!found.hits.some((h) => h.id === gretaID), 'recall no longer finds the forgotten memory');
  gone = await call(client, 'forget', { id: fact.memories[0].id, hard: true });
  assert.equal(gone.forgotten, 'hard');
  await failing(client, 'get', { id: fact.memories[0].id }, /not found/);

  const profile = await client.readResource({ uri: 'engram://profile' });
  assert.ok(JSON.parse(profile.contents[0].text));
}

test('engram mcp over stdio', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'engram-mcp-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const transport = new StdioClientTransport({
    command: bin,
    args: ['mcp', '--data', dataDir, '--org', 'acme', '--project', 'app', '--user', 'ann'],
    env: { ...process.env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  const client = await connect(transport);
  t.after(() => client.close());
  await t.test('session', () => session(client));
  assert.doesNotMatch(stderr, /panic/);
});

test('engram serve at /mcp over streamable HTTP with an API key', async (t) => {
  const e = await startEngram();
  t.after(e.stop);
  const withKey = (key) => new StreamableHTTPClientTransport(new URL(`${e.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const ann = makeKey(e.dataDir, { user: 'ann', role: 'write' });
  const client = await connect(withKey(ann));
  t.after(() => client.close());
  await t.test('session', () => session(client));

  // A read key recalls but may not remember; a key bound to bob sees none
  // of ann's memories and may not name her.
  const reader = await connect(withKey(makeKey(e.dataDir, { user: 'ann', role: 'read' })));
  t.after(() => reader.close());
  await call(client, 'remember', { fact: 'Ann keeps bees on the roof.' });
  assert.match((await call(reader, 'recall', { query: 'bees' })).hits[0].value, /bees/);
  await failing(reader, 'remember', { fact: 'no' }, /role write/);
  const bob = await connect(withKey(makeKey(e.dataDir, { user: 'bob', role: 'write' })));
  t.after(() => bob.close());
  assert.equal((await call(bob, 'recall', { query: 'bees' })).hits.length, 0);
  await failing(bob, 'recall', { query: 'bees', user: 'ann' }, /outside this key's binding/);

  // Without a key the endpoint answers 401.
  await assert.rejects(connect(new StreamableHTTPClientTransport(new URL(`${e.url}/mcp`))));
});

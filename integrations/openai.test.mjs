// The memory proxy with OpenAI's own client: a chat through engram stores
// the turn, and a later chat's request to the upstream LLM carries it in
// the system message, streaming and not. The upstream is the fake
// OpenAI-compatible server (lib/fakeopenai.mjs).
import test from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startEngram, makeKey } from './lib/engram.mjs';
import { startFakeOpenAI } from './lib/fakeopenai.mjs';

async function setup(t) {
  const fake = await startFakeOpenAI();
  t.after(fake.stop);
  const e = await startEngram({ args: ['--proxy-url', fake.url], env: { ENGRAM_PROXY_KEY: 'upstream-key' } });
  t.after(e.stop);
  const client = new OpenAI({ baseURL: e.url + '/v1', apiKey: e.key, maxRetries: 0 });
  return { fake, e, client };
}

// episodes lists the user's stored episodes as "role: content".
async function episodes(e, user) {
  const r = await fetch(`${e.url}/v1/episodes?org=acme&project=app&user=${user}`, { headers: { Authorization: `Bearer ${e.key}` } });
  const body = await r.text();
  assert.equal(r.status, 200, body);
  return JSON.parse(body).episodes.map((ep) => `${ep.role}: ${ep.content}`);
}

test('a fact told in one chat is in the next chat\'s system message', async (t) => {
  const { fake, e, client } = await setup(t);

  await fake.reply('Porto is a lovely city.');
  const first = await client.chat.completions.create({
    model: 'gpt-test',
    user: 'ann',
    messages: [{ role: 'user', content: 'My sister lives in Porto.' }],
  });
  assert.equal(first.choices[0].message.content, 'Porto is a lovely city.');
  assert.equal(first.object, 'chat.completion');
  const stored = await episodes(e, 'ann');
  assert.ok(stored.includes('user: My sister lives in Porto.'), stored.join('\n'));
  assert.ok(stored.includes('assistant: Porto is a lovely city.'), stored.join('\n'));

  await fake.reply('She lives in Porto.');
  const second = await client.chat.completions.create({
    model: 'gpt-test',
    user: 'ann',
    temperature: 0.5,
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Where does my sister live?' },
    ],
  });
  assert.equal(second.choices[0].message.content, 'She lives in Porto.');
  const chats = await fake.chats();
  const sent = chats.at(-1);
  const system = sent.body.messages[0];
  assert.equal(system.role, 'system');
  assert.match(system.content, /^You are a helpful assistant\.\n\n<engram-memories>\n/);
  assert.match(system.content, /My sister lives in Porto\./);
  assert.equal(sent.body.temperature, 0.5);
  assert.equal(sent.body.model, 'gpt-test');
  assert.equal(sent.authorization, 'Bearer upstream-key', 'the upstream gets the proxy\'s key, never engram\'s');
});

test('streaming: chunks are relayed as they come and the reply is stored', async (t) => {
  const { fake, e, client } = await setup(t);
  await fake.reply('Noted.');
  await client.chat.completions.create({ model: 'gpt-test', user: 'ann', messages: [{ role: 'user', content: 'My sister lives in Porto.' }] });

  await fake.reply('Your sister lives in Porto, by the Douro river.');
  const stream = await client.chat.completions.create({
    model: 'gpt-test',
    user: 'ann',
    stream: true,
    messages: [{ role: 'user', content: 'Where does my sister live?' }],
  });
  let text = '';
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    text += chunk.choices[0]?.delta?.content ?? '';
  }
  assert.equal(text, 'Your sister lives in Porto, by the Douro river.');
  assert.ok(chunks >= 9, `${chunks} chunks`);
  const sent = (await fake.chats()).at(-1);
  assert.equal(sent.body.stream, true);
  assert.equal(sent.body.messages[0].role, 'system');
  assert.match(sent.body.messages[0].content, /My sister lives in Porto\./);
  const stored = await episodes(e, 'ann');
  assert.ok(stored.includes('assistant: Your sister lives in Porto, by the Douro river.'), stored.join('\n'));
});

test('a key bound to a user proxies as that user and no other', async (t) => {
  const { fake, e } = await setup(t);
  const bobKey = makeKey(e.dataDir, { user: 'bob', role: 'write' });
  const bob = new OpenAI({ baseURL: e.url + '/v1', apiKey: bobKey, maxRetries: 0 });
  await fake.reply('Hi Bob.');
  const r = await bob.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'I am Bob and I like chess.' }] });
  assert.equal(r.choices[0].message.content, 'Hi Bob.');
  assert.ok((await episodes(e, 'bob')).includes('user: I am Bob and I like chess.'));

  await assert.rejects(
    bob.chat.completions.create({ model: 'gpt-test', user: 'ann', messages: [{ role: 'user', content: 'hi' }] }),
    (err) => err instanceof OpenAI.APIError && err.status === 403 && /user/.test(err.message),
  );
  const asAnn = new OpenAI({ baseURL: e.url + '/v1', apiKey: bobKey, maxRetries: 0, defaultHeaders: { 'X-Engram-User': 'ann' } });
  await assert.rejects(
    asAnn.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }),
    (err) => err instanceof OpenAI.APIError && err.status === 403,
  );
  assert.deepEqual(await episodes(e, 'ann'), []);
});

test('an upstream error reaches the client and stores nothing', async (t) => {
  const { fake, e, client } = await setup(t);
  await fake.fail(1, 500, 'the model is overloaded');
  await assert.rejects(
    client.chat.completions.create({ model: 'gpt-test', user: 'ann', messages: [{ role: 'user', content: 'I moved to Lyon.' }] }),
    (err) => err instanceof OpenAI.APIError && err.status === 500 && /overloaded/.test(err.message),
  );
  assert.deepEqual(await episodes(e, 'ann'), []);
});

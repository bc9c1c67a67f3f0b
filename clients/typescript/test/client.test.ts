// EngramClient against a real engram serve: every method at least once,
// errors in the REST error shape, a user-bound key, paging, export and
// import, and German and Chinese text.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EngramClient, EngramError, type Entity, type ErrorCode, type Graph, type Memory, type RefreshResult, type Relation } from '../src/index.js';
import { startEngram, type Engram } from './server.js';

const ann = { org: 'acme', project: 'app', user: 'ann' };
const bob = { org: 'acme', project: 'app', user: 'bob' };

// rejects awaits p, checks that it fails with an EngramError of the given
// status and code whose message has every given word, and returns it.
async function rejects(p: Promise<unknown>, status: number, code: ErrorCode, ...words: string[]): Promise<EngramError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof EngramError, `want an EngramError, got ${String(err)}`);
    assert.equal(err.status, status, err.message);
    assert.equal(err.code, code, err.message);
    for (const w of words) assert.ok(err.message.includes(w), `message ${JSON.stringify(err.message)} does not name ${w}`);
    return err;
  }
  assert.fail('the call succeeded; want an EngramError');
}

describe('EngramClient against engram serve', () => {
  let e: Engram;
  let c: EngramClient;
  before(async () => {
    // The suite sends its requests as fast as the server answers them, so
    // a fast server took it past the default per-key limit (50 a second;
    // 0 turns it off, as the Python client's tests do);
    // the limit itself is tested on a server of its own below.
    e = await startEngram(['--rate-limit', '0']);
    c = new EngramClient({ baseUrl: e.url, apiKey: e.key, actor: 'ts-test' });
  });
  after(async () => {
    await e?.stop();
  });

  test('health and ready', async () => {
    assert.ok((await c.health()).status);
    assert.equal((await c.ready()).status, 'ready');
  });

  test('episodes: add in German and Chinese, page through, get, delete', async () => {
    const ns = { ...ann, session: 'episodes' };
    const texts = ['Ich wohne in München.', '我喜欢喝绿茶。', 'Mi perro se llama Toby.', 'Wir fahren im Mai nach Österreich.', '明天我要去北京。'];
    const res = await c.addEpisodes({ namespace: ns, episodes: texts.map((content) => ({ role: 'user', content })) });
    assert.equal(res.episodes.length, texts.length);
    assert.deepEqual(res.episodes.map((ep) => ep.content), texts);

    const seen: string[] = [];
    let pages = 0;
    for await (const page of c.pages('listEpisodes', { ...ns, limit: 2 })) {
      pages++;
      assert.ok(page.episodes.length <= 2);
      seen.push(...page.episodes.map((ep) => ep.content));
    }
    assert.equal(pages, 3);
    assert.deepEqual([...seen].sort(), [...texts].sort());

    const found = await c.listEpisodes({ ...ns, contains: '绿茶' });
    assert.deepEqual(found.episodes.map((ep) => ep.content), ['我喜欢喝绿茶。']);

    const first = res.episodes[0]!;
    assert.equal((await c.getEpisode(first.id, ns)).content, 'Ich wohne in München.');
    await c.deleteEpisode(first.id, ns);
    await rejects(c.getEpisode(first.id, ns), 404, 'not_found');
  });

  test('memories: add, list, query, get, update, history, rollback, supersede, delete, restore', async () => {
    const ns = { ...ann, session: 'memories' };
    const added = await c.addMemories({
      namespace: ns,
      memories: [
        { kind: 'semantic', value: 'Ann trinkt am liebsten Pfefferminztee.', metadata: { ort: 'München', n: 3 } },
        { kind: 'semantic', value: '安喜欢在杭州的西湖边散步。', metadata: { ort: '杭州', n: 4 } },
      ],
    });
    assert.equal(added.memories.length, 2);
    const [tea, lake] = added.memories as [Memory, Memory];
    assert.equal(lake.value, '安喜欢在杭州的西湖边散步。');

    const byMeta = await c.listMemories({ ...ns, meta: { ort: 'München' } });
    assert.deepEqual(byMeta.memories.map((m) => m.id), [tea.id]);
    const byNumber = await c.listMemories({ ...ns, meta_in: { n: [4, 5] } });
    assert.deepEqual(byNumber.memories.map((m) => m.id), [lake.id]);
    const coded = await c.addMemories({ namespace: ns, memories: [{ kind: 'semantic', value: 'Code als Text', metadata: { code: '3' } }] });
    assert.deepEqual((await c.listMemories({ ...ns, meta: { code: '3' } })).memories.map((m) => m.id), [coded.memories[0]!.id]);
    assert.equal((await c.listMemories({ ...ns, meta: { code: 3 } })).memories.length, 0);
    await c.deleteMemory(coded.memories[0]!.id, { ...ns, hard: true });
    const byFilter = await c.queryMemories({ scope: ns, filter: { metadata: { ort: '杭州' }, kinds: ['semantic'] } });
    assert.deepEqual(byFilter.memories.map((m) => m.id), [lake.id]);

    assert.equal((await c.getMemory(tea.id, ns)).value, tea.value);
    const updated = await c.updateMemory(tea.id, ns, { value: 'Ann trinkt am liebsten Kräutertee.', reason: 'korrigiert' });
    assert.equal(updated.version, 2);
    assert.equal(updated.value, 'Ann trinkt am liebsten Kräutertee.');

    const history = await c.memoryHistory(tea.id, ns);
    assert.deepEqual(history.versions.map((v) => v.op), ['ADD', 'UPDATE']);
    assert.equal(history.versions[1]?.actor, 'ts-test');
    assert.equal(history.versions[1]?.reason, 'korrigiert');

    const rolled = await c.rollbackMemory(tea.id, ns, { version: 1, reason: 'zurück' });
    assert.equal(rolled.value, 'Ann trinkt am liebsten Pfefferminztee.');

    const sup = await c.supersedeMemory(tea.id, ns, { new: { kind: 'semantic', value: 'Ann trinkt jetzt nur noch Kaffee.' }, reason: 'neu' });
    assert.equal(sup.old.status, 'superseded');
    assert.equal(sup.old.superseded_by, sup.new.id);
    assert.equal(sup.new.status, 'active');

    await c.deleteMemory(lake.id, { ...ns, reason: '不再需要' });
    assert.equal((await c.getMemory(lake.id, ns)).status, 'deleted');
    const restored = await c.restoreMemory(lake.id, ns, { reason: '需要' });
    assert.equal(restored.status, 'active');
    await c.deleteMemory(lake.id, { ...ns, hard: true });
    await rejects(c.getMemory(lake.id, ns), 404, 'not_found');
  });

  test('memories page by cursor', async () => {
    const ns = { ...ann, session: 'paging' };
    const values = Array.from({ length: 7 }, (_, i) => `Notiz Nummer ${i} – 第${i}条笔记`);
    await c.addMemories({ namespace: ns, memories: values.map((value) => ({ kind: 'semantic' as const, value })) });
    const first = await c.listMemories({ ...ns, limit: 3 });
    assert.equal(first.memories.length, 3);
    assert.ok(first.next);
    const second = await c.listMemories({ ...ns, limit: 3, cursor: first.next });
    assert.equal(second.memories.length, 3);
    assert.equal(new Set([...first.memories, ...second.memories].map((m) => m.id)).size, 6);
    const all: string[] = [];
    for await (const page of c.pages('listMemories', { ...ns, limit: 3 })) all.push(...page.memories.map((m) => m.value));
    assert.deepEqual(all.sort(), [...values].sort());
  });

  test('search in German and Chinese, with a context budget', async () => {
    const ns = { ...ann, session: 'search' };
    await c.addMemories({
      namespace: ns,
      memories: [
        { kind: 'semantic', value: 'Ann spielt jeden Samstag Schach im Verein.' },
        { kind: 'semantic', value: '安每天早上在公园里打太极拳。' },
        { kind: 'semantic', value: 'Ann has a cat named Pixel.' },
      ],
    });
    const de = await c.search({ scope: ns, query: 'Schach Verein', k: 3 });
    assert.equal(de.hits[0]?.memory.value, 'Ann spielt jeden Samstag Schach im Verein.');
    const zh = await c.search({ scope: ns, query: '太极拳', k: 3, budget: 200 });
    assert.equal(zh.hits[0]?.memory.value, '安每天早上在公园里打太极拳。');
    assert.ok(zh.context?.includes('太极拳'), `context: ${zh.context}`);
    const ag = await c.search({ scope: ns, query: 'Schach Verein', mode: 'agentic', steps: 2, llm_calls: 0 });
    assert.equal(ag.hits[0]?.memory.value, 'Ann spielt jeden Samstag Schach im Verein.');
    assert.equal(ag.trace?.[0]?.action, 'search');
    assert.equal(ag.trace?.at(-1)?.action, 'stop');
  });

  test('profile', async () => {
    const ns = { ...ann, session: 'profile' };
    await c.addMemories({ namespace: ns, memories: [{ kind: 'core', value: 'Ann ist Krankenschwester in Berlin.' }, { kind: 'semantic', value: '不是核心' }] });
    const p = await c.profile(ns);
    assert.ok(Array.isArray(p.traits) && Array.isArray(p.states));
    assert.deepEqual(p.memories.map((m) => m.value), ['Ann ist Krankenschwester in Berlin.']);
  });

  test('conflicts: listed and resolved', async () => {
    const ns = { org: 'acme', project: 'app', user: 'carla' };
    const t0 = Date.UTC(2025, 2, 1, 10);
    const at = (days: number) => new Date(t0 + days * 86_400_000).toISOString();
    await c.addEpisodes({ namespace: ns, episodes: [{ role: 'user', speaker: 'Carla', content: 'Ich wohne jetzt in Hamburg.', occurred_at: at(60) }] });
    const res = await c.addEpisodes({ namespace: ns, episodes: [{ role: 'user', speaker: 'Carla', content: 'Ich wohne in Köln.', occurred_at: at(0) }] });
    assert.equal(res.decisions?.['CONFLICT'], 1, JSON.stringify(res.decisions));
    const { conflicts } = await c.listConflicts(ns);
    assert.equal(conflicts.length, 1);
    const [a, b] = conflicts[0]!.memories as [Memory, Memory];
    const hamburg = a.value.includes('Hamburg') ? a : b;
    const out = await c.resolveConflict(conflicts[0]!.id, ns, { keep: hamburg.id, action: 'supersede', reason: 'neuer' });
    assert.equal(out.kept.id, hamburg.id);
    assert.equal((await c.listConflicts(ns)).conflicts.length, 0);
    await rejects(c.resolveConflict(conflicts[0]!.id, ns, { keep: hamburg.id }), 404, 'not_found');
  });

  test('jobs: an async add is a job that gets done', async () => {
    const ns = { ...ann, session: 'jobs' };
    const res = await c.addEpisodes({ namespace: ns, async: true, episodes: [{ role: 'user', content: 'Ich arbeite als Lehrerin in Graz.' }] });
    const job = res.job;
    assert.ok(job, JSON.stringify(res));
    let state = job.state;
    for (let i = 0; i < 100 && state !== 'done' && state !== 'failed'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      state = (await c.getJob(job.id, ns)).state;
    }
    assert.equal(state, 'done');
    const listed = await c.listJobs({ ...ns, state: ['done'] });
    assert.ok(listed.jobs.some((j) => j.id === job.id));
    await rejects(c.getJob(job.id, { ...ns, user: 'bob' }), 404, 'not_found');
  });

  test('resources: upload a German and Chinese document, search, download, delete', async () => {
    const ns = { ...ann, session: 'resources' };
    const doc = '# Reise\n\nDer Zug nach Wien fährt um acht.\n\n## 行程\n\n我们明天去上海。\n';
    const bytes = new TextEncoder().encode(doc);
    const r = await c.addResource({ ...ns, name: 'reise.md', source: 'notes' }, new Blob([bytes], { type: 'text/markdown' }));
    assert.equal(r.size, bytes.length);
    assert.equal(r.memories, 2);
    assert.equal((await c.getResource(r.id, ns)).sha256, r.sha256);
    assert.ok((await c.listResources(ns)).resources.some((x) => x.id === r.id));
    assert.deepEqual(await c.downloadResource(r.id, ns), bytes);
    const hits = (await c.search({ scope: ns, query: 'Zug Wien' })).hits;
    assert.equal(hits[0]?.memory.metadata?.['resource_id'], r.id);
    await c.deleteResource(r.id, ns);
    await rejects(c.getResource(r.id, ns), 404, 'not_found');
  });

  test('identities: observe faces, link a name, search by an alias, merge, split, history', async () => {
    const ns = { org: 'acme', project: 'app', user: 'identities' };
    const ep = (await c.addEpisodes({ namespace: ns, episodes: [{ role: 'user', content: '我们在湖边划船。' }] })).episodes[0]!;
    const near = (axis: number, k: number): number[] => {
      const v = new Array<number>(8).fill(0);
      v[axis] = 1;
      v[(axis + 1 + k) % 8] = 0.1;
      return v;
    };
    const obs = [0, 1, 2].map((k) => ({ modality: 'face', embedding: near(0, k), episode_id: ep.id }));
    obs.push(...[0, 1].map((k) => ({ modality: 'face', embedding: near(4, k), episode_id: ep.id })));
    const res = await c.addObservations({ namespace: ns, observations: obs });
    const a = res.observations[0]!.identity_id;
    const b = res.observations[3]!.identity_id;
    assert.notEqual(a, b);
    await rejects(c.addObservations({ namespace: ns, observations: [{ modality: 'face', embedding: [1, 2] }] }), 400, 'invalid', 'observations[0].embedding');
    const p = await c.linkIdentities(ns, { identities: [a], name: 'Wang Fang' });
    await c.linkIdentities(ns, { person_id: p.id, name: '小芳' });
    const hits = (await c.search({ scope: ns, query: '小芳', channels: ['identity'] })).hits;
    assert.deepEqual(hits[0]?.memory.sources, [ep.id]);
    assert.equal((await c.getIdentity(a, ns)).observations.length, 3);
    assert.equal((await c.mergeIdentities(ns, { into: a, from: [b] })).count, 5);
    const split = await c.splitIdentity(a, ns, { observations: [res.observations[3]!.id, res.observations[4]!.id] });
    assert.equal(split.count, 2);
    assert.equal((await c.unlinkIdentity(a, ns)).person_id ?? '', '');
    assert.deepEqual((await c.identityHistory(a, ns)).events.map((e) => e.op), ['create', 'link', 'merge', 'split', 'unlink']);
    assert.deepEqual((await c.listPersons(ns)).persons, []);
    assert.equal((await c.listIdentities({ ...ns, modality: 'face' })).identities.length, 2);
    await c.deleteIdentity(split.id, ns);
    await rejects(c.getIdentity(split.id, ns), 404, 'not_found');
  });

  test('media: an episode with German and Chinese transcript segments, a bad span refused', async () => {
    const ns = { ...ann, session: 'media' };
    const audio = await c.addResource({ ...ns, name: 'anruf.ogg' }, new Blob([new Uint8Array([79, 103, 103, 83])], { type: 'audio/ogg' }));
    const res = await c.addEpisodes({
      namespace: ns,
      episodes: [{ content: 'Ein Anruf', media: [{ resource_id: audio.id, kind: 'audio', start: 1, end: 20, segments: [
        { start: 1, end: 8, speaker: 'Jonas', text: 'Die Fähre nach Sylt fällt heute aus.' },
        { start: 8, end: 20, speaker: '陈静', text: '那我们改坐火车吧。' },
      ] }] }],
    });
    assert.equal(res.episodes[0]?.media?.[0]?.segments?.[1]?.speaker, '陈静');
    const hits = (await c.search({ scope: ns, query: '改坐火车', channels: ['bm25'] })).hits;
    assert.equal(hits[0]?.memory.metadata?.['resource_id'], audio.id);
    await rejects(c.addEpisodes({ namespace: ns, episodes: [{ content: 'x', media: [{ resource_id: audio.id, kind: 'audio', start: 5, end: 1 }] }] }),
      400, 'invalid', 'media[0]');
  });

  test('export, delete scope, import back', async () => {
    const ns = { org: 'acme', project: 'app', user: 'dora' };
    await c.addEpisodes({ namespace: ns, episodes: [{ role: 'user', content: 'Ich heiße Dora und mag Käsespätzle.' }] });
    await c.addMemories({ namespace: ns, memories: [{ kind: 'core', value: '朵拉会说中文和德语。' }] });
    const before = (await c.listMemories(ns)).memories.map((m) => m.value).sort();
    const records = await c.export(ns);
    assert.ok(records.some((r) => r.type === 'episode' && r.episode?.content === 'Ich heiße Dora und mag Käsespätzle.'));
    assert.ok(records.some((r) => r.type === 'memory' && r.memory?.value === '朵拉会说中文和德语。'));

    const purged = await c.deleteScope(ns);
    assert.equal(purged.episodes, 1);
    assert.equal(purged.memories, before.length);
    assert.equal((await c.listMemories(ns)).memories.length, 0);

    const imported = await c.import(ns, records);
    assert.equal(imported.episodes, 1);
    assert.equal(imported.memories, before.length);
    assert.deepEqual((await c.listMemories(ns)).memories.map((m) => m.value).sort(), before);

    let streamed = 0;
    for await (const r of c.exportRecords(ns)) if (r.type === 'memory') streamed++;
    assert.equal(streamed, before.length);
    for await (const r of c.exportRecords(ns)) {
      assert.ok(r.type);
      break;
    }

    await rejects(c.import(ns, [{ type: 'bogus' } as never]), 400, 'invalid', 'type');
  });

  test('audit names the actor, German and Chinese included', async () => {
    const ns = { ...ann, session: 'audit' };
    const actor = 'Jürgen 王';
    await c.addMemories({ namespace: ns, memories: [{ kind: 'semantic', value: 'x' }] }, { actor });
    const page = await c.audit({ ...ns, limit: 5 });
    assert.ok(page.entries.length > 0);
    assert.equal(page.entries[0]?.actor, actor);
  });

  test('listScopes lists the tenant of the key with counts, German and Chinese users included', async () => {
    for (const user of ['scopes-Jürgen', 'scopes-王芳']) {
      await c.addMemories({ namespace: { ...ann, user }, memories: [{ kind: 'semantic', value: 'Grüße 你好' }, { kind: 'semantic', value: 'zwei' }] });
    }
    const res = await c.listScopes();
    assert.deepEqual([res.tenant.org, res.tenant.project], ['acme', 'app']);
    const mine = res.scopes.filter((s) => s.namespace.user?.startsWith('scopes-'));
    assert.deepEqual(mine.map((s) => [s.namespace.user, s.memories]), [['scopes-Jürgen', 2], ['scopes-王芳', 2]]);
    assert.ok(Date.parse(mine[0]!.last_activity) > 0);
    await rejects(c.listScopes({ org: 'globex' }), 403, 'forbidden', 'org');
  });

  test('embeddings', async () => {
    const out = await c.embeddings({ input: ['Grüße', '你好'], encoding_format: 'float' });
    assert.equal(out.data.length, 2);
    assert.ok(Array.isArray(out.data[0]?.embedding) && out.data[0].embedding.length > 0);
  });

  test('a key bound to user ann reads ann and not bob', async () => {
    const mine = await c.addMemories({ namespace: ann, memories: [{ kind: 'semantic', value: 'Anns Geheimnis' }] });
    const bobs = await c.addMemories({ namespace: bob, memories: [{ kind: 'semantic', value: '鲍勃的秘密' }] });
    const bobID = bobs.memories[0]!.id;

    const created = await c.createKey({ namespace: ann, role: 'write', name: 'ann-app' });
    assert.equal(created.key.user, 'ann');
    const ac = new EngramClient({ baseUrl: e.url, apiKey: created.secret });

    assert.equal((await ac.getMemory(mine.memories[0]!.id, ann)).value, 'Anns Geheimnis');
    await rejects(ac.getMemory(bobID, bob), 403, 'forbidden', 'user');
    await rejects(ac.getMemory(bobID, ann), 404, 'not_found');
    await rejects(ac.listMemories(bob), 403, 'forbidden');
    await rejects(ac.search({ scope: bob, query: '秘密' }), 403, 'forbidden');
    const found = await ac.search({ scope: ann, query: '秘密 Geheimnis' });
    assert.ok(found.hits.every((h) => h.memory.namespace.user === 'ann'));
    await rejects(ac.createKey({ namespace: ann, role: 'admin' }), 403, 'forbidden');

    const keys = await c.listKeys({ org: 'acme', project: 'app', user: 'ann' });
    assert.ok(keys.keys.some((k) => k.id === created.key.id));
    await c.revokeKey(created.key.id, { org: 'acme', project: 'app', user: 'ann' });
    const err = await rejects(ac.getMemory(mine.memories[0]!.id, ann), 401, 'unauthorized');
    assert.equal(err.retryAfter, undefined);
  });

  test('entity graph: list, page, get, graph around an entity, delete, in German too', async () => {
    const me = { org: 'acme', project: 'app', user: 'graph-ts' };
    const mem = await c.addMemories({
      namespace: me,
      memories: [
        { kind: 'episodic', value: 'Ann moved to Porto with Bob' },
        { kind: 'semantic', value: 'Bob und Jürgen wohnen zusammen' },
      ],
    });
    const [portoMem, germanMem] = mem.memories.map((m) => m.id);
    const all: Entity[] = [];
    for await (const page of c.pages('listEntities', { ...me, limit: 1 })) {
      assert.ok(page.entities.length <= 1);
      all.push(...page.entities);
    }
    const byName = new Map(all.map((en) => [en.name, en]));
    const bob = byName.get('Bob');
    const porto = byName.get('Porto');
    const jurgen = byName.get('Jürgen');
    assert.ok(bob && porto && jurgen, `entities: ${[...byName.keys()].join(', ')}`);
    assert.deepEqual(all.map((en) => en.id), (await c.listEntities(me)).entities.map((en) => en.id));
    assert.equal(bob.type, 'person');
    assert.equal(bob.mentions, 2);
    assert.equal(bob.namespace.user, 'graph-ts');
    assert.deepEqual((await c.listEntities({ ...me, type: 'place' })).entities.map((en) => en.name), ['Porto']);
    assert.deepEqual((await c.listEntities({ ...me, prefix: 'JUR' })).entities.map((en) => en.id), [jurgen.id]);

    const d = await c.getEntity(bob.id, me);
    assert.equal(d.entity.id, bob.id);
    assert.deepEqual(new Set(d.memories.map((m) => m.id)), new Set([portoMem, germanMem]));
    assert.deepEqual(new Set(d.timeline.map((t) => t.memory_id)), new Set([portoMem, germanMem]));
    const other = (r: Relation) => (r.source === bob.id ? r.target : r.source);
    assert.deepEqual(new Set(d.relations.map(other)), new Set([porto.id, jurgen.id]));
    const german = d.relations.find((r) => other(r) === jurgen.id)!;
    assert.equal(german.label, 'co_occurs');
    assert.deepEqual(german.evidence.map((ev) => ev.memory_id), [germanMem]);

    const one: Graph = await c.graph({ ...me, entity: porto.id });
    assert.deepEqual(new Set(one.nodes.map((n) => n.id)), new Set([porto.id, bob.id]));
    assert.equal(one.edges.length, 1);
    const two = await c.graph({ ...me, entity: porto.id, hops: 2 });
    assert.deepEqual(new Set(two.nodes.map((n) => n.id)), new Set([porto.id, bob.id, jurgen.id]));
    assert.equal(two.edges.length, 2);
    assert.equal((await c.graph({ ...me, limit: 1 })).edges.length, 1);
    await rejects(c.graph({ ...me, entity: porto.id, hops: 3 }), 400, 'invalid', 'hops');
    await rejects(c.getEntity('01HZY3V7Q8X2M4N6P800000007', me), 404, 'not_found');

    await c.deleteEntity(jurgen.id, me);
    await rejects(c.getEntity(jurgen.id, me), 404, 'not_found');
    await rejects(c.deleteEntity(jurgen.id, me), 404, 'not_found');
    assert.ok(!(await c.listEntities(me)).entities.some((en) => en.id === jurgen.id));
    assert.deepEqual((await c.getEntity(bob.id, me)).relations.map(other), [porto.id]);
    assert.equal((await c.getMemory(germanMem!, me)).value, 'Bob und Jürgen wohnen zusammen');
  });

  test('entity split, merge and history', async () => {
    const me = { org: 'acme', project: 'app', user: 'graph-ts-edit' };
    const mem = await c.addMemories({
      namespace: me,
      memories: [
        { kind: 'episodic', value: 'Ann moved to Porto with Bob' },
        { kind: 'semantic', value: 'Bob und Jürgen wohnen zusammen' },
      ],
    });
    const germanMem = mem.memories[1]!.id;
    const bob = (await c.listEntities(me)).entities.find((en) => en.name === 'Bob')!;
    await rejects(c.splitEntity(bob.id, me, { name: 'Robert', memories: [] }), 400, 'invalid', 'memories');
    const robert = await c.splitEntity(bob.id, me, { name: 'Robert', memories: [germanMem] });
    assert.equal(robert.mentions, 1);
    await rejects(c.mergeEntities(bob.id, me, { from: [bob.id] }), 400, 'invalid', 'from');
    const merged = await c.mergeEntities(bob.id, me, { from: [robert.id] });
    assert.equal(merged.mentions, 2);
    assert.ok(merged.aliases?.includes('Robert'));
    await rejects(c.getEntity(robert.id, me), 404, 'not_found');
    const h = await c.entityHistory(robert.id, me);
    assert.deepEqual(h.versions.map((v) => v.op), ['split', 'merged']);
    assert.deepEqual(h.versions[1]!.related, [bob.id]);
  });

  test('communities: refresh, list, get, and graph nodes carry theirs', async () => {
    const me = { org: 'acme', project: 'app', user: 'communities-ts' };
    await c.addMemories({
      namespace: me,
      memories: [
        { kind: 'episodic', value: 'Ann moved to Porto with Bob' },
        { kind: 'semantic', value: 'Bob und Ann wohnen in Porto zusammen' },
      ],
    });
    const res: RefreshResult = await c.refreshCommunities(me, { full: true });
    assert.equal(res.full, true);
    assert.equal(res.written, 1);
    const again = await c.refreshCommunities(me);
    assert.deepEqual([again.dirty, again.written, again.total], [0, 0, 1]);
    const [cm] = (await c.listCommunities(me)).communities;
    assert.ok(cm && cm.names.includes('Bob') && cm.summary.includes('Porto'), JSON.stringify(cm));
    const d = await c.getCommunity(cm.id, me);
    assert.deepEqual(d.entities.map((en) => en.id).sort(), cm.members);
    for (const n of (await c.graph(me)).nodes) assert.equal(n.community, cm.id);
    await rejects(c.getCommunity(cm.id, { ...me, user: 'communities-nobody' }), 404, 'not_found');
    await rejects(c.refreshCommunities({ ...me, session: 's1' }), 400, 'invalid');
  });

  test('a key bound to user ann sees none of bob\'s entities', async () => {
    const annG = { org: 'acme', project: 'app', user: 'graph-ann' };
    const bobG = { org: 'acme', project: 'app', user: 'graph-bob' };
    await c.addMemories({ namespace: annG, memories: [{ kind: 'episodic', value: 'Ann moved to Porto with Bob' }] });
    await c.addMemories({ namespace: bobG, memories: [{ kind: 'episodic', value: 'Bob met Carla in Lisbon' }] });
    const bobs = (await c.listEntities(bobG)).entities;
    const carla = bobs.find((en) => en.name === 'Carla');
    assert.ok(carla, `bob's entities: ${bobs.map((en) => en.name).join(', ')}`);
    const bobIDs = new Set(bobs.map((en) => en.id));

    const created = await c.createKey({ namespace: annG, role: 'write' });
    const ac = new EngramClient({ baseUrl: e.url, apiKey: created.secret });
    const mine = (await ac.listEntities(annG)).entities;
    assert.ok(mine.length > 0);
    assert.ok(!mine.some((en) => bobIDs.has(en.id)));
    assert.ok(!(await ac.graph(annG)).nodes.some((n) => bobIDs.has(n.id)));
    await rejects(ac.listEntities(bobG), 403, 'forbidden');
    await rejects(ac.getEntity(carla.id, bobG), 403, 'forbidden');
    await rejects(ac.getEntity(carla.id, annG), 404, 'not_found');
    await rejects(ac.graph(bobG), 403, 'forbidden');
    await rejects(ac.graph({ ...annG, entity: carla.id }), 404, 'not_found');
    await rejects(ac.deleteEntity(carla.id, bobG), 403, 'forbidden');
    await rejects(ac.deleteEntity(carla.id, annG), 404, 'not_found');
    assert.equal((await c.getEntity(carla.id, bobG)).entity.name, 'Carla');
  });

  test('bad input: EngramError with code invalid naming the field, nothing stored', async () => {
    const ns = { ...ann, session: 'bad' };
    await rejects(
      c.addMemories({ namespace: ns, memories: [{ kind: 'semantic', value: 'gut' }, { kind: 'bogus' as never, value: 'schlecht' }] }),
      400, 'invalid', 'kind', 'bogus',
    );
    assert.equal((await c.listMemories(ns)).memories.length, 0);
    await rejects(c.addMemories({ namespace: ns, memories: [{ kind: 'semantic', value: '' }] }), 400, 'invalid', 'value');
    await rejects(c.listMemories({ ...ns, limit: -1 }), 400, 'invalid', 'limit');
    await rejects(c.queryMemories({ scope: ns, filter: { kinds: ['bogus' as never] } }), 400, 'invalid', 'kind', 'bogus');
    await rejects(c.listMemories({ ...ns, created_after: 'gestern' }), 400, 'invalid', 'created_after');
    await rejects(c.rollbackMemory('nope/..', ns, { version: 1 }), 400, 'invalid', 'id');
    await rejects(c.rollbackMemory('01M8SJK0VF6PFCVJN6X5ZWDRBT', ns, { version: 1 }), 404, 'not_found');
    await rejects(c.addMemories({ namespace: ns, memories: [{ kind: 'semantic', value: 'x' }] }, { actor: 'a\u0007b' }), 0, 'invalid', 'X-Engram-Actor');
    await rejects(c.addMemories({ namespace: ns, memories: [{ kind: 'semantic', value: 'x' }] }, { actor: 'ä'.repeat(200) }), 400, 'invalid', 'X-Engram-Actor');
    assert.equal((await c.listMemories(ns)).memories.length, 0);
  });

  test('no key: unauthorized', async () => {
    const anon = new EngramClient({ baseUrl: e.url });
    await rejects(anon.listMemories(ann), 401, 'unauthorized');
  });
});

describe('EngramClient transport', () => {
  test('429 carries retryAfter', async () => {
    const e = await startEngram(['--rate-limit', '0.5', '--rate-burst', '1']);
    try {
      const c = new EngramClient({ baseUrl: e.url, apiKey: e.key });
      let err: EngramError | undefined;
      for (let i = 0; i < 5 && !err; i++) {
        try {
          await c.listMemories(ann);
        } catch (x) {
          if (x instanceof EngramError && x.status === 429) err = x;
          else throw x;
        }
      }
      assert.ok(err, 'no 429 after 5 quick requests');
      assert.equal(err.code, 'too_many_requests');
      assert.ok(typeof err.retryAfter === 'number' && err.retryAfter >= 1, `retryAfter = ${err.retryAfter}`);
    } finally {
      await e.stop();
    }
  });

  test('a timeout and an unreachable server are unavailable; the caller\'s abort is its own', async () => {
    const { createServer } = await import('node:http');
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const addr = silent.address();
    assert.ok(addr && typeof addr === 'object');
    const url = `http://127.0.0.1:${addr.port}`;
    try {
      const c = new EngramClient({ baseUrl: url, timeoutMs: 200 });
      const started = Date.now();
      await rejects(c.health(), 0, 'unavailable', 'within 200 ms');
      assert.ok(Date.now() - started < 5000);

      const ctrl = new AbortController();
      const reason = new Error('stop');
      setTimeout(() => ctrl.abort(reason), 50);
      await assert.rejects(c.health({ signal: ctrl.signal, timeoutMs: 0 }), (err) => err === reason);
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
    const gone = new EngramClient({ baseUrl: url });
    const refused = await rejects(gone.health(), 0, 'unavailable', url);
    assert.ok(refused.cause, 'the fetch error is kept as the cause');
  });

  test('an answer not in the error shape gets its code from the status', async () => {
    const { createServer } = await import('node:http');
    const proxy = createServer((_req, res) => {
      res.writeHead(502, { 'Content-Type': 'text/html' }).end('<h1>Bad Gateway</h1>');
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const addr = proxy.address();
    assert.ok(addr && typeof addr === 'object');
    try {
      const c = new EngramClient({ baseUrl: `http://127.0.0.1:${addr.port}` });
      await rejects(c.ready(), 502, 'unavailable', 'Bad Gateway');
    } finally {
      await new Promise((r) => proxy.close(r));
    }
  });

  test('a baseUrl that is not http(s) is refused', () => {
    assert.throws(() => new EngramClient({ baseUrl: 'ftp://x' }), (err) => err instanceof EngramError && err.code === 'invalid');
    assert.throws(() => new EngramClient({ baseUrl: 'nicht eine URL' }), (err) => err instanceof EngramError && err.code === 'invalid');
  });
});

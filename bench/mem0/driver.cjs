'use strict';
// Side-by-side driver: ingests LoCoMo into engram (over its REST API) and
// into Mem0's open-source TypeScript Memory (an in-process library call),
// asks every category 1-4 question of both, scores evidence-turn recall@10
// the same way for both, and times every call with the same clock. run.sh
// builds and starts the engram servers and preloads guard.cjs; see
// README.md in this folder for what is measured and why.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { performance } = require('node:perf_hooks');

// ---------------------------------------------------------------- options

function usage(msg) {
  if (msg) process.stderr.write(`driver: ${msg}\n`);
  process.stderr.write(`usage: node --require ./guard.cjs driver.cjs --engram URL --embed URL --probe URL --data FILE --out DIR --tmp DIR
  [--conversations N] [--scale-namespaces N] [--scale-questions N] [--probe-turns N] [--smoke]\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = { conversations: 0, scaleNamespaces: 10, scaleQuestions: 200, probeTurns: 300, smoke: false };
  const names = {
    '--engram': 'engram', '--embed': 'embed', '--probe': 'probe', '--data': 'data', '--out': 'out', '--tmp': 'tmp',
    '--conversations': 'conversations', '--scale-namespaces': 'scaleNamespaces', '--scale-questions': 'scaleQuestions',
    '--probe-turns': 'probeTurns',
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--smoke') { o.smoke = true; continue; }
    const key = names[a];
    if (!key) usage(`unknown argument ${a}`);
    if (i + 1 >= argv.length) usage(`${a} needs a value`);
    const v = argv[++i];
    if (typeof o[key] === 'number') {
      if (!/^\d+$/.test(v)) usage(`${a} takes a non-negative integer, got ${v}`);
      o[key] = Number(v);
    } else {
      o[key] = v;
    }
  }
  for (const k of ['engram', 'embed', 'probe', 'data', 'out', 'tmp']) if (!o[k]) usage(`--${k} is required`);
  return o;
}

const opts = parseArgs(process.argv.slice(2));
const guard = globalThis.__netGuard;
if (!guard) usage('guard.cjs is not preloaded: run with node --require ./guard.cjs');

// Mem0 reads these when its module loads, so they are set before require.
process.env.MEM0_TELEMETRY = 'false';
process.env.MEM0_DIR = path.join(opts.tmp, 'mem0-home');
fs.mkdirSync(process.env.MEM0_DIR, { recursive: true });

function log(msg) {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
}

// ---------------------------------------------------------------- LoCoMo
// Parsed the way engram's eval harness parses it (eval/data.go): sessions
// in number order, a turn's content is its text plus " [shares a photo:
// CAPTION]" when it has one, empty turns skipped, event time = session
// time + i seconds, evidence ids recovered from malformed strings and
// dropped when they name no turn.

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

function parseLocomoTime(s) {
  const m = /^(\d{1,2}):(\d{2}) (am|pm) on (\d{1,2}) (\w+), (\d{4})$/.exec(String(s).trim());
  if (!m || !MONTHS.includes(m[5])) throw new Error(`session date ${JSON.stringify(s)} is not like "1:56 pm on 8 May, 2023"`);
  let h = Number(m[1]) % 12;
  if (m[3] === 'pm') h += 12;
  return Date.UTC(Number(m[6]), MONTHS.indexOf(m[5]), Number(m[4]), h, Number(m[2]));
}

function loadLocomo(file, limit) {
  const raw = fs.readFileSync(file);
  const sha256 = crypto.createHash('sha256').update(raw).digest('hex');
  let samples = JSON.parse(raw.toString('utf8'));
  if (!Array.isArray(samples) || samples.length === 0) throw new Error(`${file} is not a non-empty JSON array`);
  if (limit > 0) samples = samples.slice(0, limit);
  const convs = [];
  for (const s of samples) {
    const c = s.conversation;
    const nums = Object.keys(c).map((k) => /^session_(\d+)$/.exec(k)).filter(Boolean).map((m) => Number(m[1])).sort((a, b) => a - b);
    const sessions = [];
    const known = new Set();
    for (const n of nums) {
      const at = parseLocomoTime(c[`session_${n}_date_time`]);
      const turns = [];
      c[`session_${n}`].forEach((t, i) => {
        let content = t.text || '';
        if (t.blip_caption) content = `${content} [shares a photo: ${t.blip_caption}]`.trim();
        if (content.trim() === '') return;
        if (!t.dia_id || known.has(t.dia_id)) throw new Error(`${s.sample_id} session ${n} turn ${i}: missing or repeated dia_id`);
        known.add(t.dia_id);
        turns.push({ key: t.dia_id, speaker: t.speaker, content, at: new Date(at + i * 1000).toISOString(), session: n });
      });
      if (turns.length) sessions.push({ n, turns });
    }
    const questions = [];
    s.qa.forEach((qa, i) => {
      if (!(qa.category >= 1 && qa.category <= 4)) return;
      const ev = [];
      for (const e of qa.evidence || []) {
        for (const m of String(e).matchAll(/D(\d+):(\d+)/g)) {
          const id = `D${Number(m[1])}:${Number(m[2])}`;
          if (known.has(id) && !ev.includes(id)) ev.push(id);
        }
      }
      questions.push({ id: `${s.sample_id}#q${i + 1}`, conv: s.sample_id, text: qa.question, category: qa.category, evidence: ev });
    });
    convs.push({ id: s.sample_id, sessions, questions, turns: sessions.reduce((n, x) => n + x.turns.length, 0) });
  }
  return { sha256, convs };
}

// ---------------------------------------------------------------- stats

function percentile(xs, p) {
  if (xs.length === 0) return null;
  const s = xs.slice().sort((a, b) => a - b);
  const r = p * (s.length - 1);
  const lo = Math.floor(r);
  const hi = Math.ceil(r);
  return s[lo] + (s[hi] - s[lo]) * (r - lo);
}

function latency(xs) {
  return { p50: round(percentile(xs, 0.5)), p95: round(percentile(xs, 0.95)), p99: round(percentile(xs, 0.99)), mean: round(xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1)), n: xs.length };
}

function round(x, d = 3) {
  if (x === null || x === undefined || !Number.isFinite(x)) return x;
  const f = 10 ** d;
  return Math.round(x * f) / f;
}

function ratio(a, b) {
  if (a === null || b === null || a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return null;
  return round(a / b, 4);
}

// recall is the fraction of evidence turns cited by the ranked hits; each
// hit lists the unit keys it cites.
function recall(ranked, evidence) {
  const ev = new Set(evidence);
  const found = new Set();
  for (const units of ranked) for (const u of units) if (ev.has(u)) found.add(u);
  return found.size / ev.size;
}

// ---------------------------------------------------------------- engram over HTTP

const ORG = 'bench';

async function httpJSON(base, method, p, body) {
  const res = await fetch(base + p, {
    method,
    headers: { 'content-type': 'application/json', 'x-engram-actor': 'bench-mem0' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

class Engram {
  constructor(base, project) {
    this.base = base;
    this.project = project;
    this.unitOf = new Map(); // episode id -> unit key
  }

  namespace(user) {
    return { org: ORG, project: this.project, user };
  }

  // addSession stores one session's turns as one batch of episodes, the
  // way the eval harness does (formation sees a turn's neighbours).
  async addSession(user, turns) {
    const body = {
      namespace: this.namespace(user),
      // No labels reach the engine: turns are scored by the episode ids
      // it returns (unitOf), as a client keeps its own references.
      episodes: turns.map((t) => ({ role: 'user', speaker: t.speaker, content: t.content, occurred_at: t.at })),
    };
    const res = await httpJSON(this.base, 'POST', '/v1/episodes', body);
    if (!res.episodes || res.episodes.length !== turns.length) throw new Error(`engram returned ${res.episodes && res.episodes.length} episodes for ${turns.length}`);
    res.episodes.forEach((e, i) => this.unitOf.set(e.id, turns[i].key));
  }

  // drain waits until the user has no background job left open: the
  // embed jobs by which the server embeds after it answered an add. Until
  // then full-text search finds the turns but the dense channel does not.
  async drain(user) {
    const q = `/v1/jobs?org=${ORG}&project=${encodeURIComponent(this.project)}&user=${encodeURIComponent(user)}&state=queued&state=running&state=retrying&limit=1`;
    for (let i = 0; ; i++) {
      const page = await httpJSON(this.base, 'GET', q);
      if (!page.jobs.length) return;
      if (i > 300000) throw new Error(`engram jobs of ${user} still open after ten minutes`);
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  // search asks as a client would at time now (ISO 8601): the time of the
  // latest turn of the conversation, since LoCoMo dates no question.
  async search(user, query, k, now) {
    const res = await httpJSON(this.base, 'POST', '/v1/search', { scope: this.namespace(user), query, k, now });
    return res.hits.map((h) => {
      const units = [];
      for (const src of h.memory.sources || []) {
        const u = this.unitOf.get(src);
        if (u !== undefined && !units.includes(u)) units.push(u);
      }
      return units;
    });
  }
}

// ---------------------------------------------------------------- Mem0 in process

function mem0Text(t) {
  // Mem0 has no speaker field, so the speaker goes into the text, as
  // engram's formation puts it into the indexed abstraction.
  return `${t.speaker}: ${t.content}`;
}

// Mem0 keeps one Memory, with its own SQLite files, per namespace. Its
// "memory" vector store reads and scores every row of its table on every
// search, whatever the user filter, so a store shared by all namespaces
// would make each search pay for every user's rows; one store per
// namespace is Mem0's best case and makes its search cost depend on the
// namespace's size only, as engram's does.
class Mem0 {
  constructor(Memory, root, embedURL, dims) {
    this.Memory = Memory;
    this.root = root;
    this.embedURL = embedURL;
    this.dims = dims;
    this.stores = new Map(); // user -> Memory
    this.rows = new Map(); // user -> rows added
  }

  store(user) {
    let m = this.stores.get(user);
    if (!m) {
      const dir = path.join(this.root, user.replace(/[^A-Za-z0-9_.-]/g, '_'));
      m = new this.Memory(mem0Config(dir, this.embedURL, this.dims));
      this.stores.set(user, m);
      this.rows.set(user, 0);
    }
    return m;
  }

  async add(user, unit, text) {
    const res = await this.store(user).add(text, { userId: user, metadata: { dia_id: unit }, infer: false });
    if (!res.results || res.results.length !== 1) throw new Error(`mem0 add returned ${JSON.stringify(res).slice(0, 200)}`);
    this.rows.set(user, this.rows.get(user) + 1);
  }

  async search(user, query, k) {
    const res = await this.store(user).search(query, { filters: { user_id: user }, topK: k, threshold: 0 });
    return res.results.map((r) => (r.metadata && r.metadata.dia_id !== undefined ? [r.metadata.dia_id] : []));
  }
}

function mem0Config(dir, embedURL, dims) {
  fs.mkdirSync(dir, { recursive: true });
  return {
    version: 'v1.1',
    embedder: { provider: 'openai', config: { apiKey: 'unused-local', baseURL: `${embedURL}/v1`, model: 'use-lite' } },
    vectorStore: { provider: 'memory', config: { collectionName: 'memories', dimension: dims, dbPath: path.join(dir, 'vector_store.db') } },
    // Never called (every add has infer: false); pointed at loopback so
    // a stray call fails loudly instead of leaving the machine.
    llm: { provider: 'openai', config: { apiKey: 'unused-local', baseURL: `${embedURL}/v1`, model: 'none' } },
    historyStore: { provider: 'sqlite', config: { historyDbPath: path.join(dir, 'history.db') } },
  };
}

// ---------------------------------------------------------------- phases

const K = 10;

function newSys() {
  return { addMs: [], addTurns: 0, addTotalMs: 0, drainedTotalMs: 0, searchMs: [], recall: [], byCat: {}, short: 0, uncited: 0, perQ: new Map() };
}

// ingestAll stores every session of every namespace in both systems.
// plan: [{user, sessions: [{turns: [{key, speaker, content, at, session}]}]}]
async function ingestAll(plan, eng, m0, sys, label) {
  let done = 0;
  const total = plan.reduce((n, p) => n + p.sessions.reduce((m, s) => m + s.turns.length, 0), 0);
  let next = 0;
  for (const p of plan) {
    for (const s of p.sessions) {
      // engram answers once the turns are stored and found by full text,
      // and embeds them in the background: the add's time is until the
      // answer, the drained time until its jobs are done too, which this
      // waits for before Mem0 adds, so neither system's work overlaps.
      let t0 = performance.now();
      await eng.addSession(p.user, s.turns);
      let dt = performance.now() - t0;
      await eng.drain(p.user);
      sys.engram.drainedTotalMs += performance.now() - t0;
      sys.engram.addMs.push(dt);
      sys.engram.addTotalMs += dt;
      sys.engram.addTurns += s.turns.length;
      for (const t of s.turns) {
        const text = mem0Text(t);
        t0 = performance.now();
        await m0.add(p.user, t.key, text);
        dt = performance.now() - t0;
        sys.mem0.addMs.push(dt);
        sys.mem0.addTotalMs += dt;
        sys.mem0.drainedTotalMs += dt; // Mem0 embeds before it answers
        sys.mem0.addTurns++;
      }
      done += s.turns.length;
      if (done >= next) {
        log(`${label}: ingested ${done}/${total} turns`);
        next = done + Math.max(500, Math.floor(total / 10));
      }
    }
  }
}

// ask searches each question in both systems, alternating which goes
// first so neither always pays for the other's leftovers (GC, caches).
async function ask(questions, userOf, nowOf, eng, m0, sys, label) {
  // One untimed search per system first: the first call pays for lazy
  // initialisation (Mem0's entity store, the engine's index build).
  const warm = new Set();
  for (const q of questions) {
    const u = userOf(q);
    if (warm.has(u)) continue;
    warm.add(u);
    await eng.search(u, q.text, K, nowOf(q));
    await m0.search(u, q.text, K);
  }
  let i = 0;
  let next = 0;
  for (const q of questions) {
    const u = userOf(q);
    const order = i % 2 === 0 ? ['engram', 'mem0'] : ['mem0', 'engram'];
    for (const name of order) {
      const client = name === 'engram' ? eng : m0;
      const t0 = performance.now();
      const ranked = await client.search(u, q.text, K, nowOf(q));
      const dt = performance.now() - t0;
      const s = sys[name];
      s.searchMs.push(dt);
      if (ranked.length < K) s.short++;
      s.uncited += ranked.filter((units) => units.length === 0).length;
      const top = ranked.slice(0, K);
      let r = null;
      if (q.evidence.length > 0) {
        r = recall(top, q.evidence);
        s.recall.push(r);
        (s.byCat[q.category] ||= []).push(r);
      }
      s.perQ.set(q.id, { recall: r, ms: dt });
    }
    i++;
    if (i >= next) {
      log(`${label}: asked ${i}/${questions.length} questions`);
      next = i + Math.max(100, Math.floor(questions.length / 10));
    }
  }
}

function mean(xs) {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
}

function summarize(s) {
  const byCat = {};
  for (const c of Object.keys(s.byCat).sort()) byCat[c] = { recall_at_10: round(mean(s.byCat[c]), 4), questions: s.byCat[c].length };
  return {
    recall_at_10: round(mean(s.recall), 4),
    scored_questions: s.recall.length,
    by_category: byCat,
    search_latency_ms: latency(s.searchMs),
    add_latency_ms: latency(s.addMs),
    add_calls: s.addMs.length,
    ingest_turns: s.addTurns,
    ingest_turns_per_s: round(s.addTurns / (s.addTotalMs / 1000), 1),
    ingest_turns_per_s_drained: round(s.addTurns / (s.drainedTotalMs / 1000), 1),
    add_ms_per_turn: round(s.addTotalMs / Math.max(s.addTurns, 1), 4),
    lists_shorter_than_k: s.short,
    hits_citing_no_turn: s.uncited,
  };
}

// subsetSummary recomputes recall and latency over the given question ids.
function subsetSummary(s, ids) {
  const rs = [];
  const ms = [];
  for (const id of ids) {
    const v = s.perQ.get(id);
    if (!v) continue;
    ms.push(v.ms);
    if (v.recall !== null) rs.push(v.recall);
  }
  return { recall_at_10: round(mean(rs), 4), scored_questions: rs.length, search_latency_ms: latency(ms) };
}

function ratios(e, m) {
  return {
    recall_at_10: ratio(e.recall_at_10, m.recall_at_10),
    search_p50: ratio(e.search_latency_ms.p50, m.search_latency_ms.p50),
    search_p95: ratio(e.search_latency_ms.p95, m.search_latency_ms.p95),
    ingest_turns_per_s: e.ingest_turns_per_s !== undefined ? ratio(e.ingest_turns_per_s, m.ingest_turns_per_s) : undefined,
    ingest_turns_per_s_drained: e.ingest_turns_per_s_drained !== undefined ? ratio(e.ingest_turns_per_s_drained, m.ingest_turns_per_s_drained) : undefined,
    add_ms_per_turn: e.add_ms_per_turn !== undefined ? ratio(e.add_ms_per_turn, m.add_ms_per_turn) : undefined,
  };
}

// evenly picks n items of xs, spread over the whole list.
function spread(xs, n) {
  if (n <= 0 || n >= xs.length) return xs.slice();
  const out = [];
  for (let i = 0; i < n; i++) out.push(xs[Math.floor((i * xs.length) / n)]);
  return out;
}

// probeSingleTurnAdds times engram adds of one turn per request, on a
// fresh server of its own (so its embedding cache is cold like Mem0's),
// each until the answer and then until its background jobs are done (the
// turn is found by the dense channel too), before the next turn, as an
// agent that adds a turn between model calls does.
async function probeSingleTurnAdds(base, conv, n) {
  const eng = new Engram(base, 'locomo-probe');
  const ms = [];
  const drained = [];
  const turns = conv.sessions.flatMap((s) => s.turns).slice(0, n);
  for (const t of turns) {
    const t0 = performance.now();
    await eng.addSession(conv.id, [t]);
    const t1 = performance.now();
    await eng.drain(conv.id);
    ms.push(t1 - t0);
    drained.push(performance.now() - t0);
  }
  const sum = (xs) => xs.reduce((a, b) => a + b, 0) / 1000;
  return {
    add_latency_ms: latency(ms), until_embedded_ms: latency(drained), turns: turns.length,
    ingest_turns_per_s: round(turns.length / sum(ms), 1), ingest_turns_per_s_drained: round(turns.length / sum(drained), 1),
  };
}

// ---------------------------------------------------------------- main

async function main() {
  const started = Date.now();
  const loadStart = os.loadavg();
  const selfTest = await guard.selfTest();
  if (!selfTest.passed) throw new Error(`network guard self-test failed: ${JSON.stringify(selfTest)}`);
  log(`network guard self-test passed (${selfTest.counted} of ${selfTest.attempts} attempts refused and counted)`);

  const { Memory } = require('mem0ai/oss');
  const pkg = (name) => {
    for (const dir of [path.join(__dirname, 'node_modules'), path.join(__dirname, 'node_modules', 'mem0ai', 'node_modules')]) {
      const f = path.join(dir, name, 'package.json');
      if (fs.existsSync(f)) return JSON.parse(fs.readFileSync(f, 'utf8')).version;
    }
    return null;
  };

  const ds = loadLocomo(opts.data, opts.conversations);
  const nTurns = ds.convs.reduce((n, c) => n + c.turns, 0);
  const questions = ds.convs.flatMap((c) => c.questions);
  log(`LoCoMo: ${ds.convs.length} conversations, ${nTurns} turns, ${questions.length} category 1-4 questions`);

  const probe = await httpJSON(opts.embed, 'POST', '/v1/embeddings', { input: 'dimension probe', model: 'use-lite' });
  const dims = probe.data[0].embedding.length;
  const embedModel = probe.model;

  // 1x: every conversation in its own namespace / user.
  const eng = new Engram(opts.engram, 'locomo');
  const m0 = new Mem0(Memory, path.join(opts.tmp, 'mem0-store'), opts.embed, dims);
  const sys1 = { engram: newSys(), mem0: newSys() };
  const plan1 = ds.convs.map((c) => ({ user: c.id, sessions: c.sessions }));
  await ingestAll(plan1, eng, m0, sys1, '1x');
  const lastAt = new Map(ds.convs.map((c) => [c.id, c.sessions.flatMap((x) => x.turns).reduce((a, t) => (t.at > a ? t.at : a), '')]));
  const latest = [...lastAt.values()].reduce((a, t) => (t > a ? t : a), '');
  await ask(questions, (q) => q.conv, (q) => lastAt.get(q.conv), eng, m0, sys1, '1x');
  const s1 = { engram: summarize(sys1.engram), mem0: summarize(sys1.mem0) };

  // 10x: namespaces holding one conversation plus every other loaded
  // conversation as filler. Filler turns carry keys that no question cites.
  let s10 = null;
  const nScale = Math.min(opts.scaleNamespaces, ds.convs.length);
  if (nScale > 0 && ds.convs.length > 1) {
    const chosen = ds.convs.slice(0, nScale);
    const plan10 = chosen.map((c) => ({
      user: `${c.id}@x`,
      sessions: ds.convs.flatMap((o) => o.sessions.map((s) => ({
        turns: o.id === c.id ? s.turns : s.turns.map((t) => ({ ...t, key: `filler:${o.id}:${t.key}` })),
      }))),
    }));
    const sys10 = { engram: newSys(), mem0: newSys() };
    const plan10Users = new Set(plan10.map((p) => p.user));
    await ingestAll(plan10, eng, m0, sys10, '10x');
    const pool = chosen.flatMap((c) => c.questions.filter((q) => q.evidence.length > 0));
    const asked = spread(pool, opts.scaleQuestions);
    await ask(asked, (q) => `${q.conv}@x`, () => latest, eng, m0, sys10, '10x');
    const ids = asked.map((q) => q.id);
    const nsTurns = plan10.map((p) => p.sessions.reduce((n, s) => n + s.turns.length, 0));
    const e10 = summarize(sys10.engram);
    const m10 = summarize(sys10.mem0);
    const e1sub = subsetSummary(sys1.engram, ids);
    const m1sub = subsetSummary(sys1.mem0, ids);
    s10 = {
      namespaces: plan10.length,
      namespace_turns: { min: Math.min(...nsTurns), max: Math.max(...nsTurns), mean: round(mean(nsTurns), 1) },
      scale_factor: round(mean(nsTurns) / (nTurns / ds.convs.length), 2),
      mem0_store_rows: Math.max(...[...plan10Users].map((u) => m0.rows.get(u))),
      questions_asked: asked.length,
      questions_pool: pool.length,
      systems: { engram: e10, mem0: m10 },
      ratios: ratios(e10, m10),
      same_questions_at_1x: { engram: e1sub, mem0: m1sub },
      growth: {
        engram_search_p50: ratio(e10.search_latency_ms.p50, e1sub.search_latency_ms.p50),
        engram_search_p95: ratio(e10.search_latency_ms.p95, e1sub.search_latency_ms.p95),
        mem0_search_p50: ratio(m10.search_latency_ms.p50, m1sub.search_latency_ms.p50),
        mem0_search_p95: ratio(m10.search_latency_ms.p95, m1sub.search_latency_ms.p95),
      },
    };
  }

  const single = opts.probeTurns > 0 ? await probeSingleTurnAdds(opts.probe, ds.convs[0], opts.probeTurns) : null;

  const perConv = ds.convs.map((c) => c.turns);
  const report = {
    run: {
      date: new Date(started).toISOString(),
      duration_s: round((Date.now() - started) / 1000, 1),
      smoke: opts.smoke,
      command: process.env.BENCH_COMMAND || null,
      data_file: path.basename(opts.data),
      data_sha256: ds.sha256,
      conversations: ds.convs.length,
      turns: nTurns,
      questions_asked: questions.length,
      questions_scored: questions.filter((q) => q.evidence.length > 0).length,
    },
    versions: {
      mem0ai: pkg('mem0ai'),
      'better-sqlite3': pkg('better-sqlite3'),
      openai_sdk: pkg('openai'),
      node: process.version,
      go: process.env.BENCH_GO_VERSION || null,
      engram_commit: process.env.BENCH_ENGRAM_COMMIT || null,
    },
    machine: {
      nproc: Number(process.env.BENCH_NPROC) || os.cpus().length,
      cpu_model: os.cpus()[0] ? os.cpus()[0].model.trim() : null,
      memory_gib: round(os.totalmem() / 2 ** 30, 1),
      os: `${os.type()} ${os.release()} ${os.arch()}`,
      // Other work on the machine skews every figure; this says how much
      // there was (1-minute load average at the start and the end).
      load_average_start: round(loadStart[0], 2),
      load_average_end: round(os.loadavg()[0], 2),
    },
    settings: {
      embedder: `${embedModel}, ${dims} dimensions, served by engram's POST /v1/embeddings to Mem0 (a second engram process with its own data directory and cache) and used in-process by the engram under test`,
      k: K,
      engram: 'POST /v1/search with k=10 and nothing else (default pipeline: all channels, default reranking); episodes added per session with POST /v1/episodes (default formation), speaker and session time as event time, as engram eval does',
      mem0: "Memory from mem0ai/oss; embedder openai with baseURL at engram; vector store 'memory' (SQLite file); history SQLite file; add(text, {userId, metadata: {dia_id}, infer: false}) one call per turn; search(query, {filters: {user_id}, topK: 10, threshold: 0})",
      text: "engram gets speaker and content as separate fields; Mem0 gets 'Speaker: content' (it has no speaker field); content includes ' [shares a photo: CAPTION]' for image turns",
      interfaces: 'engram over HTTP on loopback (one client, keep-alive); Mem0 as an in-process library call (its embedding calls go over HTTP to the embedder engram); every figure timed by the same performance.now() clock in this driver',
      mem0_stores: "one Mem0 Memory (own vector and history SQLite files) per namespace: Mem0's 'memory' store scores every row of its table on each search whatever the user filter, so this is its best case; with all namespaces in one store every search would pay for all of them",
      storage: process.env.BENCH_STORAGE || 'temp directory',
      scale_10x: s10 ? `${s10.namespaces} namespaces, each one conversation plus the other ${ds.convs.length - 1} conversations' turns as filler (filler keys can never be evidence); ${s10.questions_asked} questions spread over those namespaces; engram: same server as 1x (another project); Mem0: a new store per padded namespace` : 'not run',
      env: { MEM0_TELEMETRY: process.env.MEM0_TELEMETRY, MEM0_DIR: 'temp folder' },
    },
    guard: { self_test: selfTest, blocked: guard.blocked, destinations: guard.destinations },
    scale_1x: {
      namespaces: ds.convs.length,
      namespace_turns: { min: Math.min(...perConv), max: Math.max(...perConv), mean: round(mean(perConv), 1) },
      mem0_store_rows: Math.max(...ds.convs.map((c) => m0.rows.get(c.id))),
      systems: s1,
      ratios: ratios(s1.engram, s1.mem0),
    },
    scale_10x: s10,
    engram_single_turn_adds: single,
  };
  return report;
}

// ---------------------------------------------------------------- report

function check(report) {
  const problems = [];
  if (report.guard.blocked !== 0) problems.push(`the network guard refused ${report.guard.blocked} outbound attempts: ${report.guard.destinations.join(', ')}`);
  const scales = [['1x', report.scale_1x]];
  if (report.scale_10x) scales.push(['10x', report.scale_10x]);
  for (const [label, sc] of scales) {
    for (const name of ['engram', 'mem0']) {
      const s = sc.systems[name];
      if (!Number.isFinite(s.recall_at_10)) problems.push(`${label} ${name} recall@10 is ${s.recall_at_10}`);
      // Zero over a whole scale means the hits no longer map to turns.
      else if (s.recall_at_10 === 0) problems.push(`${label} ${name} recall@10 is 0: no hit cited any evidence turn`);
      if (!(s.scored_questions > 0)) problems.push(`${label} ${name} scored no question`);
      if (!(s.search_latency_ms.n > 0) || !Number.isFinite(s.search_latency_ms.p50)) problems.push(`${label} ${name} has no search latency`);
      if (!(s.ingest_turns > 0) || !Number.isFinite(s.ingest_turns_per_s)) problems.push(`${label} ${name} ingested nothing`);
      if (s.hits_citing_no_turn > 0) problems.push(`${label} ${name}: ${s.hits_citing_no_turn} hits cite no stored turn`);
    }
  }
  return problems;
}

function fmt(x, d = 3) {
  if (x === null || x === undefined) return 'n/a';
  if (typeof x !== 'number') return String(x);
  return x.toFixed(d);
}

function markdown(r) {
  const L = [];
  const a = r.scale_1x;
  const e = a.systems.engram;
  const m = a.systems.mem0;
  L.push('# engram vs Mem0 (mem0ai OSS) on LoCoMo, same machine, same embedder', '');
  L.push(`${r.run.date}, ${r.run.smoke ? '**smoke run** (not a result), ' : ''}${r.run.conversations} conversations, ${r.run.turns} turns, ${r.run.questions_asked} category 1-4 questions (${r.run.questions_scored} with evidence). Took ${r.run.duration_s} s.`, '');
  if (r.run.command) L.push(`Command: \`${r.run.command}\``, '');
  L.push(`## 1x: ${a.namespaces} namespaces of ${a.namespace_turns.min}-${a.namespace_turns.max} turns (largest Mem0 store: ${a.mem0_store_rows} rows)`, '');
  L.push('| figure | engram | Mem0 | engram/Mem0 |', '|---|---:|---:|---:|');
  L.push(`| evidence recall@10 | ${fmt(e.recall_at_10)} | ${fmt(m.recall_at_10)} | ${fmt(a.ratios.recall_at_10, 2)} |`);
  for (const c of Object.keys(e.by_category)) {
    const mc = m.by_category[c] || {};
    L.push(`| recall@10, category ${c} (${e.by_category[c].questions} q) | ${fmt(e.by_category[c].recall_at_10)} | ${fmt(mc.recall_at_10)} | ${fmt(ratio(e.by_category[c].recall_at_10, mc.recall_at_10), 2)} |`);
  }
  L.push(`| search latency p50 (ms) | ${fmt(e.search_latency_ms.p50, 2)} | ${fmt(m.search_latency_ms.p50, 2)} | ${fmt(a.ratios.search_p50, 3)} |`);
  L.push(`| search latency p95 (ms) | ${fmt(e.search_latency_ms.p95, 2)} | ${fmt(m.search_latency_ms.p95, 2)} | ${fmt(a.ratios.search_p95, 3)} |`);
  L.push(`| ingest throughput, until answered (turns/s) | ${fmt(e.ingest_turns_per_s, 1)} | ${fmt(m.ingest_turns_per_s, 1)} | ${fmt(a.ratios.ingest_turns_per_s, 2)} |`);
  L.push(`| ingest throughput, until embedded too (turns/s) | ${fmt(e.ingest_turns_per_s_drained, 1)} | ${fmt(m.ingest_turns_per_s_drained, 1)} | ${fmt(a.ratios.ingest_turns_per_s_drained, 2)} |`);
  L.push(`| add time per turn (ms) | ${fmt(e.add_ms_per_turn, 3)} | ${fmt(m.add_ms_per_turn, 3)} | ${fmt(a.ratios.add_ms_per_turn, 3)} |`);
  L.push(`| add call latency p50 / p95 (ms) | ${fmt(e.add_latency_ms.p50, 2)} / ${fmt(e.add_latency_ms.p95, 2)} (one session, ${fmt(e.ingest_turns / e.add_calls, 1)} turns avg) | ${fmt(m.add_latency_ms.p50, 2)} / ${fmt(m.add_latency_ms.p95, 2)} (one turn) | not comparable |`);
  if (r.engram_single_turn_adds) {
    const p = r.engram_single_turn_adds;
    L.push(`| add latency p50 / p95, one turn per call (ms) | ${fmt(p.add_latency_ms.p50, 2)} / ${fmt(p.add_latency_ms.p95, 2)} (${p.turns} calls, own server) | ${fmt(m.add_latency_ms.p50, 2)} / ${fmt(m.add_latency_ms.p95, 2)} | ${fmt(ratio(p.add_latency_ms.p50, m.add_latency_ms.p50), 3)} / ${fmt(ratio(p.add_latency_ms.p95, m.add_latency_ms.p95), 3)} |`);
    L.push(`| one turn per call, until embedded too, p50 / p95 (ms) | ${fmt(p.until_embedded_ms.p50, 2)} / ${fmt(p.until_embedded_ms.p95, 2)} | ${fmt(m.add_latency_ms.p50, 2)} / ${fmt(m.add_latency_ms.p95, 2)} | ${fmt(ratio(p.until_embedded_ms.p50, m.add_latency_ms.p50), 3)} / ${fmt(ratio(p.until_embedded_ms.p95, m.add_latency_ms.p95), 3)} |`);
  }
  L.push(`| result lists shorter than 10 | ${e.lists_shorter_than_k} | ${m.lists_shorter_than_k} | |`, '');
  L.push('engram\'s add embeds two texts per turn (the memory\'s abstraction, which carries the speaker and the neighbouring turns, and its value) and indexes them for full-text search; Mem0\'s embeds one. An engram add call carries a session, a Mem0 add call one turn. engram answers an add once the turns are stored and found by full text, and embeds them in background jobs; "until embedded too" counts those jobs (the driver waits for them after each engram add, before anything else runs). Mem0 embeds before it answers, so both of its rows are the same figure.', '');
  const x = r.scale_10x;
  if (x) {
    const e10 = x.systems.engram;
    const m10 = x.systems.mem0;
    const e1 = x.same_questions_at_1x.engram;
    const m1 = x.same_questions_at_1x.mem0;
    L.push(`## 10x: ${x.namespaces} namespaces of ${x.namespace_turns.min}-${x.namespace_turns.max} turns (x${x.scale_factor}; largest Mem0 store: ${x.mem0_store_rows} rows)`, '');
    L.push(`${x.questions_asked} questions (of ${x.questions_pool}) spread over the padded namespaces; the 1x columns are the same questions at 1x.`, '');
    L.push('| figure | engram 1x | engram 10x | Mem0 1x | Mem0 10x | engram/Mem0 at 10x |', '|---|---:|---:|---:|---:|---:|');
    L.push(`| evidence recall@10 | ${fmt(e1.recall_at_10)} | ${fmt(e10.recall_at_10)} | ${fmt(m1.recall_at_10)} | ${fmt(m10.recall_at_10)} | ${fmt(x.ratios.recall_at_10, 2)} |`);
    L.push(`| search latency p50 (ms) | ${fmt(e1.search_latency_ms.p50, 2)} | ${fmt(e10.search_latency_ms.p50, 2)} | ${fmt(m1.search_latency_ms.p50, 2)} | ${fmt(m10.search_latency_ms.p50, 2)} | ${fmt(x.ratios.search_p50, 4)} |`);
    L.push(`| search latency p95 (ms) | ${fmt(e1.search_latency_ms.p95, 2)} | ${fmt(e10.search_latency_ms.p95, 2)} | ${fmt(m1.search_latency_ms.p95, 2)} | ${fmt(m10.search_latency_ms.p95, 2)} | ${fmt(x.ratios.search_p95, 4)} |`);
    L.push(`| search p50 growth 10x/1x | | ${fmt(x.growth.engram_search_p50, 2)} | | ${fmt(x.growth.mem0_search_p50, 2)} | |`);
    L.push(`| ingest throughput at 10x, until answered (turns/s) | | ${fmt(e10.ingest_turns_per_s, 1)} | | ${fmt(m10.ingest_turns_per_s, 1)} | ${fmt(x.ratios.ingest_turns_per_s, 2)} |`);
    L.push(`| ingest throughput at 10x, until embedded too (turns/s) | | ${fmt(e10.ingest_turns_per_s_drained, 1)} | | ${fmt(m10.ingest_turns_per_s_drained, 1)} | ${fmt(x.ratios.ingest_turns_per_s_drained, 2)} |`, '');
    L.push('All filler text was already embedded at 1x, so both systems\' embedding caches answer during the 10x ingest: that throughput is not a cold-embedding figure.', '');
  } else {
    L.push('## 10x: not run', '');
  }
  L.push('## Versions, machine, settings', '');
  L.push(`- versions: ${Object.entries(r.versions).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  L.push(`- machine: ${r.machine.nproc} cores, ${r.machine.cpu_model}, ${r.machine.memory_gib} GiB, ${r.machine.os}; load average ${r.machine.load_average_start} at the start, ${r.machine.load_average_end} at the end`);
  for (const [k, v] of Object.entries(r.settings)) if (typeof v === 'string') L.push(`- ${k}: ${v}`);
  L.push(`- Mem0 environment: MEM0_TELEMETRY=${r.settings.env.MEM0_TELEMETRY}, MEM0_DIR in a temp folder`);
  L.push(`- network guard: self-test ${r.guard.self_test.passed ? 'passed' : 'FAILED'} (${r.guard.self_test.counted}/${r.guard.self_test.attempts} refused); outbound attempts during the run: **${r.guard.blocked}**`);
  L.push(`- data: ${r.run.data_file} sha256 ${r.run.data_sha256}`);
  L.push('- recall@10: fraction of a question\'s evidence turns (dia_id) cited by the top 10 hits, averaged over questions with evidence; an engram hit cites the turns of its source episodes, a Mem0 hit the dia_id in its metadata.');
  return L.join('\n') + '\n';
}

main().then((report) => {
  const problems = check(report);
  report.problems = problems;
  fs.mkdirSync(opts.out, { recursive: true });
  fs.writeFileSync(path.join(opts.out, 'report.json'), JSON.stringify(report, null, 2) + '\n');
  fs.writeFileSync(path.join(opts.out, 'report.md'), markdown(report));
  log(`wrote ${path.join(opts.out, 'report.md')} and report.json`);
  if (problems.length) {
    for (const p of problems) process.stderr.write(`driver: FAIL: ${p}\n`);
    process.exit(1);
  }
  // Mem0 keeps SQLite handles open; nothing else is pending.
  process.exit(0);
}, (err) => {
  process.stderr.write(`driver: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});

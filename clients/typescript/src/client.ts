import type { components, operations } from './schema.js';
import { EngramError, errorFromResponse } from './errors.js';

type Schemas = components['schemas'];
type Op = keyof operations;

/** The query parameters of an operation of the OpenAPI document. */
export type QueryOf<O extends Op> = NonNullable<operations[O]['parameters']['query']>;

/** The JSON body an operation answers with the status S. */
export type Ok<O extends Op, S extends keyof operations[O]['responses'] = 200 & keyof operations[O]['responses']> =
  operations[O]['responses'][S] extends { content: { 'application/json': infer T } } ? T : never;

/** The JSON request body of an operation. */
export type BodyOf<O extends Op> =
  NonNullable<operations[O]['requestBody']> extends { content: { 'application/json': infer B } } ? B : never;

/** A metadata value in a query: numbers and booleans keep their type. */
export type MetaValue = string | number | boolean | null;

/**
 * Query parameters as a method takes them: the document's "meta.{key}"
 * family becomes meta: {key: value}, and "meta_in.{key}" becomes
 * meta_in: {key: [values]}.
 */
export type Params<Q> = Omit<Q, 'meta.{key}' | 'meta_in.{key}'> &
  ('meta.{key}' extends keyof Q ? { meta?: Record<string, MetaValue> } : unknown) &
  ('meta_in.{key}' extends keyof Q ? { meta_in?: Record<string, MetaValue[]> } : unknown);

/** The scope of a read or a write: org and project, optionally user, agent, session. */
export type Scope = Schemas['Scope'];

/**
 * A memory to add: kind and value are required; the server sets id (unless
 * given), namespace, status, version, times and counters.
 */
export type MemoryInput = Pick<Schemas['Memory'], 'kind' | 'value'> &
  Partial<Omit<Schemas['Memory'], 'kind' | 'value' | 'namespace'>>;

/** The body of addMemories. */
export type AddMemoriesInput = Omit<Schemas['AddMemoriesRequest'], 'memories'> & { memories: MemoryInput[] };

/** The body of supersedeMemory. */
export type SupersedeInput = Omit<Schemas['SupersedeRequest'], 'new'> & { new: MemoryInput };

/** Options of one call. */
export interface CallOptions {
  /** Ends the call; its reason is then thrown as it is. */
  signal?: AbortSignal;
  /** Sent as X-Engram-Actor instead of the client's actor. */
  actor?: string;
  /** Bounds this call in milliseconds instead of the client's timeout; 0 for none. */
  timeoutMs?: number;
}

/** Options of an EngramClient. */
export interface ClientOptions {
  /** The server, e.g. "http://localhost:7070". */
  baseUrl: string;
  /** Sent as "Authorization: Bearer KEY"; none without it (a server run with --no-auth). */
  apiKey?: string;
  /** Sent as the X-Engram-Actor header so that writes are attributed to it. */
  actor?: string;
  /** Bounds each call except export and import, in milliseconds; 30000 when absent, 0 for none. */
  timeoutMs?: number;
  /** The fetch to use; the global one when absent. */
  fetch?: typeof fetch;
}

/** The bound of a call when the client is given none. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** The list methods that page with cursor and next. */
export type PagedMethod = 'listEpisodes' | 'listMemories' | 'listJobs' | 'listResources' | 'audit' | 'listEntities';


const actorHeader = 'X-Engram-Actor';
const ndjson = 'application/x-ndjson';

interface Request {
  query?: object;
  json?: unknown;
  body?: string;
  /** A multipart form; fetch sets its Content-Type with the boundary. */
  form?: FormData;
  contentType?: string;
  /** Export and import run as long as they need unless the call sets a timeout. */
  unbounded?: boolean;
}

/**
 * A client of engram's REST API over fetch, for Node 20+ and browsers.
 * Every method answers with the JSON body the server sends, typed by the
 * OpenAPI document (src/schema.ts is generated from http/openapi.json), and
 * throws an EngramError when the server answers with an error, cannot be
 * reached or does not answer in time.
 */
export class EngramClient {
  readonly baseUrl: string;
  readonly #apiKey: string | undefined;
  readonly #actor: string | undefined;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  /** Throws an EngramError (code invalid) when baseUrl is not an http(s) URL. */
  constructor(options: ClientOptions) {
    const base = options.baseUrl.replace(/\/+$/, '');
    let u: URL;
    try {
      u = new URL(base);
    } catch {
      throw new EngramError(0, 'invalid', `baseUrl ${JSON.stringify(options.baseUrl)} is not a URL`);
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.host === '') {
      throw new EngramError(0, 'invalid', `baseUrl ${JSON.stringify(options.baseUrl)} must be http:// or https:// and name a host`);
    }
    this.baseUrl = base;
    this.#apiKey = options.apiKey || undefined;
    this.#actor = options.actor || undefined;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  // --- health ---

  /** GET /healthz: {status} while the process serves. */
  health(opts?: CallOptions): Promise<Ok<'health'>> {
    return this.#json('GET', '/healthz', {}, opts);
  }

  /** GET /readyz: {status: "ready"}, or an EngramError (503, unavailable) naming why not. */
  ready(opts?: CallOptions): Promise<Ok<'ready'>> {
    return this.#json('GET', '/readyz', {}, opts);
  }

  // --- episodes ---

  /** POST /v1/episodes: stores turns and forms memories from them (a job when async). */
  addEpisodes(req: BodyOf<'addEpisodes'>, opts?: CallOptions): Promise<Ok<'addEpisodes', 201>> {
    return this.#json('POST', '/v1/episodes', { json: req }, opts);
  }

  /** GET /v1/episodes: one page of a scope's episodes; page on with cursor = page.next. */
  listEpisodes(query: Params<QueryOf<'listEpisodes'>>, opts?: CallOptions): Promise<Ok<'listEpisodes'>> {
    return this.#json('GET', '/v1/episodes', { query }, opts);
  }

  /** GET /v1/episodes/{id}; not_found for an id outside the scope. */
  getEpisode(id: string, scope: QueryOf<'getEpisode'>, opts?: CallOptions): Promise<Ok<'getEpisode'>> {
    return this.#json('GET', `/v1/episodes/${seg(id)}`, { query: scope }, opts);
  }

  /** DELETE /v1/episodes/{id}. */
  async deleteEpisode(id: string, scope: QueryOf<'deleteEpisode'>, opts?: CallOptions): Promise<void> {
    await this.#json('DELETE', `/v1/episodes/${seg(id)}`, { query: scope }, opts);
  }

  // --- memories ---

  /** POST /v1/memories: stores memories as given, in one transaction. */
  addMemories(req: AddMemoriesInput, opts?: CallOptions): Promise<Ok<'addMemories', 201>> {
    return this.#json('POST', '/v1/memories', { json: req }, opts);
  }

  /** GET /v1/memories: one page of a scope's memories by query parameters. */
  listMemories(query: Params<QueryOf<'listMemories'>>, opts?: CallOptions): Promise<Ok<'listMemories'>> {
    return this.#json('GET', '/v1/memories', { query }, opts);
  }

  /** POST /v1/memories/list: one page of memories by a JSON filter (typed metadata values). */
  queryMemories(req: BodyOf<'listMemoriesPost'>, opts?: CallOptions): Promise<Ok<'listMemoriesPost'>> {
    return this.#json('POST', '/v1/memories/list', { json: req }, opts);
  }

  /** GET /v1/memories/{id}; not_found for an id outside the scope. */
  getMemory(id: string, query: QueryOf<'getMemory'>, opts?: CallOptions): Promise<Ok<'getMemory'>> {
    return this.#json('GET', `/v1/memories/${seg(id)}`, { query }, opts);
  }

  /** PATCH /v1/memories/{id}: changes the given fields and records a version. */
  updateMemory(id: string, scope: QueryOf<'updateMemory'>, patch: BodyOf<'updateMemory'>, opts?: CallOptions): Promise<Ok<'updateMemory'>> {
    return this.#json('PATCH', `/v1/memories/${seg(id)}`, { query: scope, json: patch }, opts);
  }

  /** DELETE /v1/memories/{id}: soft unless hard is true. */
  async deleteMemory(id: string, query: QueryOf<'deleteMemory'>, opts?: CallOptions): Promise<void> {
    await this.#json('DELETE', `/v1/memories/${seg(id)}`, { query }, opts);
  }

  /** POST /v1/memories/{id}/supersede: closes the memory's validity and adds its successor. */
  supersedeMemory(id: string, scope: QueryOf<'supersedeMemory'>, req: SupersedeInput, opts?: CallOptions): Promise<Ok<'supersedeMemory'>> {
    return this.#json('POST', `/v1/memories/${seg(id)}/supersede`, { query: scope, json: req }, opts);
  }

  /** POST /v1/memories/{id}/restore: makes a deleted or superseded memory active again. */
  restoreMemory(id: string, query: QueryOf<'restoreMemory'>, req: BodyOf<'restoreMemory'> = {}, opts?: CallOptions): Promise<Ok<'restoreMemory'>> {
    return this.#json('POST', `/v1/memories/${seg(id)}/restore`, { query, json: req }, opts);
  }

  /** GET /v1/memories/{id}/history: every version of the memory, oldest first. */
  memoryHistory(id: string, query: QueryOf<'memoryHistory'>, opts?: CallOptions): Promise<Ok<'memoryHistory'>> {
    return this.#json('GET', `/v1/memories/${seg(id)}/history`, { query }, opts);
  }

  /** POST /v1/memories/{id}/rollback: brings back the content of an earlier version as a new one. */
  rollbackMemory(id: string, scope: QueryOf<'rollbackMemory'>, req: BodyOf<'rollbackMemory'>, opts?: CallOptions): Promise<Ok<'rollbackMemory'>> {
    return this.#json('POST', `/v1/memories/${seg(id)}/rollback`, { query: scope, json: req }, opts);
  }

  // --- retrieval ---

  /** POST /v1/search: ranked hits for a query, and the assembled context when a budget is set. */
  search(req: BodyOf<'search'>, opts?: CallOptions): Promise<Ok<'search'>> {
    return this.#json('POST', '/v1/search', { json: req }, opts);
  }

  /** GET /v1/profile: the traits and states of a user's scope. */
  profile(scope: QueryOf<'profile'>, opts?: CallOptions): Promise<Ok<'profile'>> {
    return this.#json('GET', '/v1/profile', { query: scope }, opts);
  }

  /** POST /v1/embeddings: OpenAI-compatible embeddings of the server's embedder. */
  embeddings(req: BodyOf<'createEmbeddings'>, opts?: CallOptions): Promise<Ok<'createEmbeddings'>> {
    return this.#json('POST', '/v1/embeddings', { json: req }, opts);
  }

  // --- conflicts and jobs ---

  /** GET /v1/conflicts: the open conflicts of a scope. */
  listConflicts(scope: QueryOf<'listConflicts'>, opts?: CallOptions): Promise<Ok<'listConflicts'>> {
    return this.#json('GET', '/v1/conflicts', { query: scope }, opts);
  }

  /** POST /v1/conflicts/{id}/resolve: keeps one side and supersedes or deletes the other. */
  resolveConflict(id: string, scope: QueryOf<'resolveConflict'>, req: BodyOf<'resolveConflict'>, opts?: CallOptions): Promise<Ok<'resolveConflict'>> {
    return this.#json('POST', `/v1/conflicts/${seg(id)}/resolve`, { query: scope, json: req }, opts);
  }

  /** GET /v1/jobs: one page of a scope's formation jobs. */
  listJobs(query: QueryOf<'listJobs'>, opts?: CallOptions): Promise<Ok<'listJobs'>> {
    return this.#json('GET', '/v1/jobs', { query }, opts);
  }

  /** GET /v1/jobs/{id}. */
  getJob(id: string, scope: QueryOf<'getJob'>, opts?: CallOptions): Promise<Ok<'getJob'>> {
    return this.#json('GET', `/v1/jobs/${seg(id)}`, { query: scope }, opts);
  }

  // --- the entity graph ---

  /**
   * GET /v1/entities: one page of the people, places and things named in a
   * scope's memories, by normalised name; unavailable when the server keeps
   * no entity graph.
   */
  listEntities(query: QueryOf<'listEntities'>, opts?: CallOptions): Promise<Ok<'listEntities'>> {
    return this.#json('GET', '/v1/entities', { query }, opts);
  }

  /** GET /v1/entities/{id}: the entity with its memories, relations and timeline; not_found outside the scope. */
  getEntity(id: string, scope: QueryOf<'getEntity'>, opts?: CallOptions): Promise<Ok<'getEntity'>> {
    return this.#json('GET', `/v1/entities/${seg(id)}`, { query: scope }, opts);
  }

  /** DELETE /v1/entities/{id}: deletes the entity, its mentions and its relations; the memories stay. */
  async deleteEntity(id: string, scope: QueryOf<'deleteEntity'>, opts?: CallOptions): Promise<void> {
    await this.#json('DELETE', `/v1/entities/${seg(id)}`, { query: scope }, opts);
  }

  /** POST /v1/entities/{id}/merge: merges the entities of req.from into this one; returns it. */
  mergeEntities(id: string, scope: QueryOf<'mergeEntities'>, req: BodyOf<'mergeEntities'>, opts?: CallOptions): Promise<Ok<'mergeEntities'>> {
    return this.#json('POST', `/v1/entities/${seg(id)}/merge`, { query: scope, json: req }, opts);
  }

  /** POST /v1/entities/{id}/split: moves the mentions of req.memories to a new entity; returns it. */
  splitEntity(id: string, scope: QueryOf<'splitEntity'>, req: BodyOf<'splitEntity'>, opts?: CallOptions): Promise<Ok<'splitEntity'>> {
    return this.#json('POST', `/v1/entities/${seg(id)}/split`, { query: scope, json: req }, opts);
  }

  /** GET /v1/entities/{id}/history: every version of the entity, oldest first; a merged or deleted one's too. */
  entityHistory(id: string, scope: QueryOf<'entityHistory'>, opts?: CallOptions): Promise<Ok<'entityHistory'>> {
    return this.#json('GET', `/v1/entities/${seg(id)}/history`, { query: scope }, opts);
  }

  /**
   * GET /v1/graph: the scope's heaviest current relations and their ends,
   * or, with entity, the current relations within hops (1 or 2) of it.
   */
  graph(query: QueryOf<'getGraph'>, opts?: CallOptions): Promise<Ok<'getGraph'>> {
    return this.#json('GET', '/v1/graph', { query }, opts);
  }

  /**
   * GET /v1/communities: the scope's communities (groups of entities with a
   * summary); a scope naming an agent or session sees members only.
   */
  listCommunities(query: QueryOf<'listCommunities'>, opts?: CallOptions): Promise<Ok<'listCommunities'>> {
    return this.#json('GET', '/v1/communities', { query }, opts);
  }

  /** GET /v1/communities/{id}: a community with its members' entities; not_found outside the scope. */
  getCommunity(id: string, scope: QueryOf<'getCommunity'>, opts?: CallOptions): Promise<Ok<'getCommunity'>> {
    return this.#json('GET', `/v1/communities/${seg(id)}`, { query: scope }, opts);
  }

  /**
   * POST /v1/communities/refresh: recomputes the communities of the scope's
   * user that changed since the last refresh ({ full: true }: all); needs a
   * write key.
   */
  refreshCommunities(scope: QueryOf<'refreshCommunities'>, req: BodyOf<'refreshCommunities'> = {}, opts?: CallOptions): Promise<Ok<'refreshCommunities'>> {
    return this.#json('POST', '/v1/communities/refresh', { query: scope, json: req }, opts);
  }

  // --- resources ---

  /**
   * POST /v1/resources: uploads file as a multipart form. A document
   * (text/plain, text/markdown, text/html, application/pdf, by the Blob's
   * type) is also split into memories of kind resource that cite it.
   * Throws an EngramError (too_large) over the server's limit or the
   * tenant's quota; nothing is stored then.
   */
  addResource(query: QueryOf<'addResource'> & { name: string }, file: Blob, opts?: CallOptions): Promise<Ok<'addResource', 201>> {
    const form = new FormData();
    form.append('file', file, query.name);
    return this.#json('POST', '/v1/resources', { query, form, unbounded: true }, opts);
  }

  /** GET /v1/resources: one page of a scope's resources, newest first. */
  listResources(query: QueryOf<'listResources'>, opts?: CallOptions): Promise<Ok<'listResources'>> {
    return this.#json('GET', '/v1/resources', { query }, opts);
  }

  /** GET /v1/resources/{id}: a resource's metadata. */
  getResource(id: string, scope: QueryOf<'getResource'>, opts?: CallOptions): Promise<Ok<'getResource'>> {
    return this.#json('GET', `/v1/resources/${seg(id)}`, { query: scope }, opts);
  }

  /** GET /v1/resources/{id}/content: a resource's content. */
  async downloadResource(id: string, scope: QueryOf<'downloadResource'>, opts?: CallOptions): Promise<Uint8Array> {
    const call = await this.#send('GET', `/v1/resources/${seg(id)}/content`, { query: scope, unbounded: true }, opts);
    try {
      return new Uint8Array(await call.res.arrayBuffer());
    } catch (err) {
      throw call.fail(err);
    } finally {
      call.done();
    }
  }

  /** DELETE /v1/resources/{id}: the resource, its content and its memories. */
  async deleteResource(id: string, scope: QueryOf<'deleteResource'>, opts?: CallOptions): Promise<void> {
    await this.#json('DELETE', `/v1/resources/${seg(id)}`, { query: scope }, opts);
  }

  // --- identities: faces and voices clustered into persistent identities ---

  /**
   * POST /v1/observations: each observation (an embedding of a modality,
   * from the client's own model) joins the nearest identity or starts one.
   * The first observation of a modality declares its width; another width
   * later throws an EngramError (invalid) naming the field, storing nothing.
   */
  addObservations(req: BodyOf<'addObservations'>, opts?: CallOptions): Promise<Ok<'addObservations', 201>> {
    return this.#json('POST', '/v1/observations', { json: req }, opts);
  }

  /** GET /v1/identities: the identities of the scope's user, oldest first. */
  listIdentities(query: QueryOf<'listIdentities'>, opts?: CallOptions): Promise<Ok<'listIdentities'>> {
    return this.#json('GET', '/v1/identities', { query }, opts);
  }

  /** GET /v1/identities/{id}: the identity with its observations and the episodes they were observed in. */
  getIdentity(id: string, scope: QueryOf<'getIdentity'>, opts?: CallOptions): Promise<Ok<'getIdentity'>> {
    return this.#json('GET', `/v1/identities/${seg(id)}`, { query: scope }, opts);
  }

  /** DELETE /v1/identities/{id}: the identity and its observations, for good. */
  async deleteIdentity(id: string, scope: QueryOf<'deleteIdentity'>, opts?: CallOptions): Promise<void> {
    await this.#json('DELETE', `/v1/identities/${seg(id)}`, { query: scope }, opts);
  }

  /** POST /v1/identities/link: identities (a face, a voice) and a name are one person. */
  linkIdentities(scope: QueryOf<'linkIdentities'>, req: BodyOf<'linkIdentities'>, opts?: CallOptions): Promise<Ok<'linkIdentities'>> {
    return this.#json('POST', '/v1/identities/link', { query: scope, json: req }, opts);
  }

  /** POST /v1/identities/{id}/unlink: takes the identity out of its person. */
  unlinkIdentity(id: string, scope: QueryOf<'unlinkIdentity'>, opts?: CallOptions): Promise<Ok<'unlinkIdentity'>> {
    return this.#json('POST', `/v1/identities/${seg(id)}/unlink`, { query: scope, json: {} }, opts);
  }

  /** POST /v1/identities/merge: merges identities of one modality into one. */
  mergeIdentities(scope: QueryOf<'mergeIdentities'>, req: BodyOf<'mergeIdentities'>, opts?: CallOptions): Promise<Ok<'mergeIdentities'>> {
    return this.#json('POST', '/v1/identities/merge', { query: scope, json: req }, opts);
  }

  /** POST /v1/identities/{id}/split: moves some of its observations to a new identity. */
  splitIdentity(id: string, scope: QueryOf<'splitIdentity'>, req: BodyOf<'splitIdentity'>, opts?: CallOptions): Promise<Ok<'splitIdentity', 201>> {
    return this.#json('POST', `/v1/identities/${seg(id)}/split`, { query: scope, json: req }, opts);
  }

  /** GET /v1/identities/{id}/history: the history of an identity, an observation or a person. */
  identityHistory(id: string, scope: QueryOf<'identityHistory'>, opts?: CallOptions): Promise<Ok<'identityHistory'>> {
    return this.#json('GET', `/v1/identities/${seg(id)}/history`, { query: scope }, opts);
  }

  /** GET /v1/persons: the persons of the scope's user with their identities. */
  listPersons(query: QueryOf<'listPersons'>, opts?: CallOptions): Promise<Ok<'listPersons'>> {
    return this.#json('GET', '/v1/persons', { query }, opts);
  }

  // --- scope: export, import, audit, purge ---

  /**
   * GET /v1/export as a stream of records, read as they arrive. Throws an
   * EngramError (internal) when the stream ends in the middle of a record.
   */
  async *exportRecords(query: QueryOf<'export'>, opts?: CallOptions): AsyncGenerator<Schemas['Record']> {
    const call = await this.#send('GET', '/v1/export', { query, unbounded: true }, opts);
    try {
      yield* readNDJSON(call.res, call.fail);
    } finally {
      call.done();
    }
  }

  /** GET /v1/export: every record of the scope, collected. */
  async export(query: QueryOf<'export'>, opts?: CallOptions): Promise<Schemas['Record'][]> {
    const out: Schemas['Record'][] = [];
    for await (const rec of this.exportRecords(query, opts)) out.push(rec);
    return out;
  }

  /** POST /v1/import: stores exported records into the scope, sent as NDJSON. */
  import(scope: QueryOf<'import'>, records: Iterable<Schemas['Record']>, opts?: CallOptions): Promise<Ok<'import'>> {
    let body = '';
    for (const rec of records) body += JSON.stringify(rec) + '\n';
    return this.#json('POST', '/v1/import', { query: scope, body, contentType: ndjson, unbounded: true }, opts);
  }

  /** GET /v1/audit: one page of the scope's audit log, newest first. */
  audit(query: QueryOf<'audit'>, opts?: CallOptions): Promise<Ok<'audit'>> {
    return this.#json('GET', '/v1/audit', { query }, opts);
  }

  /**
   * GET /v1/scopes: the users, agents and sessions of a tenant that hold
   * active memories, with counts and last activity. org and project default
   * to the API key's (required without keys).
   */
  listScopes(query: QueryOf<'listScopes'> = {}, opts?: CallOptions): Promise<Ok<'listScopes'>> {
    return this.#json('GET', '/v1/scopes', { query }, opts);
  }

  /** DELETE /v1/scope: deletes everything of the scope for good (admin keys only). */
  deleteScope(scope: QueryOf<'deleteScope'>, opts?: CallOptions): Promise<Ok<'deleteScope'>> {
    return this.#json('DELETE', '/v1/scope', { query: scope }, opts);
  }

  // --- API keys (admin) ---

  /** POST /v1/keys: a new key; its secret is in the answer only. */
  createKey(spec: BodyOf<'createKey'>, opts?: CallOptions): Promise<Ok<'createKey', 201>> {
    return this.#json('POST', '/v1/keys', { json: spec }, opts);
  }

  /** GET /v1/keys: the keys of a project (or of one user of it). */
  listKeys(query: QueryOf<'listKeys'>, opts?: CallOptions): Promise<Ok<'listKeys'>> {
    return this.#json('GET', '/v1/keys', { query }, opts);
  }

  /** DELETE /v1/keys/{id}: revokes a key at once. */
  async revokeKey(id: string, query: QueryOf<'revokeKey'>, opts?: CallOptions): Promise<void> {
    await this.#json('DELETE', `/v1/keys/${seg(id)}`, { query }, opts);
  }

  // --- paging ---

  /**
   * Calls a list method page by page, following next, and yields each
   * page: for await (const p of c.pages('listMemories', {org, project, limit: 100})).
   */
  async *pages<M extends PagedMethod>(method: M, query: Parameters<EngramClient[M]>[0], opts?: CallOptions): AsyncGenerator<Awaited<ReturnType<EngramClient[M]>>> {
    const list = this[method] as unknown as (q: object, o?: CallOptions) => Promise<Awaited<ReturnType<EngramClient[M]>>>;
    let q: object = query;
    for (;;) {
      const page = await list.call(this, q, opts);
      yield page;
      if (!page.next) return;
      q = { ...q, cursor: page.next };
    }
  }

  // --- transport ---

  // #json sends a request and returns its JSON body (undefined for 204).
  async #json<T>(method: string, path: string, req: Request, opts?: CallOptions): Promise<T> {
    const call = await this.#send(method, path, req, opts);
    try {
      if (call.res.status === 204) return undefined as T;
      const text = await call.res.text();
      try {
        return JSON.parse(text) as T;
      } catch (err) {
        throw new EngramError(call.res.status, 'internal', `${method} ${path}: the answer is not JSON: ${text.slice(0, 200)}`, { cause: err });
      }
    } catch (err) {
      throw call.fail(err);
    } finally {
      call.done();
    }
  }

  // #send sends a request and returns its successful answer with the means
  // to end the call (done) and to turn a failure while reading the body
  // into the error to throw (fail); an error answer is thrown.
  async #send(method: string, path: string, req: Request, opts?: CallOptions) {
    const url = this.baseUrl + path + queryString(req.query);
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.#apiKey) headers['Authorization'] = `Bearer ${this.#apiKey}`;
    const actor = opts?.actor || this.#actor;
    if (actor) headers[actorHeader] = utf8Header(actor);
    let body: string | FormData | undefined = req.body;
    if (req.json !== undefined) body = JSON.stringify(req.json);
    if (body !== undefined) headers['Content-Type'] = req.contentType ?? 'application/json';
    if (req.form !== undefined) body = req.form;

    const timeoutMs = opts?.timeoutMs ?? (req.unbounded ? 0 : this.#timeoutMs);
    const call = new Call(`${method} ${path}`, opts?.signal, timeoutMs);
    let res: Response;
    try {
      res = await this.#fetch(url, { method, headers, body, signal: call.signal });
    } catch (err) {
      call.done();
      throw call.fail(err, `cannot reach ${this.baseUrl}`);
    }
    if (!res.ok) {
      const err = await errorFromResponse(res);
      call.done();
      throw err;
    }
    return { res, done: () => call.done(), fail: (err: unknown) => call.fail(err) };
  }
}

// Call joins the caller's signal and the timeout into the signal of one
// request, and tells which of them ended it.
class Call {
  readonly #ctrl = new AbortController();
  readonly #what: string;
  readonly #caller: AbortSignal | undefined;
  readonly #timeoutMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timedOut = false;
  readonly #onAbort = () => this.#ctrl.abort(this.#caller?.reason);

  constructor(what: string, caller: AbortSignal | undefined, timeoutMs: number) {
    this.#what = what;
    this.#caller = caller;
    this.#timeoutMs = timeoutMs;
    if (caller?.aborted) this.#ctrl.abort(caller.reason);
    caller?.addEventListener('abort', this.#onAbort, { once: true });
    if (timeoutMs > 0) {
      this.#timer = setTimeout(() => {
        this.#timedOut = true;
        this.#ctrl.abort();
      }, timeoutMs);
    }
  }

  get signal(): AbortSignal {
    return this.#ctrl.signal;
  }

  done(): void {
    clearTimeout(this.#timer);
    this.#caller?.removeEventListener('abort', this.#onAbort);
  }

  // fail returns the error to throw for err: the caller's abort reason as
  // it is, an EngramError for a timeout or a failed connection.
  fail(err: unknown, context = 'reading the answer failed'): unknown {
    if (err instanceof EngramError) return err;
    if (this.#caller?.aborted) return this.#caller.reason;
    if (this.#timedOut) {
      return new EngramError(0, 'unavailable', `${this.#what}: no answer within ${this.#timeoutMs} ms`, { cause: err });
    }
    let msg = err instanceof Error ? err.message : String(err);
    // Node's fetch says only "fetch failed"; the reason (ECONNREFUSED) is in its cause.
    const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined;
    if (typeof cause?.code === 'string') msg += ` (${cause.code})`;
    return new EngramError(0, 'unavailable', `${this.#what}: ${context}: ${msg}`, { cause: err });
  }
}

// readNDJSON yields the JSON values of an NDJSON body line by line.
async function* readNDJSON<T>(res: Response, fail: (err: unknown) => unknown): AsyncGenerator<T> {
  if (!res.body) return;
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let finished = false;
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        throw fail(err);
      }
      buf += chunk.done ? dec.decode() : dec.decode(chunk.value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) yield parseLine<T>(line, res.status);
      }
      if (chunk.done) break;
    }
    finished = true;
  } finally {
    // A reader that stops early (break in for await) lets go of the
    // connection instead of leaving the rest of the export unread.
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  if (buf.trim()) {
    throw new EngramError(res.status, 'internal', 'the export ended in the middle of a record; the server stopped sending');
  }
}

function parseLine<T>(line: string, status: number): T {
  try {
    return JSON.parse(line) as T;
  } catch (err) {
    throw new EngramError(status, 'internal', `an exported line is not JSON: ${line.slice(0, 200)}`, { cause: err });
  }
}

// queryString encodes query parameters: arrays repeat, booleans and
// numbers are written out, meta and meta_in become meta.KEY and
// meta_in.KEY, and undefined, null and "" are left out.
function queryString(query: object | undefined): string {
  if (!query) return '';
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (name === 'meta' || name === 'meta_in') {
      for (const [key, v] of Object.entries((value ?? {}) as Record<string, MetaValue | MetaValue[]>)) {
        for (const one of Array.isArray(v) ? v : [v]) q.append(`${name}.${key}`, metaText(one));
      }
      continue;
    }
    for (const one of Array.isArray(value) ? value : [value]) {
      if (one === undefined || one === null || one === '') continue;
      q.append(name, String(one));
    }
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

// metaText writes a metadata value so that the server reads it back with
// its type: it decodes a value that is valid JSON and takes anything else
// as a string, so a string that would read as JSON ("3", "true") is quoted.
function metaText(v: MetaValue): string {
  if (typeof v !== 'string') return JSON.stringify(v);
  try {
    JSON.parse(v);
  } catch {
    return v;
  }
  return JSON.stringify(v);
}

// seg escapes a path segment.
function seg(id: string): string {
  return encodeURIComponent(id);
}

// utf8Header writes s as a header value whose bytes are its UTF-8 encoding:
// fetch takes header values as byte strings, one character a byte, and
// the server reads the actor as UTF-8. Control characters cannot be sent
// in a header: EngramError (invalid) before anything is sent.
function utf8Header(s: string): string {
  if (/[\u0000-\u001f\u007f]/.test(s)) {
    throw new EngramError(0, 'invalid', `actor ${JSON.stringify(s)} may not contain control characters (header ${actorHeader})`);
  }
  let out = '';
  for (const b of new TextEncoder().encode(s)) out += String.fromCharCode(b);
  return out;
}

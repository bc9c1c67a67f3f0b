// @engram/client: a typed client of engram's REST API. The types come from
// src/schema.ts, which openapi-typescript generates from http/openapi.json
// (npm run generate); npm test fails when it is not up to date.
export { EngramClient, DEFAULT_TIMEOUT_MS } from './client.js';
export type {
  AddMemoriesInput,
  BodyOf,
  CallOptions,
  ClientOptions,
  MemoryInput,
  MetaValue,
  Ok,
  PagedMethod,
  Params,
  QueryOf,
  Scope,
  SupersedeInput,
} from './client.js';
export { EngramError } from './errors.js';
export type { ErrorCode } from './errors.js';
export type { components, operations, paths } from './schema.js';

import type { components } from './schema.js';
type S = components['schemas'];
/** A memory as the server answers with it. */
export type Memory = S['Memory'];
/** An episode (one turn or event) as stored. */
export type Episode = S['Episode'];
/** An image, audio or video an episode carries (a stored resource), with its caption or transcript. */
export type Media = S['Media'];
/** One timed, attributed stretch of a media item's transcript. */
export type TranscriptSegment = S['TranscriptSegment'];
/** Where a record lives: org, project and optionally user, agent, session. */
export type Namespace = S['Namespace'];
/** One search result. */
export type Hit = S['Hit'];
/** One line of an export or import. */
export type ExportRecord = S['Record'];
/** One version of a memory. */
export type Version = S['Version'];
/** A formation job. */
export type Job = S['Job'];
/** An API key (without its secret). */
export type APIKey = S['APIKey'];
/** A person, place or thing named in memories of one user. */
export type Entity = S['Entity'];
/** An entity with the memories that name it, its relations and its timeline. */
export type EntityDetail = S['EntityDetail'];
/** A labelled edge between two entities, with the memories that support it. */
export type Relation = S['Relation'];
/** Entities (nodes) and the current relations between them (edges). */
export type Graph = S['Graph'];
export type Community = S['Community'];
export type CommunityDetail = S['CommunityDetail'];
export type RefreshResult = S['RefreshResult'];

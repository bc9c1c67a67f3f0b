// The methods' types are those of the OpenAPI document: a derived type that
// turned into never (a renamed schema or status) would let any test
// compile, so these equalities fail the build instead.
import { test } from 'node:test';
import type { EngramClient, Memory, Ok, QueryOf, components } from '../src/index.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;
type S = components['schemas'];
type Result<M extends keyof EngramClient> = EngramClient[M] extends (...a: never[]) => Promise<infer R> ? R : never;

export type Checks = [
  Assert<Equal<Ok<'getMemory'>, Memory>>,
  Assert<Equal<Result<'getMemory'>, S['Memory']>>,
  Assert<Equal<Result<'addEpisodes'>, S['AddEpisodesResult']>>,
  Assert<Equal<Result<'listMemories'>, S['MemoryPage']>>,
  Assert<Equal<Result<'queryMemories'>, S['MemoryPage']>>,
  Assert<Equal<Result<'search'>, S['SearchResult']>>,
  Assert<Equal<Result<'memoryHistory'>, S['VersionsResponse']>>,
  Assert<Equal<Result<'supersedeMemory'>, S['SupersedeResult']>>,
  Assert<Equal<Result<'import'>, S['ImportResult']>>,
  Assert<Equal<Result<'export'>, S['Record'][]>>,
  Assert<Equal<Result<'deleteScope'>, S['PurgeCounts']>>,
  Assert<Equal<Result<'createKey'>, S['CreateKeyResponse']>>,
  Assert<Equal<Result<'profile'>, S['Profile']>>,
  Assert<Equal<Result<'listConflicts'>, S['ConflictsResponse']>>,
  Assert<Equal<Result<'resolveConflict'>, S['ConflictResolution']>>,
  Assert<Equal<Result<'getJob'>, S['Job']>>,
  Assert<Equal<Result<'audit'>, S['AuditPage']>>,
  Assert<Equal<Result<'listScopes'>, S['ScopeList']>>,
  Assert<Equal<Result<'health'>, S['HealthStatus']>>,
  Assert<Equal<Result<'listEntities'>, S['EntityPage']>>,
  Assert<Equal<Result<'getEntity'>, S['EntityDetail']>>,
  Assert<Equal<Result<'graph'>, S['Graph']>>,
  Assert<Equal<Result<'deleteEntity'>, void>>,
  Assert<Equal<QueryOf<'listMemories'>['kind'], S['Kind'][] | undefined>>,
];

test('the client is typed from the OpenAPI document (checked when compiling)', () => {});

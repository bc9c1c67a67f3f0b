// Package mem0api serves the part of Mem0's platform API that the mem0ai
// npm package's MemoryClient calls (ping, add, search, get all, get,
// update, delete, history, delete all, entities), translated onto engram's
// Service, so that an application written against Mem0 keeps its client
// and points its host at engram (engram serve mounts it under /mem0).
//
// Mem0's names map onto engram's namespace: the tenant (org and project)
// comes from the request's API key, or from Options without
// authentication; user_id is the namespace's user, agent_id its agent and
// run_id its session. A memory's id is engram's id; Mem0's client names a
// memory by id alone, so the handler locates its namespace in the tenant
// (engram.Locator) and treats one outside the key's binding as not found.
// With infer true an add stores the messages as episodes and forms
// memories from them (formation's ADD, UPDATE, MERGE, SUPERSEDE and DELETE
// decisions become Mem0's events); with infer false each message becomes
// one memory verbatim. Deleting all of a user, agent or run, and deleting
// an entity, purge (engram's DeleteScope) and need an admin key; the other
// writes need a write key. Errors are engram's REST error body with a 4xx
// status, which Mem0's client raises as an exception carrying the body.
package mem0api

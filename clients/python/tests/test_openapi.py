"""The client against the server's OpenAPI document (http/openapi.json):
every operation has a method, every field of a record a dataclass field,
every request field and query parameter a way in. A route or field added
to the API without the client fails here, by name."""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import unittest
from typing import Any, Dict, Set

import engram_client as ec

from engram_server import ROOT

with open(os.path.join(ROOT, "http", "openapi.json"), encoding="utf-8") as f:
    DOC: Dict[str, Any] = json.load(f)

# operationId → client method.
METHODS = {
    "health": "health",
    "ready": "ready",
    "openapi": "openapi",
    "addEpisodes": "add_episodes",
    "listEpisodes": "list_episodes",
    "getEpisode": "get_episode",
    "deleteEpisode": "delete_episode",
    "addMemories": "add_memories",
    "listMemories": "list_memories",
    "listMemoriesPost": "list_memories_post",
    "getMemory": "get_memory",
    "updateMemory": "update_memory",
    "deleteMemory": "delete_memory",
    "supersedeMemory": "supersede_memory",
    "restoreMemory": "restore_memory",
    "memoryHistory": "history",
    "rollbackMemory": "rollback",
    "search": "search",
    "profile": "profile",
    "deleteScope": "delete_scope",
    "export": "export",
    "import": "import_records",
    "audit": "audit",
    "createEmbeddings": "embeddings",
    "createKey": "create_key",
    "listKeys": "list_keys",
    "revokeKey": "revoke_key",
    "listConflicts": "list_conflicts",
    "resolveConflict": "resolve_conflict",
    "listJobs": "list_jobs",
    "getJob": "get_job",
    "listScopes": "list_scopes",
    "listEntities": "list_entities",
    "getEntity": "get_entity",
    "deleteEntity": "delete_entity",
    "mergeEntities": "merge_entities",
    "splitEntity": "split_entity",
    "entityHistory": "entity_history",
    "getGraph": "graph",
    "listCommunities": "list_communities",
    "getCommunity": "get_community",
    "refreshCommunities": "refresh_communities",
    "addResource": "add_resource",
    "listResources": "list_resources",
    "getResource": "get_resource",
    "downloadResource": "download_resource",
    "deleteResource": "delete_resource",
    "addObservations": "add_observations",
    "listIdentities": "list_identities",
    "getIdentity": "get_identity",
    "deleteIdentity": "delete_identity",
    "linkIdentities": "link_identities",
    "unlinkIdentity": "unlink_identity",
    "mergeIdentities": "merge_identities",
    "splitIdentity": "split_identity",
    "listPersons": "list_persons",
    "identityHistory": "identity_history",
}

# Schema → dataclass whose fields must hold every property.
MODELS = {
    "Namespace": ec.Namespace,
    "Scope": ec.Scope,
    "Episode": ec.Episode,
    "EpisodeInput": ec.EpisodeInput,
    "AddEpisodesResult": ec.AddEpisodesResult,
    "Memory": ec.Memory,
    "MemoryPatch": ec.MemoryPatch,
    "SupersedeResult": ec.SupersedeResult,
    "MemoryFilter": ec.MemoryFilter,
    "Version": ec.Version,
    "EntityVersion": ec.EntityVersion,
    "AuditEntry": ec.AuditEntry,
    "AgentStep": ec.AgentStep,
    "ChannelHit": ec.ChannelHit,
    "Hit": ec.Hit,
    "SearchResult": ec.SearchResult,
    "PurgeCounts": ec.PurgeCounts,
    "Record": ec.Record,
    "ImportResult": ec.ImportResult,
    "SensitiveCount": ec.SensitiveCount,
    "EmbeddingsResponse": ec.EmbeddingsResponse,
    "Embedding": ec.Embedding,
    "EmbeddingsUsage": ec.EmbeddingsUsage,
    "APIKey": ec.APIKey,
    "CreateKeyResponse": ec.CreatedKey,
    "Profile": ec.Profile,
    "Conflict": ec.Conflict,
    "ConflictResolution": ec.ConflictResolution,
    "Job": ec.Job,
    "ScopeCount": ec.ScopeCount,
    "ScopeList": ec.ScopeList,
    "Entity": ec.Entity,
    "EntityDetail": ec.EntityDetail,
    "Relation": ec.Relation,
    "Evidence": ec.Evidence,
    "TimelineEntry": ec.TimelineEntry,
    "Graph": ec.Graph,
    "Community": ec.Community,
    "CommunityDetail": ec.CommunityDetail,
    "RefreshResult": ec.RefreshResult,
    "Resource": ec.Resource,
    "ResourceChunk": ec.ResourceChunk,
    "ResourceCitation": ec.ResourceCitation,
    "MediaSpan": ec.MediaSpan,
    "ObservationInput": ec.ObservationInput,
    "Observation": ec.Observation,
    "AddObservationsResult": ec.AddObservationsResult,
    "Identity": ec.Identity,
    "IdentityDetail": ec.IdentityDetail,
    "Person": ec.Person,
    "IdentityEvent": ec.IdentityEvent,
    "Media": ec.Media,
    "TranscriptSegment": ec.TranscriptSegment,
}

# Fields of the memory the client takes as input: what a server-made
# memory has besides (id aside) is set by the server.
MEMORY_SET_BY_SERVER = {
    "namespace", "status", "created_at", "updated_at", "expired_at", "sources",
    "superseded_by", "version", "access_count", "last_accessed",
}

# Request bodies: where each property goes in (a parameter of the method,
# renamed where Python needs it).
RENAMED = {"async": "async_", "from": "from_"}

# Query parameters: the parameter or filter field that sends each.
QUERY_ALIASES = {
    "role": "roles", "kind": "kinds", "status": "statuses", "state": "states", "op": "ops",
    "meta.{key}": "metadata", "meta_in.{key}": "metadata_in", "id": "ids", "source": "sources",
}
SCOPE_PARAMS = {"org", "project", "user", "agent", "session", "include_shared"}


def operations():  # type: ignore[no-untyped-def]
    for path, ops in DOC["paths"].items():
        if ops.get("x-engram-mount"):
            continue  # served beside the API (MCP, Mem0, the proxy, the dashboard): other clients
        for method, op in ops.items():
            if isinstance(op, dict) and "operationId" in op:
                yield path, method.upper(), op


def resolve(obj: Dict[str, Any]) -> Dict[str, Any]:
    ref = obj.get("$ref")
    if not ref:
        return obj
    node: Any = DOC
    for part in ref.lstrip("#/").split("/"):
        node = node[part]
    return node


def fields(cls: type) -> Set[str]:
    return {f.name for f in dataclasses.fields(cls)}


class OpenAPITest(unittest.TestCase):
    def test_every_operation_has_a_method(self) -> None:
        for path, method, op in operations():
            with self.subTest(op=op["operationId"]):
                name = METHODS.get(op["operationId"])
                self.assertIsNotNone(name, f"{method} {path} ({op['operationId']}) has no method in engram_client.Client")
                self.assertTrue(callable(getattr(ec.Client, name or "", None)), f"Client.{name} is missing")

    def test_every_schema_property_has_a_field(self) -> None:
        for name, cls in MODELS.items():
            with self.subTest(schema=name):
                props = set(DOC["components"]["schemas"][name].get("properties", {}))
                self.assertFalse(props - fields(cls), f"{cls.__name__} lacks fields of schema {name}")
        memory = set(DOC["components"]["schemas"]["Memory"]["properties"])
        self.assertFalse(memory - MEMORY_SET_BY_SERVER - fields(ec.MemoryInput), "MemoryInput lacks fields of Memory")

    def test_every_request_field_and_parameter_has_a_way_in(self) -> None:
        for path, method, op in operations():
            name = METHODS.get(op["operationId"])
            if name is None:
                continue  # reported by test_every_operation_has_a_method
            sig = set(inspect.signature(getattr(ec.Client, name)).parameters)
            if "filter" in sig:
                sig |= fields(ec.MemoryFilter)
            if "patch" in sig:
                sig |= fields(ec.MemoryPatch)
            with self.subTest(op=op["operationId"]):
                for p in op.get("parameters", []):
                    p = resolve(p)
                    if p["in"] == "header" or p["in"] == "path":
                        continue  # the actor is the client's; path ids are arguments
                    want = QUERY_ALIASES.get(p["name"], p["name"])
                    if p["name"] in SCOPE_PARAMS and ({"scope", "org"} & sig):
                        continue
                    self.assertTrue(want in sig or p["name"] in sig, f"Client.{name} cannot send query parameter {p['name']}")
                content = op.get("requestBody", {}).get("content", {})
                schema = resolve(content.get("application/json", {}).get("schema", {}))
                if op["operationId"] == "import" or "properties" not in schema:
                    continue
                for prop in schema["properties"]:
                    self.assertIn(RENAMED.get(prop, prop), sig, f"Client.{name} cannot send {prop} of its request body")


if __name__ == "__main__":
    unittest.main()

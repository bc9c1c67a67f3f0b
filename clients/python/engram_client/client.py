"""The client of engram's REST API."""

from __future__ import annotations

import copy
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    TypeVar,
    Union,
)

from . import errors
from ._convert import Model, encode, format_time
from .errors import EngramError, make_error
from .models import (
    AddObservationsResult,
    Identity,
    IdentityDetail,
    IdentityEvent,
    ObservationInput,
    Person,
    APIKey,
    AddEpisodesResult,
    AuditEntry,
    Conflict,
    ConflictResolution,
    CreatedKey,
    EmbeddingsResponse,
    Entity,
    EntityDetail,
    EntityVersion,
    Episode,
    EpisodeInput,
    Graph,
    Community,
    CommunityDetail,
    RefreshResult,
    ImportResult,
    Job,
    Memory,
    MemoryFilter,
    MemoryInput,
    MemoryPatch,
    Namespace,
    Page,
    Profile,
    Resource,
    PurgeCounts,
    Record,
    Scope,
    ScopeList,
    SearchResult,
    SupersedeResult,
    Time,
    Version,
)

DEFAULT_TIMEOUT = 30.0
"""Seconds a call may wait for the server, and, in an export, for each
next piece of the stream."""

ACTOR_HEADER = "X-Engram-Actor"

ScopeLike = Union[Scope, Namespace, Mapping[str, Any]]
"""A Scope, a Namespace, or a dict with their fields."""

NamespaceLike = Union[Namespace, Scope, Mapping[str, Any]]
"""A Namespace, a Scope (its include_shared is dropped) or a dict."""

M = TypeVar("M", bound=Model)
T = TypeVar("T")

_Query = List[Tuple[str, str]]

# The most ids list_memories sends in a query string (about 3 KB of URL);
# more go in the body of POST /v1/memories/list.
_MAX_QUERY_IDS = 100

# Where a record id goes in a path, for the message when it is unusable.
_ID_WHAT = {"/v1/episodes/": "episode", "/v1/jobs/": "job", "/v1/conflicts/": "conflict", "/v1/keys/": "key", "/v1/entities/": "entity", "/v1/communities/": "community", "/v1/resources/": "resource"}


class Client:
    """A client of the engram server at base_url, e.g. "http://127.0.0.1:8080".

    api_key is sent as "Authorization: Bearer KEY" (None sends none, which
    only a server run with --no-auth accepts); actor is sent as the
    X-Engram-Actor header so that writes are attributed to it; timeout is
    the seconds each call may wait for the server.

    Every method raises EngramError (a subclass for the common codes) with
    the server's status, code and message; UnavailableError with status 0
    when the server cannot be reached or does not answer in time; and
    InvalidError with status 0, before sending anything, for an argument
    no request could carry (an empty id, a value JSON cannot encode).
    """

    def __init__(
        self,
        base_url: str,
        api_key: Optional[str] = None,
        *,
        actor: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        u = urllib.parse.urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.netloc:
            raise errors.InvalidError(0, errors.INVALID, f"server URL {base_url!r} must be http:// or https:// and name a host")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.actor = actor
        self.timeout = timeout

    def with_actor(self, actor: Optional[str]) -> "Client":
        """A copy of the client whose writes are attributed to actor."""
        c = copy.copy(self)
        c.actor = actor
        return c

    # Health.

    def health(self) -> str:
        """The status GET /healthz answers ("ok"); raises when the server is down."""
        return str(self._call("GET", "/healthz")["status"])

    def ready(self) -> str:
        """The status GET /readyz answers; raises UnavailableError with the
        server's reason when it is not ready."""
        return str(self._call("GET", "/readyz")["status"])

    def openapi(self) -> Dict[str, Any]:
        """The server's OpenAPI document."""
        return dict(self._call("GET", "/v1/openapi.json"))

    # Episodes.

    def add_episodes(
        self,
        namespace: NamespaceLike,
        episodes: Sequence[Union[EpisodeInput, Mapping[str, Any]]],
        *,
        form: Optional[bool] = None,
        async_: Optional[bool] = None,
    ) -> AddEpisodesResult:
        """Stores episodes (at most 1000) and forms memories of them.

        form=False stores them without forming memories; async_=True forms
        them in a background job, returned in the result's job (see
        wait_job). All or nothing: on error nothing is stored."""
        body: Dict[str, Any] = {"namespace": _namespace(namespace), "episodes": [encode(e) for e in episodes]}
        if form is not None:
            body["form"] = form
        if async_ is not None:
            body["async"] = async_
        return AddEpisodesResult.from_dict(self._call("POST", "/v1/episodes", body=body))

    def list_episodes(
        self,
        scope: ScopeLike,
        *,
        roles: Optional[Sequence[str]] = None,
        speaker: Optional[str] = None,
        occurred_after: Optional[Time] = None,
        occurred_before: Optional[Time] = None,
        contains: Optional[str] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Episode]:
        """One page of the scope's episodes, oldest first; pass the page's
        next as cursor for the one after (or use iter_episodes)."""
        q = _scope_query(scope)
        _add_all(q, "role", roles)
        _add(q, "speaker", speaker)
        _add(q, "occurred_after", format_time(occurred_after))
        _add(q, "occurred_before", format_time(occurred_before))
        _add(q, "contains", contains)
        _add_meta(q, "meta.", metadata)
        _add(q, "limit", limit)
        _add(q, "cursor", cursor)
        return _page(self._call("GET", "/v1/episodes", q), "episodes", Episode)

    def iter_episodes(self, scope: ScopeLike, **filters: Any) -> Iterator[Episode]:
        """Every episode list_episodes(scope, **filters) pages through."""
        return _iterate(lambda cursor: self.list_episodes(scope, cursor=cursor, **filters))

    def get_episode(self, scope: ScopeLike, id: str) -> Episode:
        """The episode with this id; NotFoundError when the scope has none."""
        return Episode.from_dict(self._call("GET", _id_path("/v1/episodes/", id), _scope_query(scope)))

    def delete_episode(self, scope: ScopeLike, id: str) -> None:
        """Deletes the episode; NotFoundError when the scope has none."""
        self._call("DELETE", _id_path("/v1/episodes/", id), _scope_query(scope))

    # Memories.

    def add_memories(
        self, namespace: NamespaceLike, memories: Sequence[Union[MemoryInput, Memory, Mapping[str, Any]]]
    ) -> List[Memory]:
        """Stores memories as given (at most 1000), without formation; all or nothing."""
        body = {"namespace": _namespace(namespace), "memories": [encode(m) for m in memories]}
        res = self._call("POST", "/v1/memories", body=body)
        return [Memory.from_dict(m) for m in res.get("memories") or []]

    def list_memories(
        self,
        scope: ScopeLike,
        filter: Union[MemoryFilter, Mapping[str, Any], None] = None,
        *,
        vault: bool = False,
    ) -> Page[Memory]:
        """One page of the scope's memories that pass filter (current ones
        unless filter names statuses). It uses GET /v1/memories, or POST
        /v1/memories/list when the filter cannot travel in a URL (many ids,
        an empty list in metadata_in). vault=True includes vault memories,
        decrypted (admin keys only)."""
        f = _filter(filter)
        ids = (f.ids or []) + (f.sources or [])
        if len(ids) > _MAX_QUERY_IDS or "" in ids or any(not vs for vs in (f.metadata_in or {}).values()):
            return self.list_memories_post(scope, f, vault=vault)
        q = _scope_query(scope)
        _add_all(q, "kind", f.kinds)
        _add_all(q, "status", f.statuses)
        for name in ("created_after", "created_before", "valid_at", "valid_after", "valid_before"):
            _add(q, name, format_time(getattr(f, name)))
        _add(q, "contains", f.contains)
        _add_meta(q, "meta.", f.metadata)
        for k, vs in (f.metadata_in or {}).items():
            for v in vs:
                q.append(("meta_in." + k, _meta_value(k, v)))
        _add_all(q, "id", f.ids)
        _add_all(q, "source", f.sources)
        _add(q, "limit", f.limit)
        _add(q, "cursor", f.cursor)
        if vault:
            q.append(("vault", "true"))
        return _page(self._call("GET", "/v1/memories", q), "memories", Memory)

    def list_memories_post(
        self,
        scope: ScopeLike,
        filter: Union[MemoryFilter, Mapping[str, Any], None] = None,
        *,
        vault: bool = False,
    ) -> Page[Memory]:
        """As list_memories, always by POST /v1/memories/list with the filter in the body."""
        body: Dict[str, Any] = {"scope": _scope(scope), "filter": encode(_filter(filter))}
        if vault:
            body["vault"] = True
        return _page(self._call("POST", "/v1/memories/list", body=body), "memories", Memory)

    def iter_memories(
        self,
        scope: ScopeLike,
        filter: Union[MemoryFilter, Mapping[str, Any], None] = None,
        *,
        vault: bool = False,
    ) -> Iterator[Memory]:
        """Every memory list_memories pages through, from filter's cursor on."""
        f = _filter(filter)

        def fetch(cursor: Optional[str]) -> Page[Memory]:
            if cursor is not None:
                f.cursor = cursor
            return self.list_memories(scope, f, vault=vault)

        return _iterate(fetch)

    def get_memory(self, scope: ScopeLike, id: str, *, vault: bool = False) -> Memory:
        """The memory with this id, in any status; NotFoundError when the
        scope has none (or it is a vault memory and vault is False)."""
        q = _scope_query(scope)
        if vault:
            q.append(("vault", "true"))
        return Memory.from_dict(self._call("GET", _id_path("/v1/memories/", id), q))

    def update_memory(
        self, scope: ScopeLike, id: str, patch: Union[MemoryPatch, Mapping[str, Any], None] = None, **fields: Any
    ) -> Memory:
        """Changes the fields set in patch (or given as keywords, e.g.
        value="...") and returns the new version; an invalid field raises
        InvalidError naming it and changes nothing."""
        body = encode(patch) if patch is not None else {}
        body.update(encode(fields))
        return Memory.from_dict(self._call("PATCH", _id_path("/v1/memories/", id), _scope_query(scope), body=body))

    def delete_memory(
        self, scope: ScopeLike, id: str, *, hard: bool = False, reason: Optional[str] = None, vault: bool = False
    ) -> None:
        """Deletes the memory: softly (its status becomes deleted, restore
        brings it back) or, with hard=True, with its history, for good."""
        q = _scope_query(scope)
        if hard:
            q.append(("hard", "true"))
        _add(q, "reason", reason)
        if vault:
            q.append(("vault", "true"))
        self._call("DELETE", _id_path("/v1/memories/", id), q)

    def supersede_memory(
        self,
        scope: ScopeLike,
        id: str,
        new: Union[MemoryInput, Memory, Mapping[str, Any]],
        *,
        at: Optional[Time] = None,
        reason: Optional[str] = None,
    ) -> SupersedeResult:
        """Replaces the memory by new, which takes over from at (default
        now); the old one is kept as superseded."""
        body: Dict[str, Any] = {"new": encode(new)}
        _set(body, "at", format_time(at))
        _set(body, "reason", reason)
        path = _id_path("/v1/memories/", id, "/supersede")
        return SupersedeResult.from_dict(self._call("POST", path, _scope_query(scope), body=body))

    def restore_memory(
        self, scope: ScopeLike, id: str, *, reason: Optional[str] = None, vault: bool = False
    ) -> Memory:
        """Makes a soft-deleted memory active again."""
        q = _scope_query(scope)
        if vault:
            q.append(("vault", "true"))
        body: Dict[str, Any] = {}
        _set(body, "reason", reason)
        return Memory.from_dict(self._call("POST", _id_path("/v1/memories/", id, "/restore"), q, body=body))

    def history(self, scope: ScopeLike, id: str, *, vault: bool = False) -> List[Version]:
        """Every version of the memory, oldest first."""
        q = _scope_query(scope)
        if vault:
            q.append(("vault", "true"))
        res = self._call("GET", _id_path("/v1/memories/", id, "/history"), q)
        return [Version.from_dict(v) for v in res.get("versions") or []]

    def rollback(self, scope: ScopeLike, id: str, version: int, *, reason: Optional[str] = None) -> Memory:
        """Writes the memory's state at version as a new version."""
        body: Dict[str, Any] = {"version": version}
        _set(body, "reason", reason)
        path = _id_path("/v1/memories/", id, "/rollback")
        return Memory.from_dict(self._call("POST", path, _scope_query(scope), body=body))

    # Retrieval.

    def search(
        self,
        scope: ScopeLike,
        query: str,
        *,
        k: Optional[int] = None,
        filter: Union[MemoryFilter, Mapping[str, Any], None] = None,
        explain: Optional[bool] = None,
        channels: Optional[Sequence[str]] = None,
        now: Optional[Time] = None,
        budget: Optional[int] = None,
        decay: Optional[bool] = None,
        vault: Optional[bool] = None,
        mode: Optional[str] = None,
        steps: Optional[int] = None,
        llm_calls: Optional[int] = None,
        llm_tokens: Optional[int] = None,
    ) -> SearchResult:
        """The k (default 10) memories that best answer query; with budget,
        also the context assembled from them within that many tokens. mode
        "agentic" searches in steps (at most steps, llm_calls and llm_tokens)
        and returns their trace."""
        body: Dict[str, Any] = {"scope": _scope(scope), "query": query}
        _set(body, "k", k)
        if filter is not None:
            body["filter"] = encode(_filter(filter))
        _set(body, "explain", explain)
        _set(body, "channels", list(channels) if channels is not None else None)
        _set(body, "now", format_time(now))
        _set(body, "budget", budget)
        _set(body, "decay", decay)
        _set(body, "vault", vault)
        _set(body, "mode", mode)
        _set(body, "steps", steps)
        _set(body, "llm_calls", llm_calls)
        _set(body, "llm_tokens", llm_tokens)
        return SearchResult.from_dict(self._call("POST", "/v1/search", body=body))

    def profile(self, scope: ScopeLike) -> Profile:
        """The user's traits, states and core memories."""
        return Profile.from_dict(self._call("GET", "/v1/profile", _scope_query(scope)))

    def embeddings(
        self,
        input: Union[str, Sequence[str]],
        *,
        model: Optional[str] = None,
        encoding_format: Optional[str] = None,
        dimensions: Optional[int] = None,
        user: Optional[str] = None,
    ) -> EmbeddingsResponse:
        """The server embedder's vectors of input (one text or up to 2048);
        UnavailableError when the server has no embedder."""
        body: Dict[str, Any] = {"input": input if isinstance(input, str) else list(input)}
        _set(body, "model", model)
        _set(body, "encoding_format", encoding_format)
        _set(body, "dimensions", dimensions)
        _set(body, "user", user)
        return EmbeddingsResponse.from_dict(self._call("POST", "/v1/embeddings", body=body))

    # Conflicts.

    def list_scopes(
        self, *, org: Optional[str] = None, project: Optional[str] = None, limit: Optional[int] = None
    ) -> ScopeList:
        """The users, agents and sessions of a tenant that hold active
        memories, with counts and last activity. org and project default to
        the API key's (required without keys); a key bound to a user sees
        that user's scopes; ForbiddenError for another tenant."""
        q: _Query = []
        _add(q, "org", org)
        _add(q, "project", project)
        _add(q, "limit", limit)
        return ScopeList.from_dict(self._call("GET", "/v1/scopes", q))

    def list_conflicts(self, scope: ScopeLike) -> List[Conflict]:
        """The scope's open conflicts, newest first."""
        res = self._call("GET", "/v1/conflicts", _scope_query(scope))
        return [Conflict.from_dict(c) for c in res.get("conflicts") or []]

    def resolve_conflict(
        self, scope: ScopeLike, id: str, keep: str, *, action: Optional[str] = None, reason: Optional[str] = None
    ) -> ConflictResolution:
        """Closes the conflict: keep stays current, the other member is
        superseded by it (action "supersede", the default) or deleted ("delete")."""
        body: Dict[str, Any] = {"keep": keep}
        _set(body, "action", action)
        _set(body, "reason", reason)
        path = _id_path("/v1/conflicts/", id, "/resolve")
        return ConflictResolution.from_dict(self._call("POST", path, _scope_query(scope), body=body))

    # Jobs.

    def list_jobs(
        self,
        scope: ScopeLike,
        *,
        states: Optional[Sequence[str]] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Job]:
        """One page of the scope's background jobs."""
        q = _scope_query(scope)
        _add_all(q, "state", states)
        _add(q, "limit", limit)
        _add(q, "cursor", cursor)
        return _page(self._call("GET", "/v1/jobs", q), "jobs", Job)

    def iter_jobs(self, scope: ScopeLike, **filters: Any) -> Iterator[Job]:
        """Every job list_jobs(scope, **filters) pages through."""
        return _iterate(lambda cursor: self.list_jobs(scope, cursor=cursor, **filters))

    def get_job(self, scope: ScopeLike, id: str) -> Job:
        """The job with this id; NotFoundError when the scope has none."""
        return Job.from_dict(self._call("GET", _id_path("/v1/jobs/", id), _scope_query(scope)))

    def wait_job(self, scope: ScopeLike, id: str, *, timeout: float = 60.0, interval: float = 0.2) -> Job:
        """Polls the job until it is done or failed and returns it;
        UnavailableError (status 0) when that takes longer than timeout seconds."""
        deadline = time.monotonic() + timeout
        while True:
            job = self.get_job(scope, id)
            if job.state in ("done", "failed"):
                return job
            if time.monotonic() >= deadline:
                raise errors.UnavailableError(
                    0, errors.UNAVAILABLE, f"job {id} is still {job.state} after {timeout:g}s"
                )
            time.sleep(interval)

    # The entity graph.

    def list_entities(
        self,
        scope: ScopeLike,
        *,
        type: Optional[str] = None,
        prefix: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[Entity]:
        """One page of the entities (people, places, things) named in the
        scope's memories, by normalised name; type keeps one entity type,
        prefix the names that start with it (case and accents folded).
        UnavailableError when the server keeps no entity graph."""
        q = _scope_query(scope)
        _add(q, "type", type)
        _add(q, "prefix", prefix)
        _add(q, "limit", limit)
        _add(q, "cursor", cursor)
        return _page(self._call("GET", "/v1/entities", q), "entities", Entity)

    def iter_entities(self, scope: ScopeLike, **filters: Any) -> Iterator[Entity]:
        """Every entity list_entities(scope, **filters) pages through."""
        return _iterate(lambda cursor: self.list_entities(scope, cursor=cursor, **filters))

    def get_entity(self, scope: ScopeLike, id: str) -> EntityDetail:
        """The entity with the memories that name it, its relations and its
        timeline; NotFoundError when the scope has no such entity."""
        return EntityDetail.from_dict(self._call("GET", _id_path("/v1/entities/", id), _scope_query(scope)))

    def delete_entity(self, scope: ScopeLike, id: str) -> None:
        """Deletes the entity, its mentions and its relations (the memories
        stay); NotFoundError when the scope has no such entity. The scope
        must name neither an agent nor a session."""
        self._call("DELETE", _id_path("/v1/entities/", id), _scope_query(scope))

    def merge_entities(self, scope: ScopeLike, id: str, from_: Sequence[str]) -> Entity:
        """Merges the entities from_ into id (their mentions, relations and
        names move to it; they are gone but for their history) and returns
        it. BadRequestError names a bad field; NotFoundError when the scope
        lacks one of them. The scope must name neither an agent nor a
        session."""
        path = _id_path("/v1/entities/", id, "/merge")
        return Entity.from_dict(self._call("POST", path, _scope_query(scope), body={"from": list(from_)}))

    def split_entity(
        self, scope: ScopeLike, id: str, name: str, memories: Sequence[str], *, type: Optional[str] = None
    ) -> Entity:
        """Moves the mentions of memories off the entity id to a new entity
        called name, with their share of its relations, and returns the new
        entity. BadRequestError names a bad field."""
        body: Dict[str, Any] = {"name": name, "memories": list(memories)}
        _set(body, "type", type)
        path = _id_path("/v1/entities/", id, "/split")
        return Entity.from_dict(self._call("POST", path, _scope_query(scope), body=body))

    def entity_history(self, scope: ScopeLike, id: str) -> List[EntityVersion]:
        """Every version of the entity, oldest first; a merged or deleted
        entity's too."""
        res = self._call("GET", _id_path("/v1/entities/", id, "/history"), _scope_query(scope))
        return [EntityVersion.from_dict(v) for v in res.get("versions") or []]

    def graph(
        self,
        scope: ScopeLike,
        *,
        entity: Optional[str] = None,
        hops: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> Graph:
        """The scope's heaviest current relations and their ends or, with
        entity, the current relations within hops (1 or 2) of it; limit
        caps the edges. NotFoundError when the scope has no such entity."""
        q = _scope_query(scope)
        _add(q, "entity", entity)
        _add(q, "hops", hops)
        _add(q, "limit", limit)
        return Graph.from_dict(self._call("GET", "/v1/graph", q))

    def list_communities(self, scope: ScopeLike) -> List[Community]:
        """The scope's communities, by id. A scope naming an agent or a
        session sees only the members its memories mention and no summary.
        UnavailableError when the server keeps no communities."""
        got = self._call("GET", "/v1/communities", _scope_query(scope))
        return [Community.from_dict(c) for c in got["communities"]]

    def get_community(self, scope: ScopeLike, id: str) -> CommunityDetail:
        """The community with its members' entities; NotFoundError when the
        scope has no such community."""
        return CommunityDetail.from_dict(self._call("GET", _id_path("/v1/communities/", id), _scope_query(scope)))

    def refresh_communities(self, scope: ScopeLike, *, full: bool = False) -> RefreshResult:
        """Recomputes the communities of the scope's user that changed since
        the last refresh (every one with full); needs a write key. The scope
        must name neither an agent nor a session."""
        body: Dict[str, Any] = {}
        if full:
            body["full"] = True
        return RefreshResult.from_dict(self._call("POST", "/v1/communities/refresh", _scope_query(scope), body=body))

    # Scopes, export and import, audit.

    def delete_scope(self, scope: ScopeLike) -> PurgeCounts:
        """Deletes every record of the scope for good (admin keys only) and counts them."""
        return PurgeCounts.from_dict(self._call("DELETE", "/v1/scope", _scope_query(scope)))

    def export(self, scope: ScopeLike, *, vault: bool = False) -> Iterator[Record]:
        """The scope's records as the server streams them (NDJSON), one at a
        time. A refusal (a bad scope, a key not allowed) raises here; a
        failure after the stream started raises EngramError from the
        iteration. Each read of the stream waits at most timeout seconds;
        leaving the loop early closes the stream."""
        q = _scope_query(scope)
        if vault:
            q.append(("vault", "true"))
        resp = self._open("GET", "/v1/export", q, accept="application/x-ndjson")
        return self._records(resp)

    def _records(self, resp: Any) -> Iterator[Record]:
        with resp:
            n = 0
            while True:
                try:
                    line = resp.readline()
                except (OSError, socket.timeout) as e:
                    raise errors.UnavailableError(
                        0, errors.UNAVAILABLE, f"the export stream from {self.base_url} broke off after {n} lines: {e}"
                    ) from None
                if not line:
                    return
                n += 1
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except ValueError as e:
                    raise EngramError(0, errors.INTERNAL, f"export line {n} is not JSON: {e}") from None
                if "error" in obj and "type" not in obj:
                    err = obj["error"] or {}
                    raise make_error(200, str(err.get("code", errors.INTERNAL)), str(err.get("message", "")))
                yield Record.from_dict(obj)

    def import_records(
        self, scope: ScopeLike, records: Iterable[Union[Record, Mapping[str, Any]]]
    ) -> ImportResult:
        """Stores exported records into the scope, all or nothing; records
        identical to stored ones are skipped, records whose id is taken
        elsewhere get a fresh one (see the result's renamed)."""
        lines = []
        for i, r in enumerate(records, 1):
            try:
                lines.append(json.dumps(encode(r), ensure_ascii=False, allow_nan=False))
            except (TypeError, ValueError) as e:
                raise errors.InvalidError(0, errors.INVALID, f"import: record {i} is not representable as JSON: {e}") from None
        data = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
        res = self._call("POST", "/v1/import", _scope_query(scope), raw=(data, "application/x-ndjson"))
        return ImportResult.from_dict(res)

    def audit(
        self,
        scope: ScopeLike,
        *,
        ops: Optional[Sequence[str]] = None,
        after: Optional[Time] = None,
        before: Optional[Time] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Page[AuditEntry]:
        """One page of the scope's audit log (ops such as memory.update)."""
        q = _scope_query(scope)
        _add_all(q, "op", ops)
        _add(q, "after", format_time(after))
        _add(q, "before", format_time(before))
        _add(q, "limit", limit)
        _add(q, "cursor", cursor)
        return _page(self._call("GET", "/v1/audit", q), "entries", AuditEntry)

    def iter_audit(self, scope: ScopeLike, **filters: Any) -> Iterator[AuditEntry]:
        """Every entry audit(scope, **filters) pages through."""
        return _iterate(lambda cursor: self.audit(scope, cursor=cursor, **filters))

    # API keys (admin keys only).

    def create_key(self, namespace: NamespaceLike, role: str, *, name: Optional[str] = None) -> CreatedKey:
        """A new API key of the namespace's org and project (and user, when
        it names one) with role read, write or admin. The secret is in the
        answer only."""
        body: Dict[str, Any] = {"namespace": _namespace(namespace), "role": role}
        _set(body, "name", name)
        return CreatedKey.from_dict(self._call("POST", "/v1/keys", body=body))

    def list_keys(self, org: str, project: str, *, user: Optional[str] = None) -> List[APIKey]:
        """The keys of the project, only those bound to user when given."""
        q: _Query = [("org", org), ("project", project)]
        _add(q, "user", user)
        return [APIKey.from_dict(k) for k in self._call("GET", "/v1/keys", q).get("keys") or []]

    def revoke_key(self, org: str, project: str, id: str, *, user: Optional[str] = None) -> None:
        """Revokes the key; NotFoundError when the project has no such key."""
        q: _Query = [("org", org), ("project", project)]
        _add(q, "user", user)
        self._call("DELETE", _id_path("/v1/keys/", id), q)

    # Resources.

    def add_resource(
        self,
        scope: NamespaceLike,
        content: bytes,
        *,
        name: str,
        mime_type: str = "application/octet-stream",
        source: Optional[str] = None,
    ) -> Resource:
        """Uploads content as a file named name into the namespace scope (a
        multipart form built in memory). A document (text/plain,
        text/markdown, text/html, application/pdf) is also split into
        memories of kind resource that cite it. TooLargeError over the
        server's upload limit or the tenant's quota; nothing is stored then."""
        q = _scope_query(scope)
        _add(q, "name", name)
        _add(q, "source", source)
        boundary = "engram-" + uuid.uuid4().hex
        fname = name.replace("\\", "\\\\").replace('"', '\\"').replace("\r", " ").replace("\n", " ")
        head = (
            f"--{boundary}\r\n"
            f'Content-Disposition: form-data; name="file"; filename="{fname}"\r\n'
            f"Content-Type: {mime_type}\r\n\r\n"
        ).encode("utf-8")
        data = head + bytes(content) + f"\r\n--{boundary}--\r\n".encode("ascii")
        raw = (data, "multipart/form-data; boundary=" + boundary)
        return Resource.from_dict(self._call("POST", "/v1/resources", q, raw=raw))

    def list_resources(
        self, scope: ScopeLike, *, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> Page[Resource]:
        """One page of the scope's resources, newest first."""
        q = _scope_query(scope)
        _add(q, "limit", limit)
        _add(q, "cursor", cursor)
        return _page(self._call("GET", "/v1/resources", q), "resources", Resource)

    def get_resource(self, scope: ScopeLike, id: str) -> Resource:
        """The resource's metadata; NotFoundError when the scope has none."""
        return Resource.from_dict(self._call("GET", _id_path("/v1/resources/", id), _scope_query(scope)))

    def download_resource(self, scope: ScopeLike, id: str) -> bytes:
        """The resource's content; NotFoundError when the scope has none."""
        with self._open("GET", _id_path("/v1/resources/", id, "/content"), _scope_query(scope), accept="*/*") as resp:
            return bytes(resp.read())

    def delete_resource(self, scope: ScopeLike, id: str) -> None:
        """Deletes the resource, its content and its memories; NotFoundError
        when the scope has none."""
        self._call("DELETE", _id_path("/v1/resources/", id), _scope_query(scope))

    # Identities: faces and voices clustered into persistent identities.

    def add_observations(
        self, namespace: NamespaceLike, observations: Sequence[Union[ObservationInput, Mapping[str, Any]]]
    ) -> AddObservationsResult:
        """Stores observations (at most 256), each joining the nearest
        identity of its modality or starting one. The first observation of
        a modality declares its dimension; another width later is a
        BadRequestError naming the field. All or nothing."""
        body = {"namespace": _namespace(namespace), "observations": [encode(o) for o in observations]}
        return AddObservationsResult.from_dict(self._call("POST", "/v1/observations", body=body))

    def list_identities(
        self, scope: ScopeLike, *, modality: Optional[str] = None, person: Optional[str] = None
    ) -> List[Identity]:
        """The identities of the scope's user, oldest first; modality and
        person (a person id) narrow them."""
        q = _scope_query(scope)
        _add(q, "modality", modality)
        _add(q, "person", person)
        return [Identity.from_dict(i) for i in self._call("GET", "/v1/identities", q).get("identities") or []]

    def get_identity(self, scope: ScopeLike, id: str) -> IdentityDetail:
        """The identity with its observations and the episodes they were
        observed in; NotFoundError when the scope has none."""
        return IdentityDetail.from_dict(self._call("GET", _id_path("/v1/identities/", id), _scope_query(scope)))

    def delete_identity(self, scope: ScopeLike, id: str) -> None:
        """Deletes the identity and its observations for good."""
        self._call("DELETE", _id_path("/v1/identities/", id), _scope_query(scope))

    def link_identities(
        self,
        scope: ScopeLike,
        *,
        identities: Optional[Sequence[str]] = None,
        name: Optional[str] = None,
        person_id: Optional[str] = None,
        source: Optional[str] = None,
        episode_id: Optional[str] = None,
    ) -> Person:
        """Records that identities and a name are one person, asserted by
        the client (source "client", the default) or stated by an episode
        (source "episode" with its episode_id)."""
        body: Dict[str, Any] = {}
        for k, v in (("identities", list(identities) if identities is not None else None), ("name", name),
                     ("person_id", person_id), ("source", source), ("episode_id", episode_id)):
            if v is not None:
                body[k] = v
        return Person.from_dict(self._call("POST", "/v1/identities/link", _scope_query(scope), body=body))

    def unlink_identity(self, scope: ScopeLike, id: str) -> Identity:
        """Takes the identity out of its person."""
        return Identity.from_dict(self._call("POST", _id_path("/v1/identities/", id, "/unlink"), _scope_query(scope), body={}))

    def merge_identities(self, scope: ScopeLike, into: str, from_: Sequence[str]) -> Identity:
        """Merges the identities from_ (of into's modality) into into."""
        body = {"into": into, "from": list(from_)}
        return Identity.from_dict(self._call("POST", "/v1/identities/merge", _scope_query(scope), body=body))

    def split_identity(self, scope: ScopeLike, id: str, observations: Sequence[str], *, label: Optional[str] = None) -> Identity:
        """Moves the listed observations (some, not all, of the identity's)
        to a new identity, which it returns."""
        body: Dict[str, Any] = {"observations": list(observations)}
        if label is not None:
            body["label"] = label
        return Identity.from_dict(self._call("POST", _id_path("/v1/identities/", id, "/split"), _scope_query(scope), body=body))

    def list_persons(self, scope: ScopeLike) -> List[Person]:
        """The persons of the scope's user with their identities."""
        return [Person.from_dict(p) for p in self._call("GET", "/v1/persons", _scope_query(scope)).get("persons") or []]

    def identity_history(self, scope: ScopeLike, id: str) -> List[IdentityEvent]:
        """The history of an identity, an observation or a person, oldest first."""
        r = self._call("GET", _id_path("/v1/identities/", id, "/history"), _scope_query(scope))
        return [IdentityEvent.from_dict(e) for e in r.get("events") or []]

    # Transport.

    def _call(
        self,
        method: str,
        path: str,
        query: Optional[_Query] = None,
        *,
        body: Any = None,
        raw: Optional[Tuple[bytes, str]] = None,
    ) -> Any:
        """Sends a request and returns its decoded JSON answer ({} when it has none)."""
        data: Optional[bytes] = None
        ctype: Optional[str] = None
        if body is not None:
            try:
                data = json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
            except (TypeError, ValueError) as e:
                raise errors.InvalidError(0, errors.INVALID, f"request is not representable as JSON: {e}") from None
            ctype = "application/json"
        elif raw is not None:
            data, ctype = raw
        with self._open(method, path, query, data=data, content_type=ctype) as resp:
            payload = resp.read()
        if not payload:
            return {}
        try:
            return json.loads(payload)
        except ValueError as e:
            raise EngramError(resp.status, errors.INTERNAL, f"cannot decode the answer to {method} {path}: {e}") from None

    def _open(
        self,
        method: str,
        path: str,
        query: Optional[_Query] = None,
        *,
        data: Optional[bytes] = None,
        content_type: Optional[str] = None,
        accept: str = "application/json",
    ) -> Any:
        """Sends a request and returns the open response of a 2xx answer;
        raises the EngramError of any other."""
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Accept", accept)
        req.add_header("User-Agent", "engram-client-python")
        if content_type:
            req.add_header("Content-Type", content_type)
        if self.api_key:
            req.add_header("Authorization", "Bearer " + self.api_key)
        if self.actor:
            req.add_header(ACTOR_HEADER, self.actor)
        try:
            return urllib.request.urlopen(req, timeout=self.timeout)
        except urllib.error.HTTPError as e:
            with e:
                raise _response_error(e.code, e.reason, e.headers, e.read(1 << 20)) from None
        except (socket.timeout, TimeoutError):
            raise errors.UnavailableError(
                0, errors.UNAVAILABLE, f"the engram server at {self.base_url} did not answer {method} {path} within {self.timeout:g}s"
            ) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise errors.UnavailableError(
                    0, errors.UNAVAILABLE, f"the engram server at {self.base_url} did not answer {method} {path} within {self.timeout:g}s"
                ) from None
            raise errors.UnavailableError(
                0, errors.UNAVAILABLE, f"cannot reach the engram server at {self.base_url}: {reason}"
            ) from None


def _response_error(status: int, reason: str, headers: Any, body: bytes) -> EngramError:
    """The EngramError of an answer: the server's code and message, or,
    when the body is not the REST error shape, a code guessed from the status."""
    retry_after: Optional[float] = None
    ra = headers.get("Retry-After") if headers is not None else None
    if ra:
        try:
            retry_after = float(ra)
        except ValueError:
            retry_after = None
    try:
        detail = json.loads(body).get("error")
        if isinstance(detail, dict) and detail.get("code"):
            return make_error(status, str(detail["code"]), str(detail.get("message", "")), retry_after)
    except (ValueError, AttributeError):
        pass
    snippet = body.decode("utf-8", "replace").strip()[:200]
    msg = f"the server answered {status} {reason}" + (f": {snippet}" if snippet else "")
    return make_error(status, errors.code_of_status(status), msg, retry_after)


def _id_path(prefix: str, id: str, suffix: str = "") -> str:
    """prefix + id + suffix, refusing ids that would change the route."""
    what = _ID_WHAT.get(prefix, "memory")
    if not isinstance(id, str) or id.strip() in ("", ".", ".."):
        raise errors.InvalidError(0, errors.INVALID, f"{what} id {id!r} is empty or not an id")
    return prefix + urllib.parse.quote(id, safe="") + suffix


def _scope(s: ScopeLike) -> Dict[str, Any]:
    """The JSON object of a scope."""
    d = encode(s) if isinstance(s, Model) else dict(s)
    return {k: v for k, v in d.items() if v not in (None, "")}


def _namespace(n: NamespaceLike) -> Dict[str, Any]:
    """The JSON object of a namespace (a scope's include_shared dropped)."""
    d = _scope(n)
    d.pop("include_shared", None)
    return d


def _scope_query(s: ScopeLike) -> _Query:
    """The query parameters of a scope."""
    q: _Query = []
    for k, v in _scope(s).items():
        if k == "include_shared":
            if v:
                q.append((k, "true"))
        else:
            q.append((k, str(v)))
    return q


def _filter(f: Union[MemoryFilter, Mapping[str, Any], None]) -> MemoryFilter:
    """A copy of f as a MemoryFilter."""
    if f is None:
        return MemoryFilter()
    if isinstance(f, MemoryFilter):
        return copy.copy(f)
    return MemoryFilter(**dict(f))


def _add(q: _Query, name: str, v: Any) -> None:
    if v is None or v == "":
        return
    q.append((name, "true" if v is True else "false" if v is False else str(v)))


def _add_all(q: _Query, name: str, vs: Optional[Sequence[str]]) -> None:
    for v in vs or []:
        q.append((name, str(v)))


def _meta_value(key: str, v: Any) -> str:
    """A metadata value as a query parameter: JSON, except a string that is
    not JSON by itself, which goes as it is."""
    if isinstance(v, str):
        try:
            json.loads(v)
        except ValueError:
            return v
    try:
        return json.dumps(v, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise errors.InvalidError(0, errors.INVALID, f"filter: metadata {key!r}: value is not representable as JSON: {e}") from None


def _add_meta(q: _Query, prefix: str, md: Optional[Mapping[str, Any]]) -> None:
    for k, v in (md or {}).items():
        q.append((prefix + k, _meta_value(k, v)))


def _set(body: Dict[str, Any], name: str, v: Any) -> None:
    if v is not None:
        body[name] = v


def _page(res: Mapping[str, Any], field: str, cls: Type[M]) -> Page[M]:
    return Page(items=[cls.from_dict(x) for x in res.get(field) or []], next=res.get("next") or None)


def _iterate(fetch: Callable[[Optional[str]], Page[T]]) -> Iterator[T]:
    """The items of every page, fetching the next page when one runs out."""
    cursor: Optional[str] = None
    while True:
        page = fetch(cursor)
        yield from page.items
        if not page.next:
            return
        cursor = page.next


__all__ = ["Client", "DEFAULT_TIMEOUT", "ACTOR_HEADER", "ScopeLike", "NamespaceLike"]

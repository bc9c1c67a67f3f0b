"""The records of engram's REST API as dataclasses.

Times are kept as the RFC 3339 strings the server sends (with up to
nanosecond precision, which datetime cannot hold); where a request takes a
time, a datetime or such a string is accepted.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, Dict, Generic, List, Optional, TypeVar, Union

from ._convert import Model

Metadata = Dict[str, Any]
"""Free-form JSON object, at most 16 KiB when encoded."""

Time = Union[str, _dt.datetime]
"""A time in a request: an RFC 3339 string or a datetime (naive = UTC)."""

# Memory kinds.
KIND_CORE = "core"
KIND_EPISODIC = "episodic"
KIND_SEMANTIC = "semantic"
KIND_PROCEDURAL = "procedural"
KIND_RESOURCE = "resource"
KIND_VAULT = "vault"

# Memory statuses.
STATUS_ACTIVE = "active"
STATUS_SUPERSEDED = "superseded"
STATUS_DELETED = "deleted"
STATUS_EXPIRED = "expired"

# API key roles.
ROLE_READ = "read"
ROLE_WRITE = "write"
ROLE_ADMIN = "admin"


@dataclass
class Namespace(Model):
    """Where a record is written: org and project, optionally narrowed to a
    user, an agent and a session."""

    org: str
    project: str
    user: Optional[str] = None
    agent: Optional[str] = None
    session: Optional[str] = None


@dataclass
class Scope(Model):
    """What a read sees: a namespace, where an empty agent or session
    matches any, and include_shared also reads project-level records."""

    org: str
    project: str
    user: Optional[str] = None
    agent: Optional[str] = None
    session: Optional[str] = None
    include_shared: Optional[bool] = None

    def namespace(self) -> Namespace:
        """The namespace of the scope, for writes."""
        return Namespace(self.org, self.project, self.user, self.agent, self.session)


@dataclass
class TranscriptSegment(Model):
    """One stretch of speech in an audio or video, its times in seconds
    from the beginning of the media."""

    start: float
    end: float
    text: str
    speaker: Optional[str] = None


@dataclass
class Media(Model):
    """An image, audio or video an episode carries: a stored resource of
    the same tenant (upload it first with add_resource), its kind, for
    audio and video an optional span in seconds, and the caption or
    transcript to form memories from (else the server's model endpoint
    makes one, when configured)."""

    resource_id: str
    kind: str
    start: Optional[float] = None
    end: Optional[float] = None
    caption: Optional[str] = None
    transcript: Optional[str] = None
    segments: Optional[List[TranscriptSegment]] = None
    embedding: Optional[List[float]] = None


# Media kinds.
MEDIA_IMAGE = "image"
MEDIA_AUDIO = "audio"
MEDIA_VIDEO = "video"


@dataclass
class EpisodeInput(Model):
    """One turn or event to store: content is required."""

    content: str
    role: Optional[str] = None
    speaker: Optional[str] = None
    id: Optional[str] = None
    modality: Optional[str] = None
    occurred_at: Optional[Time] = None
    metadata: Optional[Metadata] = None
    media: Optional[List[Media]] = None


@dataclass
class Episode(Model):
    """A stored turn or event."""

    id: str
    namespace: Namespace
    content: str
    occurred_at: str
    received_at: str
    role: Optional[str] = None
    speaker: Optional[str] = None
    modality: Optional[str] = None
    metadata: Optional[Metadata] = None
    media: Optional[List[Media]] = None


@dataclass
class MemoryInput(Model):
    """A memory to add, or the new memory of a supersede: value is required."""

    value: str
    kind: Optional[str] = None
    abstraction: Optional[str] = None
    cues: Optional[List[str]] = None
    language: Optional[str] = None
    confidence: Optional[float] = None
    importance: Optional[float] = None
    valid_from: Optional[Time] = None
    valid_to: Optional[Time] = None
    expires_at: Optional[Time] = None
    metadata: Optional[Metadata] = None
    id: Optional[str] = None


@dataclass
class Memory(Model):
    """A stored memory, at its current version."""

    id: str
    namespace: Namespace
    kind: str
    value: str
    confidence: float
    importance: float
    status: str
    created_at: str
    updated_at: str
    version: int
    access_count: int
    abstraction: Optional[str] = None
    cues: Optional[List[str]] = None
    language: Optional[str] = None
    valid_from: Optional[str] = None
    valid_to: Optional[str] = None
    expired_at: Optional[str] = None
    expires_at: Optional[str] = None
    sources: Optional[List[str]] = None
    superseded_by: Optional[str] = None
    metadata: Optional[Metadata] = None
    last_accessed: Optional[str] = None


@dataclass
class MemoryPatch(Model):
    """Fields of a memory to change; None leaves a field as it is, and
    metadata replaces the whole map."""

    kind: Optional[str] = None
    abstraction: Optional[str] = None
    cues: Optional[List[str]] = None
    value: Optional[str] = None
    language: Optional[str] = None
    confidence: Optional[float] = None
    importance: Optional[float] = None
    valid_from: Optional[Time] = None
    valid_to: Optional[Time] = None
    expires_at: Optional[Time] = None
    metadata: Optional[Metadata] = None
    reason: Optional[str] = None


@dataclass
class MemoryFilter(Model):
    """Narrows a list or a search; every field is optional."""

    kinds: Optional[List[str]] = None
    statuses: Optional[List[str]] = None
    created_after: Optional[Time] = None
    created_before: Optional[Time] = None
    valid_at: Optional[Time] = None
    valid_after: Optional[Time] = None
    valid_before: Optional[Time] = None
    metadata: Optional[Metadata] = None
    metadata_in: Optional[Dict[str, List[Any]]] = None
    contains: Optional[str] = None
    ids: Optional[List[str]] = None
    sources: Optional[List[str]] = None
    limit: Optional[int] = None
    cursor: Optional[str] = None


@dataclass
class Job(Model):
    """A background job: kind "form" forms the memories of its episodes,
    kind "embed" embeds its memories (the dense channel finds them once it
    is done)."""

    id: str
    namespace: Namespace
    kind: str
    state: str
    attempts: int
    run_after: str
    created_at: str
    updated_at: str
    episodes: Optional[List[str]] = None
    memories: Optional[List[str]] = None
    last_error: Optional[str] = None
    lease_owner: Optional[str] = None
    lease_until: Optional[str] = None


@dataclass
class SensitiveCount(Model):
    """How many secrets or personal data of one kind a write sealed or
    redacted (never the values); requested is the policy's treatment when
    it could not be done (seal without a vault key is done as redact)."""

    kind: str
    treatment: str
    count: int
    requested: Optional[str] = None


@dataclass
class AddEpisodesResult(Model):
    """The stored episodes and the memories formation added or changed;
    with an asynchronous add, job instead of memories; embed_job when the
    server answered before embedding the memories."""

    episodes: List[Episode]
    memories: List[Memory]
    decisions: Optional[Dict[str, int]] = None
    job: Optional[Job] = None
    embed_job: Optional[Job] = None
    unformed: Optional[List[str]] = None
    sensitive: Optional[List[SensitiveCount]] = None


@dataclass
class SupersedeResult(Model):
    """Both memories after a supersede."""

    old: Memory
    new: Memory


@dataclass
class Version(Model):
    """One change of a memory: its old and new state."""

    memory_id: str
    namespace: Namespace
    version: int
    op: str
    at: str
    old: Optional[Memory] = None
    new: Optional[Memory] = None
    actor: Optional[str] = None
    reason: Optional[str] = None


@dataclass
class AuditEntry(Model):
    """One audited operation."""

    id: str
    namespace: Namespace
    op: str
    at: str
    actor: Optional[str] = None
    ids: Optional[List[str]] = None
    detail: Optional[str] = None


@dataclass
class ChannelHit(Model):
    """A hit's rank and score in one retrieval channel."""

    channel: str
    rank: int
    score: float


@dataclass
class Hit(Model):
    """A memory found by a search, with its score."""

    memory: Memory
    score: float
    explain: Optional[List[ChannelHit]] = None
    factors: Optional[Dict[str, float]] = None
    tokens: Optional[int] = None
    collapsed: Optional[List[str]] = None


@dataclass
class AgentStep(Model):
    """One step of an agentic search: its action (search, refine, expand or
    stop), the queries it ran, the ids it brought into the first places,
    their share of the score, who chose it (rules or llm) and why."""

    action: str
    gain: float
    by: str
    queries: Optional[List[str]] = None
    new: Optional[List[str]] = None
    reason: Optional[str] = None


@dataclass
class SearchResult(Model):
    """The hits of a search, the assembled context when it set a budget, and
    for an agentic search its trace and the chat model calls and tokens it
    spent."""

    hits: List[Hit]
    context: Optional[str] = None
    tokens: Optional[int] = None
    trace: Optional[List[AgentStep]] = None
    llm_calls: Optional[int] = None
    llm_tokens: Optional[int] = None
    empty_scope: Optional[bool] = None


@dataclass
class Profile(Model):
    """What is known of a user: traits, states and the core memories."""

    traits: List[str]
    states: List[str]
    memories: List[Memory]


@dataclass
class Conflict(Model):
    """Memories that contradict each other, waiting to be resolved."""

    id: str
    memories: List[Memory]


@dataclass
class ScopeCount(Model):
    """A scope of a tenant with its active memories and the latest update
    among them."""

    namespace: Namespace
    memories: int
    last_activity: str


@dataclass
class ScopeList(Model):
    """The tenant listed and its scopes that hold active memories."""

    tenant: Namespace
    scopes: List[ScopeCount]


@dataclass
class ConflictResolution(Model):
    """The kept memory and the other one after resolving a conflict."""

    kept: Memory
    other: Optional[Memory] = None


@dataclass
class PurgeCounts(Model):
    """How many records a scope deletion removed."""

    episodes: int
    memories: int
    versions: int
    resources: Optional[int] = None


@dataclass
class Record(Model):
    """One line of an export (and of an import): type names which of the
    other fields is set. data is the line as the server sent it, which an
    import sends back unchanged."""

    type: str
    episode: Optional[Episode] = None
    memory: Optional[Memory] = None
    version: Optional[Version] = None
    audit: Optional[AuditEntry] = None
    resource: Optional[Resource] = None
    resource_chunk: Optional[ResourceChunk] = None
    identity_modality: Optional[EmbeddingModality] = None
    person: Optional[Person] = None
    identity: Optional[Identity] = None
    observation: Optional[Observation] = None
    identity_event: Optional[IdentityEvent] = None
    data: Optional[Dict[str, Any]] = field(default=None, repr=False, compare=False)

    @classmethod
    def from_dict(cls, data: Any) -> "Record":
        """Builds the record and keeps data for a faithful import."""
        rec = super().from_dict({k: v for k, v in data.items() if k != "data"})
        rec.data = dict(data)
        return rec

    def to_dict(self) -> Dict[str, Any]:
        """The line as received when there is one, else built from the fields."""
        if self.data is not None:
            return dict(self.data)
        out = super().to_dict()
        out.pop("data", None)
        return out


@dataclass
class ImportResult(Model):
    """What an import stored: counts by type, records skipped because they
    were already stored, and records stored under a fresh id (old → new)."""

    episodes: int
    memories: int
    versions: int
    audit: int
    skipped: int
    renamed: Dict[str, str]
    resources: Optional[int] = None
    identity_records: Optional[int] = None
    sensitive: Optional[List[SensitiveCount]] = None


@dataclass
class Embedding(Model):
    """The vector of one input text: a list of floats, or a base64 string."""

    object: str
    index: int
    embedding: Union[List[float], str]


@dataclass
class EmbeddingsUsage(Model):
    """Tokens of the input."""

    prompt_tokens: int
    total_tokens: int


@dataclass
class EmbeddingsResponse(Model):
    """The embeddings of the input texts, in input order."""

    object: str
    data: List[Embedding]
    model: str
    usage: EmbeddingsUsage


@dataclass
class APIKey(Model):
    """An API key, without its secret."""

    id: str
    org: str
    project: str
    role: str
    created_at: str
    name: Optional[str] = None
    user: Optional[str] = None
    revoked_at: Optional[str] = None


@dataclass
class CreatedKey(Model):
    """A new key and its secret, which the server shows only once."""

    key: APIKey
    secret: str


# Entity types the server's extractor sets.
ENTITY_PERSON = "person"
ENTITY_PLACE = "place"
ENTITY_WORK = "work"
ENTITY_THING = "thing"


@dataclass
class Entity(Model):
    """A person, place or thing named in memories of one user; its
    namespace has only org, project and user. normalized is the name case-
    and accent-folded, as names are matched; mentions is how many memories
    name it."""

    id: str
    namespace: Namespace
    name: str
    normalized: str
    type: str
    status: str
    created_at: str
    updated_at: str
    mentions: int
    aliases: Optional[List[str]] = None
    summary: Optional[str] = None
    community: Optional[str] = None


@dataclass
class EntityVersion(Model):
    """One recorded change of an entity: op is create, rename, alias,
    type, update, merge, merged, split or delete; entity is the entity as
    the change left it (absent for a delete); related lists the other
    entities of a merge or a split."""

    entity_id: str
    namespace: Namespace
    version: int
    op: str
    at: str
    entity: Optional[Entity] = None
    related: Optional[List[str]] = None
    actor: Optional[str] = None


@dataclass
class Evidence(Model):
    """One memory's support of a relation, with a weight in (0, 1]."""

    memory_id: str
    weight: float


@dataclass
class Relation(Model):
    """A labelled edge between two entities (ids in source and target),
    with validity in event time (valid_at, invalid_at) and transaction time
    (created_at, expired_at: set once it is no longer current). weight is
    the sum of its evidence's weights."""

    id: str
    namespace: Namespace
    source: str
    target: str
    label: str
    weight: float
    created_at: str
    evidence: List[Evidence]
    valid_at: Optional[str] = None
    invalid_at: Optional[str] = None
    expired_at: Optional[str] = None


@dataclass
class TimelineEntry(Model):
    """One mention of an entity, in event-time order."""

    at: str
    memory_id: str
    status: str
    abstraction: Optional[str] = None


@dataclass
class EntityDetail(Model):
    """An entity with the active memories that name it (newest first), its
    relations (current and past, heaviest first) and its timeline (every
    mention, oldest first)."""

    entity: Entity
    memories: List[Memory]
    relations: List[Relation]
    timeline: List[TimelineEntry]


@dataclass
class Graph(Model):
    """A subgraph: entities (nodes) and the current relations between them (edges)."""

    nodes: List[Entity]
    edges: List[Relation]


@dataclass
class Community(Model):
    """A group of one user's entities more tied to each other than to the
    rest: members are entity ids (sorted), names the most central members'
    names, summary the names and the sentences of their memories that name
    the most of them (the memories in sources), abstract an LLM's summary
    when the server has one."""

    id: str
    namespace: Namespace
    members: List[str]
    names: List[str]
    summary: str
    sources: List[str]
    updated_at: str
    abstract: Optional[str] = None


@dataclass
class CommunityDetail(Model):
    """A community with its members' entities."""

    community: Community
    entities: List[Entity]


@dataclass
class RefreshResult(Model):
    """What a refresh of communities did: dirty entities had changed
    relations, recomputed entities had their community made again, written
    and deleted count communities, total is how many there are after."""

    full: bool
    dirty: int
    recomputed: int
    written: int
    deleted: int
    total: int


T = TypeVar("T")


@dataclass
class Page(Generic[T]):
    """One page of a list: its items, and the cursor of the next page
    (None on the last)."""

    items: List[T]
    next: Optional[str] = None


@dataclass
class Resource(Model):
    """A stored file: its name, MIME type, size and SHA-256 (the
    download's ETag), and how many memories of kind resource its document
    made."""

    id: str
    namespace: Namespace
    name: str
    mime_type: str
    size: int
    sha256: str
    memories: int
    created_at: str
    source: Optional[str] = None


@dataclass
class ResourceChunk(Model):
    """One chunk of a resource's content in an export: data is base64 of
    at most 1 MiB; the chunks follow their resource record in seq order."""

    resource_id: str
    namespace: Namespace
    seq: int
    data: str


@dataclass
class ResourceCitation(Model):
    """Where a memory of kind resource comes from (its metadata under
    "resource"): the span in the document's extracted text, in bytes and
    in characters, the page of a PDF and the heading path."""

    resource_id: str
    start: int
    end: int
    char_start: int
    char_end: int
    index: int
    page: Optional[int] = None
    headings: Optional[List[str]] = None
    name: Optional[str] = None


@dataclass
class MediaSpan(Model):
    """Where in an episode's audio or video an observation was made, in
    milliseconds from its start."""

    start_ms: int
    end_ms: int


@dataclass
class ObservationInput(Model):
    """One face or voice seen or heard: an embedding of a modality (a name
    such as "face" or "voice") from the client's own model."""

    modality: str
    embedding: List[float]
    id: Optional[str] = None
    episode_id: Optional[str] = None
    span: Optional[MediaSpan] = None
    at: Optional[Time] = None


@dataclass
class EmbeddingModality(Model):
    """A kind of embedding declared in a user's scope, with its dimension
    (an export's identity_modality record)."""

    namespace: Namespace
    name: str
    dim: int
    created_at: str


@dataclass
class Observation(Model):
    """A stored observation and the identity it went to."""

    id: str
    namespace: Namespace
    modality: str
    identity_id: str
    at: str
    embedding: Optional[List[float]] = None
    episode_id: Optional[str] = None
    span: Optional[MediaSpan] = None


@dataclass
class AddObservationsResult(Model):
    """Where each observation went, in request order, and the identities
    the batch's merge pass absorbed."""

    observations: List[Observation]
    merged: Optional[List[str]] = None


@dataclass
class Identity(Model):
    """A cluster of observations of one modality taken to be one face or
    one voice; centroid is the mean of their unit embeddings."""

    id: str
    namespace: Namespace
    modality: str
    count: int
    created_at: str
    updated_at: str
    label: Optional[str] = None
    centroid: Optional[List[float]] = None
    person_id: Optional[str] = None


@dataclass
class IdentityDetail(Model):
    """An identity with its observations (newest first) and the episodes
    they were observed in."""

    identity: Identity
    observations: List[Observation]
    episodes: Optional[List[Episode]] = None


@dataclass
class Person(Model):
    """Identities (a face, a voice) and a name taken to be one person;
    source is "episode" (stated by episode_id) or "client"."""

    id: str
    namespace: Namespace
    source: str
    created_at: str
    updated_at: str
    name: Optional[str] = None
    aliases: Optional[List[str]] = None
    entity_id: Optional[str] = None
    episode_id: Optional[str] = None
    identities: Optional[List[str]] = None


@dataclass
class IdentityEvent(Model):
    """One entry of the history of identities and persons (ids only)."""

    id: str
    namespace: Namespace
    op: str
    at: str
    identities: Optional[List[str]] = None
    observations: Optional[List[str]] = None
    person_id: Optional[str] = None
    source: Optional[str] = None
    episode_id: Optional[str] = None
    actor: Optional[str] = None

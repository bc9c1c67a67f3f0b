"""A client of engram's REST API, standard library only.

    from engram_client import Client, Scope
    c = Client("http://127.0.0.1:8080", api_key="ek_...")
    me = Scope("acme", "app", user="ann")
    c.add_episodes(me, [{"role": "user", "content": "I moved to Lisbon."}])
    print(c.search(me, "where does ann live?").hits[0].memory.value)

Every call raises EngramError (or a subclass per code) on failure.
"""

from .client import ACTOR_HEADER, DEFAULT_TIMEOUT, Client, NamespaceLike, ScopeLike
from .errors import (
    CONFLICT,
    FORBIDDEN,
    INTERNAL,
    INVALID,
    MISMATCH,
    NOT_FOUND,
    TOO_LARGE,
    TOO_MANY_REQUESTS,
    UNAUTHORIZED,
    UNAVAILABLE,
    UNSUPPORTED_MEDIA_TYPE,
    ConflictError,
    EngramError,
    ForbiddenError,
    InvalidError,
    NotFoundError,
    TooManyRequestsError,
    UnauthorizedError,
    UnavailableError,
)
from .models import (
    ENTITY_PERSON,
    ENTITY_PLACE,
    ENTITY_THING,
    ENTITY_WORK,
    KIND_CORE,
    KIND_EPISODIC,
    KIND_PROCEDURAL,
    KIND_RESOURCE,
    KIND_SEMANTIC,
    KIND_VAULT,
    ROLE_ADMIN,
    ROLE_READ,
    ROLE_WRITE,
    STATUS_ACTIVE,
    STATUS_DELETED,
    STATUS_EXPIRED,
    STATUS_SUPERSEDED,
    AddEpisodesResult,
    APIKey,
    AuditEntry,
    AgentStep,
    ChannelHit,
    Conflict,
    ConflictResolution,
    CreatedKey,
    Embedding,
    EmbeddingsResponse,
    EmbeddingsUsage,
    Entity,
    EntityDetail,
    Episode,
    EpisodeInput,
    Evidence,
    Graph,
    Community,
    CommunityDetail,
    RefreshResult,
    Hit,
    ImportResult,
    Job,
    Memory,
    MemoryFilter,
    MemoryInput,
    MemoryPatch,
    Metadata,
    Namespace,
    Page,
    Profile,
    Resource,
    ResourceCitation,
    PurgeCounts,
    Record,
    Relation,
    Scope,
    ScopeCount,
    ScopeList,
    SearchResult,
    SupersedeResult,
    Time,
    TimelineEntry,
    Version,
)

__version__ = "0.1.0"

__all__ = [name for name in dir() if not name.startswith("_")]

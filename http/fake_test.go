package http_test

import (
	"context"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/engramhq/engram"
)

// fakeService is an engram.Service that stores nothing: it records each
// call with its arguments and actor, and answers with err when set, else
// with values built from the arguments. It lets transport tests see what
// reached the service, and whether anything did.
type fakeService struct {
	mu    sync.Mutex
	calls []fakeCall
	err   error

	// exported is what Export emits; exportErr, when set, is returned after
	// them.
	exported  []engram.Record
	exportErr error
	// exportDelay is slept before each exported record, for a slow store.
	exportDelay time.Duration
}

type fakeCall struct {
	Method string
	Actor  string
	Scope  engram.Scope
	ID     string
	Arg    any
}

func (f *fakeService) record(ctx context.Context, method string, s engram.Scope, id string, arg any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fakeCall{Method: method, Actor: engram.ActorFrom(ctx), Scope: s, ID: id, Arg: arg})
	return f.err
}

func (f *fakeService) Calls() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeCall(nil), f.calls...)
}

func (f *fakeService) last() fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return fakeCall{}
	}
	return f.calls[len(f.calls)-1]
}

var fakeTime = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

func (f *fakeService) AddEpisodes(ctx context.Context, req engram.AddEpisodesRequest) (*engram.AddEpisodesResult, error) {
	if err := f.record(ctx, "AddEpisodes", engram.ScopeOf(req.Namespace), "", req); err != nil {
		return nil, err
	}
	res := &engram.AddEpisodesResult{}
	for _, in := range req.Episodes {
		res.Episodes = append(res.Episodes, engram.Episode{ID: engram.NewID(), Namespace: req.Namespace, Content: in.Content, OccurredAt: fakeTime, ReceivedAt: fakeTime, Metadata: in.Metadata})
	}
	return res, nil
}

func (f *fakeService) AddMemories(ctx context.Context, req engram.AddMemoriesRequest) ([]engram.Memory, error) {
	if err := f.record(ctx, "AddMemories", engram.ScopeOf(req.Namespace), "", req); err != nil {
		return nil, err
	}
	return req.Memories, nil
}

func (f *fakeService) GetEpisode(ctx context.Context, s engram.Scope, id string) (*engram.Episode, error) {
	if err := f.record(ctx, "GetEpisode", s, id, nil); err != nil {
		return nil, err
	}
	return &engram.Episode{ID: id, Namespace: s.Namespace(), Content: "x"}, nil
}

func (f *fakeService) GetMemory(ctx context.Context, s engram.Scope, id string) (*engram.Memory, error) {
	if err := f.record(ctx, "GetMemory", s, id, nil); err != nil {
		return nil, err
	}
	return &engram.Memory{ID: id, Namespace: s.Namespace(), Value: "x"}, nil
}

func (f *fakeService) ListEpisodes(ctx context.Context, s engram.Scope, fl engram.EpisodeFilter) (*engram.EpisodePage, error) {
	if err := f.record(ctx, "ListEpisodes", s, "", fl); err != nil {
		return nil, err
	}
	return &engram.EpisodePage{}, nil
}

func (f *fakeService) ListMemories(ctx context.Context, s engram.Scope, fl engram.MemoryFilter) (*engram.MemoryPage, error) {
	if err := f.record(ctx, "ListMemories", s, "", fl); err != nil {
		return nil, err
	}
	return &engram.MemoryPage{}, nil
}

func (f *fakeService) Search(ctx context.Context, req engram.SearchRequest) (*engram.SearchResult, error) {
	if err := f.record(ctx, "Search", req.Scope, "", req); err != nil {
		return nil, err
	}
	return &engram.SearchResult{}, nil
}

func (f *fakeService) UpdateMemory(ctx context.Context, s engram.Scope, id string, p engram.MemoryPatch) (*engram.Memory, error) {
	if err := f.record(ctx, "UpdateMemory", s, id, p); err != nil {
		return nil, err
	}
	return &engram.Memory{ID: id}, nil
}

func (f *fakeService) SupersedeMemory(ctx context.Context, s engram.Scope, id string, req engram.SupersedeRequest) (*engram.SupersedeResult, error) {
	if err := f.record(ctx, "SupersedeMemory", s, id, req); err != nil {
		return nil, err
	}
	return &engram.SupersedeResult{Old: engram.Memory{ID: id}, New: req.New}, nil
}

func (f *fakeService) DeleteMemory(ctx context.Context, s engram.Scope, id string, o engram.DeleteOptions) error {
	return f.record(ctx, "DeleteMemory", s, id, o)
}

func (f *fakeService) RestoreMemory(ctx context.Context, s engram.Scope, id string, reason string) (*engram.Memory, error) {
	if err := f.record(ctx, "RestoreMemory", s, id, reason); err != nil {
		return nil, err
	}
	return &engram.Memory{ID: id}, nil
}

func (f *fakeService) History(ctx context.Context, s engram.Scope, id string) ([]engram.Version, error) {
	if err := f.record(ctx, "History", s, id, nil); err != nil {
		return nil, err
	}
	return nil, nil
}

func (f *fakeService) Rollback(ctx context.Context, s engram.Scope, id string, v int, reason string) (*engram.Memory, error) {
	if err := f.record(ctx, "Rollback", s, id, [2]any{v, reason}); err != nil {
		return nil, err
	}
	return &engram.Memory{ID: id, Version: v}, nil
}

func (f *fakeService) DeleteEpisode(ctx context.Context, s engram.Scope, id string) (*engram.EpisodeDeleteResult, error) {
	return &engram.EpisodeDeleteResult{Episode: id, Removed: []string{}, Reformed: []string{}}, f.record(ctx, "DeleteEpisode", s, id, nil)
}

func (f *fakeService) DeleteScope(ctx context.Context, s engram.Scope) (*engram.PurgeCounts, error) {
	if err := f.record(ctx, "DeleteScope", s, "", nil); err != nil {
		return nil, err
	}
	return &engram.PurgeCounts{}, nil
}

func (f *fakeService) Export(ctx context.Context, s engram.Scope, fn func(engram.Record) error) error {
	if err := f.record(ctx, "Export", s, "", nil); err != nil {
		return err
	}
	for _, r := range f.exported {
		time.Sleep(f.exportDelay)
		if err := fn(r); err != nil {
			return err
		}
	}
	return f.exportErr
}

func (f *fakeService) Import(ctx context.Context, s engram.Scope, recs []engram.Record) (*engram.ImportResult, error) {
	if err := f.record(ctx, "Import", s, "", recs); err != nil {
		return nil, err
	}
	return &engram.ImportResult{Episodes: len(recs)}, nil
}

func (f *fakeService) Audit(ctx context.Context, s engram.Scope, fl engram.AuditFilter) (*engram.AuditPage, error) {
	if err := f.record(ctx, "Audit", s, "", fl); err != nil {
		return nil, err
	}
	return &engram.AuditPage{}, nil
}

func (f *fakeService) GetJob(ctx context.Context, s engram.Scope, id string) (*engram.Job, error) {
	if err := f.record(ctx, "GetJob", s, id, nil); err != nil {
		return nil, err
	}
	return &engram.Job{ID: id}, nil
}

func (f *fakeService) ListJobs(ctx context.Context, s engram.Scope, fl engram.JobFilter) (*engram.JobPage, error) {
	if err := f.record(ctx, "ListJobs", s, "", fl); err != nil {
		return nil, err
	}
	return &engram.JobPage{}, nil
}

// Namespaces validates the tenant and limit as the stores do and lists
// one scope.
func (f *fakeService) Namespaces(ctx context.Context, tenant engram.Namespace, limit int) ([]engram.NamespaceCount, error) {
	n := engram.Namespace{Org: tenant.Org, Project: tenant.Project}
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if _, err := engram.ClampLimit(limit); err != nil {
		return nil, err
	}
	if err := f.record(ctx, "Namespaces", engram.Scope{Org: n.Org, Project: n.Project}, "", limit); err != nil {
		return nil, err
	}
	n.User = "u1"
	return []engram.NamespaceCount{{Namespace: n, Memories: 1}}, nil
}

func (f *fakeService) Profile(ctx context.Context, s engram.Scope) (*engram.Profile, error) {
	if err := f.record(ctx, "Profile", s, "", nil); err != nil {
		return nil, err
	}
	return &engram.Profile{Traits: []string{}, States: []string{}, Memories: []engram.Memory{}}, nil
}

func (f *fakeService) ListEntities(ctx context.Context, s engram.Scope, fl engram.EntityFilter) (*engram.EntityPage, error) {
	if err := f.record(ctx, "ListEntities", s, "", fl); err != nil {
		return nil, err
	}
	return &engram.EntityPage{Entities: []engram.Entity{}}, nil
}

func (f *fakeService) GetEntity(ctx context.Context, s engram.Scope, id string) (*engram.EntityDetail, error) {
	if err := f.record(ctx, "GetEntity", s, id, nil); err != nil {
		return nil, err
	}
	return &engram.EntityDetail{Entity: engram.Entity{ID: id}}, nil
}

func (f *fakeService) Graph(ctx context.Context, s engram.Scope, r engram.GraphRequest) (*engram.Graph, error) {
	if err := f.record(ctx, "Graph", s, r.Entity, r); err != nil {
		return nil, err
	}
	return &engram.Graph{}, nil
}

func (f *fakeService) DeleteEntity(ctx context.Context, s engram.Scope, id string) error {
	return f.record(ctx, "DeleteEntity", s, id, nil)
}

func (f *fakeService) MergeEntities(ctx context.Context, s engram.Scope, id string, from []string) (*engram.Entity, error) {
	if err := f.record(ctx, "MergeEntities", s, id, from); err != nil {
		return nil, err
	}
	return &engram.Entity{ID: id}, nil
}

func (f *fakeService) SplitEntity(ctx context.Context, s engram.Scope, id string, r engram.SplitRequest) (*engram.Entity, error) {
	if err := f.record(ctx, "SplitEntity", s, id, r); err != nil {
		return nil, err
	}
	return &engram.Entity{ID: engram.NewID(), Name: r.Name}, nil
}

func (f *fakeService) EntityHistory(ctx context.Context, s engram.Scope, id string) ([]engram.EntityVersion, error) {
	if err := f.record(ctx, "EntityHistory", s, id, nil); err != nil {
		return nil, err
	}
	return []engram.EntityVersion{}, nil
}

func (f *fakeService) ListCommunities(ctx context.Context, s engram.Scope) (*engram.CommunityList, error) {
	if err := f.record(ctx, "ListCommunities", s, "", nil); err != nil {
		return nil, err
	}
	return &engram.CommunityList{Communities: []engram.Community{}}, nil
}

func (f *fakeService) GetCommunity(ctx context.Context, s engram.Scope, id string) (*engram.CommunityDetail, error) {
	if err := f.record(ctx, "GetCommunity", s, id, nil); err != nil {
		return nil, err
	}
	return &engram.CommunityDetail{Community: engram.Community{ID: id}, Entities: []engram.Entity{}}, nil
}

func (f *fakeService) RefreshCommunities(ctx context.Context, s engram.Scope, full bool) (*engram.RefreshResult, error) {
	if err := f.record(ctx, "RefreshCommunities", s, "", full); err != nil {
		return nil, err
	}
	return &engram.RefreshResult{Full: full}, nil
}

func (f *fakeService) AddResource(ctx context.Context, r engram.Resource, body io.Reader) (*engram.Resource, error) {
	n, err := io.Copy(io.Discard, body)
	if err != nil {
		return nil, err
	}
	if err := f.record(ctx, "AddResource", engram.ScopeOf(r.Namespace), "", r); err != nil {
		return nil, err
	}
	r.ID, r.Size = engram.NewID(), n
	return &r, nil
}

func (f *fakeService) GetResource(ctx context.Context, s engram.Scope, id string) (*engram.Resource, error) {
	if err := f.record(ctx, "GetResource", s, id, nil); err != nil {
		return nil, err
	}
	return &engram.Resource{ID: id, Namespace: s.Namespace(), Name: "x", MIMEType: "text/plain"}, nil
}

func (f *fakeService) ListResources(ctx context.Context, s engram.Scope, fl engram.ResourceFilter) (*engram.ResourcePage, error) {
	if err := f.record(ctx, "ListResources", s, "", fl); err != nil {
		return nil, err
	}
	return &engram.ResourcePage{Resources: []engram.Resource{}}, nil
}

func (f *fakeService) OpenResource(ctx context.Context, s engram.Scope, id string) (*engram.Resource, io.ReadCloser, error) {
	if err := f.record(ctx, "OpenResource", s, id, nil); err != nil {
		return nil, nil, err
	}
	return &engram.Resource{ID: id, Namespace: s.Namespace(), Name: "x", MIMEType: "text/plain", Size: 2}, io.NopCloser(strings.NewReader("hi")), nil
}

func (f *fakeService) DeleteResource(ctx context.Context, s engram.Scope, id string) error {
	return f.record(ctx, "DeleteResource", s, id, nil)
}

func (f *fakeService) AddObservations(ctx context.Context, req engram.AddObservationsRequest) (*engram.AddObservationsResult, error) {
	if err := f.record(ctx, "AddObservations", engram.ScopeOf(req.Namespace), "", req); err != nil {
		return nil, err
	}
	return &engram.AddObservationsResult{Observations: []engram.Observation{}}, nil
}

func (f *fakeService) ListIdentities(ctx context.Context, s engram.Scope, fl engram.IdentityFilter) ([]engram.Identity, error) {
	return []engram.Identity{}, f.record(ctx, "ListIdentities", s, "", fl)
}

func (f *fakeService) GetIdentity(ctx context.Context, s engram.Scope, id string) (*engram.IdentityDetail, error) {
	if err := f.record(ctx, "GetIdentity", s, id, nil); err != nil {
		return nil, err
	}
	return &engram.IdentityDetail{Identity: engram.Identity{ID: id, Namespace: s.Namespace(), Modality: "face"}}, nil
}

func (f *fakeService) DeleteIdentity(ctx context.Context, s engram.Scope, id string) error {
	return f.record(ctx, "DeleteIdentity", s, id, nil)
}

func (f *fakeService) LinkIdentities(ctx context.Context, s engram.Scope, req engram.LinkRequest) (*engram.Person, error) {
	if err := f.record(ctx, "LinkIdentities", s, "", req); err != nil {
		return nil, err
	}
	return &engram.Person{ID: engram.NewID(), Namespace: s.Namespace(), Name: req.Name, Source: engram.PersonAsserted}, nil
}

func (f *fakeService) UnlinkIdentity(ctx context.Context, s engram.Scope, id string) (*engram.Identity, error) {
	if err := f.record(ctx, "UnlinkIdentity", s, id, nil); err != nil {
		return nil, err
	}
	return &engram.Identity{ID: id, Namespace: s.Namespace(), Modality: "face"}, nil
}

func (f *fakeService) MergeIdentities(ctx context.Context, s engram.Scope, req engram.IdentityMergeRequest) (*engram.Identity, error) {
	if err := f.record(ctx, "MergeIdentities", s, req.Into, req); err != nil {
		return nil, err
	}
	return &engram.Identity{ID: req.Into, Namespace: s.Namespace(), Modality: "face"}, nil
}

func (f *fakeService) SplitIdentity(ctx context.Context, s engram.Scope, id string, req engram.IdentitySplitRequest) (*engram.Identity, error) {
	if err := f.record(ctx, "SplitIdentity", s, id, req); err != nil {
		return nil, err
	}
	return &engram.Identity{ID: engram.NewID(), Namespace: s.Namespace(), Modality: "face"}, nil
}

func (f *fakeService) ListPersons(ctx context.Context, s engram.Scope) ([]engram.Person, error) {
	return []engram.Person{}, f.record(ctx, "ListPersons", s, "", nil)
}

func (f *fakeService) IdentityHistory(ctx context.Context, s engram.Scope, id string) ([]engram.IdentityEvent, error) {
	return []engram.IdentityEvent{}, f.record(ctx, "IdentityHistory", s, id, nil)
}

func (f *fakeService) ListConflicts(ctx context.Context, s engram.Scope) ([]engram.Conflict, error) {
	return []engram.Conflict{}, f.record(ctx, "ListConflicts", s, "", nil)
}

func (f *fakeService) ResolveConflict(ctx context.Context, s engram.Scope, id string, req engram.ResolveConflictRequest) (*engram.ConflictResolution, error) {
	if err := f.record(ctx, "ResolveConflict", s, id, req); err != nil {
		return nil, err
	}
	return &engram.ConflictResolution{}, nil
}

// LocateMemory places every id in the tenant's scope of user u1, as
// Namespaces lists it.
func (f *fakeService) LocateMemory(ctx context.Context, tenant engram.Namespace, id string) (engram.Namespace, error) {
	n := engram.Namespace{Org: tenant.Org, Project: tenant.Project, User: "u1"}
	return n, f.record(ctx, "LocateMemory", engram.ScopeOf(n), id, nil)
}

// SensitivePolicy answers the server's default policy, nothing set.
func (f *fakeService) SensitivePolicy(ctx context.Context, n engram.Namespace) (*engram.TenantPolicy, error) {
	err := f.record(ctx, "SensitivePolicy", engram.Scope{Org: n.Org, Project: n.Project}, "", nil)
	return &engram.TenantPolicy{Org: n.Org, Project: n.Project, Applied: engram.DefaultSensitivePolicy()}, err
}

// SetSensitivePolicy answers p over the server's default.
func (f *fakeService) SetSensitivePolicy(ctx context.Context, n engram.Namespace, p engram.SensitivePolicy) (*engram.TenantPolicy, error) {
	err := f.record(ctx, "SetSensitivePolicy", engram.Scope{Org: n.Org, Project: n.Project}, "", p)
	return &engram.TenantPolicy{Org: n.Org, Project: n.Project, Set: p, Applied: p.Over(engram.DefaultSensitivePolicy())}, err
}

// ScanSensitive answers that it scanned nothing and found nothing.
func (f *fakeService) ScanSensitive(ctx context.Context, s engram.Scope, apply bool) (*engram.SensitiveScan, error) {
	err := f.record(ctx, "ScanSensitive", s, "", apply)
	return &engram.SensitiveScan{Found: []engram.SensitiveFound{}}, err
}

// Tenants lists the tenant of within, if it names one, as holding nothing.
func (f *fakeService) Tenants(ctx context.Context, within engram.Namespace, limit int) ([]engram.NamespaceCount, error) {
	err := f.record(ctx, "Tenants", engram.Scope{Org: within.Org, Project: within.Project}, "", limit)
	return nil, err
}

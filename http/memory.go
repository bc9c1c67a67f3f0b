package http

import (
	"net/http"
	"time"

	"github.com/engramhq/engram"
)

func (s *recordRoutes) handleAddMemories(w http.ResponseWriter, r *http.Request, _ query) error {
	var req engram.AddMemoriesRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	texts := make([]string, len(req.Memories))
	for i, m := range req.Memories {
		texts[i] = m.Value
	}
	if err := checkEachText(memoryValue, texts, engram.MaxContentBytes, "one memory's value"); err != nil {
		return err
	}
	if err := s.checkEmbedBytes("memory values", texts); err != nil {
		return err
	}
	mems, err := s.svc.AddMemories(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, memoriesResponse{Memories: nonNil(mems)})
	return nil
}

// memoriesResponse is the body of POST /v1/memories.
type memoriesResponse struct {
	Memories []engram.Memory `json:"memories"`
}

func (s *recordRoutes) handleListMemories(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	var f engram.MemoryFilter
	for _, k := range q.list("kind") {
		f.Kinds = append(f.Kinds, engram.Kind(k))
	}
	for _, st := range q.list("status") {
		f.Statuses = append(f.Statuses, engram.Status(st))
	}
	f.Contains = q.str("contains")
	f.IDs = q.list("id")
	f.Sources = q.list("source")
	f.Cursor = q.str("cursor")
	for _, t := range []struct {
		name string
		dst  **time.Time
	}{
		{"created_after", &f.CreatedAfter}, {"created_before", &f.CreatedBefore},
		{"valid_at", &f.ValidAt}, {"valid_after", &f.ValidAfter}, {"valid_before", &f.ValidBefore},
	} {
		if *t.dst, err = q.time(t.name); err != nil {
			return err
		}
	}
	if f.Limit, err = q.int("limit"); err != nil {
		return err
	}
	if f.Metadata, err = q.meta("meta."); err != nil {
		return err
	}
	if f.MetadataIn, err = q.metaIn("meta_in."); err != nil {
		return err
	}
	return s.listMemories(w, r, sc, f)
}

// listMemoriesRequest is the body of POST /v1/memories/list, for filters
// that do not fit in a query string comfortably.
type listMemoriesRequest struct {
	Scope  engram.Scope        `json:"scope"`
	Filter engram.MemoryFilter `json:"filter"`
	Vault  bool                `json:"vault,omitempty"` // as ?vault=true
}

func (s *recordRoutes) handleListMemoriesPost(w http.ResponseWriter, r *http.Request, _ query) error {
	var req listMemoriesRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	r, err := askVault(r, req.Vault)
	if err != nil {
		return err
	}
	return s.listMemories(w, r, req.Scope, req.Filter)
}

func (s *recordRoutes) listMemories(w http.ResponseWriter, r *http.Request, sc engram.Scope, f engram.MemoryFilter) error {
	page, err := s.svc.ListMemories(r.Context(), sc, f)
	if err != nil {
		return err
	}
	page.Memories = nonNil(page.Memories)
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *recordRoutes) handleGetMemory(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "memory")
	if err != nil {
		return err
	}
	m, err := s.svc.GetMemory(r.Context(), sc, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

func (s *recordRoutes) handleUpdateMemory(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "memory")
	if err != nil {
		return err
	}
	var p engram.MemoryPatch
	if err := decodeBody(r, &p); err != nil {
		return err
	}
	m, err := s.svc.UpdateMemory(r.Context(), sc, id, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

func (s *recordRoutes) handleSupersedeMemory(w http.ResponseWriter, r *http.Request, q query) error {
	return answerIDBody(w, r, q, "memory", http.StatusOK, s.svc.SupersedeMemory)
}

func (s *recordRoutes) handleDeleteMemory(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "memory")
	if err != nil {
		return err
	}
	hard, err := q.bool("hard")
	if err != nil {
		return err
	}
	if err := s.svc.DeleteMemory(r.Context(), sc, id, engram.DeleteOptions{Hard: hard, Reason: q.str("reason")}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// reasonRequest is the body of POST /v1/memories/{id}/restore.
type reasonRequest struct {
	Reason string `json:"reason,omitempty"`
}

func (s *recordRoutes) handleRestoreMemory(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "memory")
	if err != nil {
		return err
	}
	var req reasonRequest
	if err := decodeOptionalBody(r, &req); err != nil {
		return err
	}
	m, err := s.svc.RestoreMemory(r.Context(), sc, id, req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

// historyResponse is the body of GET /v1/memories/{id}/history.
type historyResponse struct {
	Versions []engram.Version `json:"versions"`
}

func (s *recordRoutes) handleHistory(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "memory")
	if err != nil {
		return err
	}
	vs, err := s.svc.History(r.Context(), sc, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, historyResponse{Versions: nonNil(vs)})
	return nil
}

// rollbackRequest is the body of POST /v1/memories/{id}/rollback. Version
// is a pointer so that a missing version is told apart from version 0.
type rollbackRequest struct {
	Version *int   `json:"version"`
	Reason  string `json:"reason,omitempty"`
}

func (s *recordRoutes) handleRollback(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "memory")
	if err != nil {
		return err
	}
	var req rollbackRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Version == nil {
		return engram.Errorf(engram.EINVALID, "request body: field \"version\" is required")
	}
	m, err := s.svc.Rollback(r.Context(), sc, id, *req.Version, req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

package http

import (
	"net/http"

	"github.com/engramhq/engram"
)

func (s *recordRoutes) handleAddEpisodes(w http.ResponseWriter, r *http.Request, _ query) error {
	var req engram.AddEpisodesRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	texts := make([]string, len(req.Episodes))
	for i, e := range req.Episodes {
		texts[i] = e.Content
	}
	if err := checkEachText(episodeContent, texts, engram.MaxContentBytes, "one episode's content"); err != nil {
		return err
	}
	if err := s.checkEmbedBytes("episode contents", texts); err != nil {
		return err
	}
	res, err := s.svc.AddEpisodes(r.Context(), req)
	if err != nil {
		return err
	}
	res.Episodes = nonNil(res.Episodes)
	res.Memories = nonNil(res.Memories)
	status := http.StatusCreated
	if res.Job != nil {
		status = http.StatusAccepted // stored; formation runs in the background
	}
	writeJSON(w, status, res)
	return nil
}

func (s *recordRoutes) handleListEpisodes(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	var f engram.EpisodeFilter
	f.Roles = q.list("role")
	f.Speaker = q.str("speaker")
	f.Contains = q.str("contains")
	f.Cursor = q.str("cursor")
	if f.OccurredAfter, err = q.time("occurred_after"); err != nil {
		return err
	}
	if f.OccurredBefore, err = q.time("occurred_before"); err != nil {
		return err
	}
	if f.Limit, err = q.int("limit"); err != nil {
		return err
	}
	if f.Metadata, err = q.meta("meta."); err != nil {
		return err
	}
	page, err := s.svc.ListEpisodes(r.Context(), sc, f)
	if err != nil {
		return err
	}
	page.Episodes = nonNil(page.Episodes)
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *recordRoutes) handleGetEpisode(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "episode")
	if err != nil {
		return err
	}
	e, err := s.svc.GetEpisode(r.Context(), sc, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}

func (s *recordRoutes) handleDeleteEpisode(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "episode")
	if err != nil {
		return err
	}
	res, err := s.svc.DeleteEpisode(r.Context(), sc, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// scopeAndID reads the scope from the query and the {id} path segment,
// which must have the shape of an engram id.
func scopeAndID(r *http.Request, q query, what string) (engram.Scope, string, error) {
	sc, err := q.scope()
	if err != nil {
		return engram.Scope{}, "", err
	}
	id := r.PathValue("id")
	if err := engram.CheckID(what, id); err != nil {
		return engram.Scope{}, "", err
	}
	return sc, id, nil
}

// nonNil makes empty lists encode as [] rather than null, as the OpenAPI
// document promises.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

package http

import (
	"net/http"

	"github.com/engramhq/engram"
)

// jobList are the parameters of GET /v1/jobs.
var jobList = withScope(append([]param{{name: "state", repeated: true}}, pageParams...)...)

func (s *recordRoutes) handleGetJob(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "job")
	if err != nil {
		return err
	}
	j, err := s.svc.GetJob(r.Context(), sc, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, j)
	return nil
}

func (s *recordRoutes) handleListJobs(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	var f engram.JobFilter
	for _, st := range q.list("state") {
		f.States = append(f.States, engram.JobState(st))
	}
	f.Cursor = q.str("cursor")
	if f.Limit, err = q.int("limit"); err != nil {
		return err
	}
	page, err := s.svc.ListJobs(r.Context(), sc, f)
	if err != nil {
		return err
	}
	page.Jobs = nonNil(page.Jobs)
	writeJSON(w, http.StatusOK, page)
	return nil
}

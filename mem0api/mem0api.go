package mem0api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/internal/jsonbody"
)

// Service is what the handler needs of engram: search, memories, adding
// episodes, purging a scope (see engram.Service for how each fails), and
// the tenant-wide lookups of engram.Locator. The engine implements it.
type Service interface {
	engram.SearchService
	engram.MemoryService
	engram.Locator
	// AddEpisodes is engram.EpisodeService's.
	AddEpisodes(ctx context.Context, req engram.AddEpisodesRequest) (*engram.AddEpisodesResult, error)
	// DeleteScope is engram.ScopeService's.
	DeleteScope(ctx context.Context, s engram.Scope) (*engram.PurgeCounts, error)
}

// Options configure the handler.
type Options struct {
	// Org and Project are the tenant of requests that carry no API key
	// (a server without authentication). With a key, its binding decides.
	Org, Project string
}

// Handler serves the Mem0-compatible API. Mount it under a prefix with
// http.StripPrefix so that it sees Mem0's own paths (/v1/ping/, ...).
type Handler struct {
	svc  Service
	opts Options
	mux  *http.ServeMux
}

// New returns a handler serving svc. It expects to run behind engram's
// http.Server (as a Mount with the read role), which has authenticated the
// request and checked its key's role for reads; the handler checks writes
// and each namespace itself.
func New(svc Service, opts Options) *Handler {
	h := &Handler{svc: svc, opts: opts, mux: http.NewServeMux()}
	for _, r := range []struct {
		pattern string
		fn      func(http.ResponseWriter, *http.Request) error
	}{
		{"GET /v1/ping/{$}", h.ping},
		{"POST /v1/memories/{$}", h.add},
		{"POST /v3/memories/add/{$}", h.add},
		{"POST /v2/memories/{$}", h.list},
		{"POST /v3/memories/{$}", h.list},
		{"GET /v1/memories/{$}", h.listQuery},
		{"POST /v1/memories/search/{$}", h.search},
		{"POST /v2/memories/search/{$}", h.search},
		{"POST /v3/memories/search/{$}", h.search},
		{"GET /v1/memories/{id}/{$}", h.get},
		{"PUT /v1/memories/{id}/{$}", h.update},
		{"DELETE /v1/memories/{id}/{$}", h.deleteOne},
		{"GET /v1/memories/{id}/history/{$}", h.history},
		{"DELETE /v1/memories/{$}", h.deleteAll},
		{"GET /v1/entities/{$}", h.entities},
		{"DELETE /v1/entities/{type}/{name}/{$}", h.deleteEntity},
		{"DELETE /v2/entities/{type}/{name}/{$}", h.deleteEntity},
		{"/", h.notServed},
	} {
		fn := r.fn
		h.mux.HandleFunc(r.pattern, func(w http.ResponseWriter, req *http.Request) {
			if err := fn(w, req); err != nil {
				engramhttp.WriteError(w, req, err)
			}
		})
	}
	return h
}

// ServeHTTP implements http.Handler. Mem0's paths end with a slash; one
// without it is served as if it had one.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/") {
		r = r.Clone(r.Context())
		r.URL.Path += "/"
		r.URL.RawPath = ""
	}
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) notServed(w http.ResponseWriter, r *http.Request) error {
	return engram.Errorf(engram.ENOTFOUND, "the Mem0-compatible API does not serve %s %s (served: ping, add, search, get all, get, update, delete, history, delete all, entities)", r.Method, r.URL.Path)
}

// tenant returns the org and project a request acts in: its key's
// binding, or the handler's options without authentication.
func (h *Handler) tenant(r *http.Request) engram.Namespace {
	if k := engramhttp.KeyFrom(r.Context()); k != nil {
		return engram.Namespace{Org: k.Org, Project: k.Project}
	}
	return engram.Namespace{Org: h.opts.Org, Project: h.opts.Project}
}

// boundUser returns the user the request's key is bound to, or "".
func boundUser(r *http.Request) string {
	if k := engramhttp.KeyFrom(r.Context()); k != nil {
		return k.User
	}
	return ""
}

// allow returns EFORBIDDEN when the request's key has a role below role
// for what (a server without keys allows everything).
func allow(r *http.Request, role, what string) error {
	k := engramhttp.KeyFrom(r.Context())
	if k == nil || k.Allows(role) {
		return nil
	}
	return engram.Errorf(engram.EFORBIDDEN, "this API key has the role %s; %s needs a key with the role %s", k.Role, what, role)
}

// decode reads a JSON body into v; an empty body leaves v as it is.
func decode(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return engram.Errorf(engram.ETOOLARGE, "the body is larger than %d bytes", tooLarge.Limit)
	case err != nil:
		return engram.Errorf(engram.EINVALID, "read the body: %v", err)
	case len(strings.TrimSpace(string(b))) == 0:
		return nil
	}
	if err := jsonbody.CheckUTF8(b); err != nil {
		return engram.Errorf(engram.EINVALID, "the body: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return engram.Errorf(engram.EINVALID, "%s must be %s, not a JSON %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return engram.Errorf(engram.EINVALID, "the body is not valid JSON: %v", err)
	}
	return nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string", "ptr":
		return "a string"
	case "bool":
		return "true or false"
	case "map", "struct":
		return "an object"
	case "slice":
		return "a list"
	}
	return "a number"
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client went away; nothing to answer
	return nil
}

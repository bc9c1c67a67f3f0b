package http

import (
	"maps"
	"slices"
)

// Patterns returns the ServeMux pattern of everything the server serves:
// each route ("GET /v1/memories/{id}"), in the order of the OpenAPI
// document, then each mount ("/mcp", "POST /v1/chat/completions"),
// sorted. engram serve logs them at debug level, and its route test
// checks that it calls each one.
func (s *Server) Patterns() []string {
	ps := make([]string, 0, len(s.routes)+len(s.static))
	for _, rt := range s.routes {
		ps = append(ps, rt.method+" "+rt.path)
	}
	return append(ps, slices.Sorted(maps.Keys(s.static))...)
}

package http

import "time"

// RouteInfo describes a registered route for tests in package http_test.
type RouteInfo struct {
	Method, Path string
	Params       []ParamInfo
}

// ParamInfo describes a query parameter a route accepts.
type ParamInfo struct {
	Name     string
	Repeated bool
}

// Routes returns s's route table.
func Routes(s *Server) []RouteInfo {
	out := make([]RouteInfo, len(s.routes))
	for i, rt := range s.routes {
		out[i] = RouteInfo{Method: rt.method, Path: rt.path}
		for _, p := range rt.params {
			out[i].Params = append(out[i].Params, ParamInfo{Name: p.name, Repeated: p.repeated})
		}
	}
	return out
}

// The bodies of POST /v1/embeddings, for checking the OpenAPI schemas.
type (
	EmbeddingsRequest  = embeddingsRequest
	EmbeddingsResponse = embeddingsResponse
	EmbeddingData      = embeddingData
	EmbeddingsUsage    = embeddingsUsage
)

// SetBodyPace sets how long the rest of a long body may take (grace, plus
// a second per rate bytes) and returns the function that restores it.
func SetBodyPace(grace time.Duration, rate float64) func() {
	g, r := bodyGrace, bodyMinRate
	bodyGrace, bodyMinRate = grace, rate
	return func() { bodyGrace, bodyMinRate = g, r }
}

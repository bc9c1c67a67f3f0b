package http

import (
	"context"
	"net/http"

	"github.com/engramhq/engram"
)

// answerBody answers a route on a scope with a JSON body: the scope and
// the body are read (a bad one fails first), then call, given the service
// get returns, answers; its result is written as JSON with status.
func answerBody[S, Req, Res any](w http.ResponseWriter, r *http.Request, q query, status int,
	get func() (S, error), call func(S, context.Context, engram.Scope, Req) (Res, error)) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	return answer(w, r, status, get, func(svc S, ctx context.Context, req Req) (Res, error) { return call(svc, ctx, sc, req) })
}

// answerIDBody is answerBody for a route on one id of what.
func answerIDBody[S, Req, Res any](w http.ResponseWriter, r *http.Request, q query, what string, status int,
	get func() (S, error), call func(S, context.Context, engram.Scope, string, Req) (Res, error)) error {
	sc, id, err := scopeAndID(r, q, what)
	if err != nil {
		return err
	}
	return answer(w, r, status, get, func(svc S, ctx context.Context, req Req) (Res, error) { return call(svc, ctx, sc, id, req) })
}

// answer reads the body, asks call and writes its result with status.
func answer[S, Req, Res any](w http.ResponseWriter, r *http.Request, status int, get func() (S, error), call func(S, context.Context, Req) (Res, error)) error {
	var req Req
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	svc, err := get()
	if err != nil {
		return err
	}
	res, err := call(svc, r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, status, res)
	return nil
}

// service returns the server's service, for answerBody and answerIDBody.
func (s *Server) service() (engram.Service, error) { return s.svc, nil }

package http

import (
	"context"
	"net/http"

	"github.com/engramhq/engram"
)

// answerBody answers a route on a scope with a JSON body: the scope and
// the body are read (a bad one fails first), then call answers; its result
// is written as JSON with status.
func answerBody[Req, Res any](w http.ResponseWriter, r *http.Request, q query, status int,
	call func(context.Context, engram.Scope, Req) (Res, error)) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	return answer(w, r, status, func(ctx context.Context, req Req) (Res, error) { return call(ctx, sc, req) })
}

// answerIDBody is answerBody for a route on one id of what.
func answerIDBody[Req, Res any](w http.ResponseWriter, r *http.Request, q query, what string, status int,
	call func(context.Context, engram.Scope, string, Req) (Res, error)) error {
	sc, id, err := scopeAndID(r, q, what)
	if err != nil {
		return err
	}
	return answer(w, r, status, func(ctx context.Context, req Req) (Res, error) { return call(ctx, sc, id, req) })
}

// answer reads the body, asks call and writes its result with status.
func answer[Req, Res any](w http.ResponseWriter, r *http.Request, status int, call func(context.Context, Req) (Res, error)) error {
	var req Req
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	res, err := call(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, status, res)
	return nil
}

package http_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/internal/syncbuf"
)

func TestErrorStatus(t *testing.T) {
	for _, tc := range []struct {
		code string
		want int
	}{
		{engram.EINVALID, 400},
		{engram.EUNAUTHORIZED, 401},
		{engram.EFORBIDDEN, 403},
		{engram.EMEDIATYPE, 415},
		{engram.ENOTFOUND, 404},
		{engram.ECONFLICT, 409},
		{engram.ETOOLARGE, 413},
		{engram.EMISMATCH, 422},
		{engram.EINTERNAL, 500},
		{engram.EUNAVAILABLE, 503},
		{engram.ETOOMANY, 429},
		{"no_such_code", 500},
		{"", 500},
	} {
		if got := engramhttp.ErrorStatus(tc.code); got != tc.want {
			t.Errorf("ErrorStatus(%q) = %d, want %d", tc.code, got, tc.want)
		}
	}
}

// TestErrorMapping sends each kind of service error through the server and
// the client: the status is ErrorStatus's, the body is the error shape, and
// the client gives back an *engram.Error with the same code and message.
// Internal errors reach the client only as a generic sentence, and the
// log gets the detail.
func TestErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		wantStatus int
		wantCode   string
		wantMsg    string
	}{
		{"invalid", engram.Errorf(engram.EINVALID, "memory: value is required"), 400, engram.EINVALID, "memory: value is required"},
		{"not found", engram.Errorf(engram.ENOTFOUND, "memory not found"), 404, engram.ENOTFOUND, "memory not found"},
		{"conflict", engram.Errorf(engram.ECONFLICT, "memory is superseded"), 409, engram.ECONFLICT, "memory is superseded"},
		{"too large", engram.Errorf(engram.ETOOLARGE, "1001 episodes in one request"), 413, engram.ETOOLARGE, "1001 episodes in one request"},
		{"unavailable", engram.Errorf(engram.EUNAVAILABLE, "database is closed"), 503, engram.EUNAVAILABLE, "database is closed"},
		{"unauthorized", engram.Errorf(engram.EUNAUTHORIZED, "bad token"), 401, engram.EUNAUTHORIZED, "bad token"},
		{"mismatch", engram.Errorf(engram.EMISMATCH, "vectors from use-lite, not openai"), 422, engram.EMISMATCH, "vectors from use-lite, not openai"},
		{"wrapped", fmt.Errorf("engine: get: %w", engram.Errorf(engram.ENOTFOUND, "episode not found")), 404, engram.ENOTFOUND, "episode not found"},
		{"coded internal", engram.Errorf(engram.EINTERNAL, "sqlite: table memories has no column x at /var/lib/engram"), 500, engram.EINTERNAL, "internal error"},
		{"plain", errors.New("disk I/O error at /var/lib/engram/engram.db"), 500, engram.EINTERNAL, "internal error"},
		{"unknown code", engram.Errorf("weird", "something odd"), 500, engram.EINTERNAL, "internal error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncbuf.Buffer
			svc := &fakeService{err: tc.err}
			srv := httptest.NewServer(engramhttp.NewServer(svc, engramhttp.ServerOptions{
				Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			}))
			defer srv.Close()

			id := engram.NewID()
			r := do(t, "GET", srv.URL+"/v1/memories/"+id+"?org=o&project=p", "")
			if got, want := r.Status, tc.wantStatus; got != want {
				t.Errorf("status = %d, want %d", got, want)
			}
			e := errorOf(t, r)
			if got, want := e.Error.Code, tc.wantCode; got != want {
				t.Errorf("code = %q, want %q", got, want)
			}
			if got, want := e.Error.Message, tc.wantMsg; got != want {
				t.Errorf("message = %q, want %q", got, want)
			}

			c := engramhttp.NewClient(srv.URL, engramhttp.ClientOptions{})
			_, err := c.GetMemory(context.Background(), engram.Scope{Org: "o", Project: "p"}, id)
			var ce *engram.Error
			if !errors.As(err, &ce) {
				t.Fatalf("client error = %#v, want *engram.Error", err)
			}
			if ce.Code != tc.wantCode || ce.Message != tc.wantMsg {
				t.Errorf("client error = %q/%q, want %q/%q", ce.Code, ce.Message, tc.wantCode, tc.wantMsg)
			}

			if tc.wantStatus == 500 {
				if !strings.Contains(logs.String(), tc.err.Error()) && !strings.Contains(logs.String(), engram.ErrorMessage(tc.err)) {
					t.Errorf("internal error not logged; log: %s", logs.String())
				}
				if strings.Contains(string(r.Body), "/var/lib") {
					t.Errorf("internal detail leaked: %s", r.Body)
				}
			}
		})
	}
}

// TestErrorMapping_Unrouted checks that the mux's own answers come in the
// error shape too.
func TestErrorMapping_Unrouted(t *testing.T) {
	svc := &fakeService{}
	srv := httptest.NewServer(engramhttp.NewServer(svc, engramhttp.ServerOptions{Logger: discardLogger()}))
	defer srv.Close()
	id := engram.NewID()
	for _, tc := range []struct {
		method, path string
		wantStatus   int
		wantCode     string
		wantAllow    string
	}{
		{"GET", "/v1/nothing", 404, engram.ENOTFOUND, ""},
		{"GET", "/", 404, engram.ENOTFOUND, ""},
		{"GET", "/v1/episodes/" + id + "/extra", 404, engram.ENOTFOUND, ""},
		{"PUT", "/v1/episodes", 405, engram.EMETHOD, "GET, HEAD, POST"},
		{"POST", "/v1/memories/" + id, 405, engram.EMETHOD, "DELETE, GET, HEAD, PATCH"},
		{"DELETE", "/healthz", 405, engram.EMETHOD, "GET, HEAD"},
	} {
		r := do(t, tc.method, srv.URL+tc.path, "")
		if got, want := r.Status, tc.wantStatus; got != want {
			t.Errorf("%s %s: status = %d, want %d", tc.method, tc.path, got, want)
			continue
		}
		e := errorOf(t, r)
		if got, want := e.Error.Code, tc.wantCode; got != want {
			t.Errorf("%s %s: code = %q, want %q", tc.method, tc.path, got, want)
		}
		if got, want := r.Header.Get("Allow"), tc.wantAllow; got != want {
			t.Errorf("%s %s: Allow = %q, want %q", tc.method, tc.path, got, want)
		}
		if !strings.Contains(e.Error.Message, tc.path) {
			t.Errorf("%s %s: message %q does not name the path", tc.method, tc.path, e.Error.Message)
		}
	}
	if calls := svc.Calls(); len(calls) != 0 {
		t.Errorf("the service was called: %v", calls)
	}
}

// TestClient_ForeignErrorBody covers answers that are not ours, such as a
// proxy's error page: the code follows from the status.
func TestClient_ForeignErrorBody(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   string
	}{
		{502, "<html>Bad Gateway</html>", engram.EUNAVAILABLE},
		{503, "", engram.EUNAVAILABLE},
		{404, "404 page not found", engram.ENOTFOUND},
		{413, "too big", engram.ETOOLARGE},
		{429, "slow down", engram.ETOOMANY},
		{418, "teapot", engram.EINVALID},
		{500, "oops", engram.EINTERNAL},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		}))
		err := engramhttp.NewClient(srv.URL, engramhttp.ClientOptions{}).Health(context.Background())
		srv.Close()
		if got := engram.ErrorCode(err); got != tc.want {
			t.Errorf("status %d: code = %q, want %q (err %v)", tc.status, got, tc.want, err)
		}
		if tc.body != "" && !strings.Contains(engram.ErrorMessage(err), tc.body) {
			t.Errorf("status %d: message %q does not quote the body", tc.status, engram.ErrorMessage(err))
		}
	}
}

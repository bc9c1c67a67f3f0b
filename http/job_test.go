package http_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/llmformer"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
	"github.com/engramhq/engram/storeopen"
)

// TestJobs_AsyncAdd: an asynchronous add answers 202 with the job, which
// a worker of the engine runs; GET /v1/jobs/{id} follows it to done, in
// its own scope only, and the memories appear.
func TestJobs_AsyncAdd(t *testing.T) {
	env := newEngineEnvWith(t, engine.Options{Workers: 2, JobPoll: 10 * time.Millisecond}, engramhttp.ServerOptions{})
	body := `{"namespace":{"org":"o","project":"p","user":"u"},"async":true,"episodes":[
		{"role":"user","content":"Ich wohne seit März in Leipzig."},
		{"role":"user","content":"Me encanta el flamenco."}]}`
	r := do(t, "POST", env.srv.URL+"/v1/episodes", body)
	if r.Status != http.StatusAccepted {
		t.Fatalf("async add: status %d, want 202; body %s", r.Status, r.Body)
	}
	var res engram.AddEpisodesResult
	if err := json.Unmarshal(r.Body, &res); err != nil {
		t.Fatal(err)
	}
	if res.Job == nil || res.Job.ID == "" || len(res.Episodes) != 2 || len(res.Memories) != 0 {
		t.Fatalf("async add answered %s; want a job, 2 episodes, no memories", r.Body)
	}
	sc := "?org=o&project=p&user=u"
	var j engram.Job
	deadline := time.Now().Add(10 * time.Second)
	for j.State != engram.JobDone {
		if time.Now().After(deadline) {
			t.Fatalf("job still %s after 10s: %+v", j.State, j)
		}
		r := do(t, "GET", env.srv.URL+"/v1/jobs/"+res.Job.ID+sc, "")
		if r.Status != http.StatusOK {
			t.Fatalf("GET job: %d %s", r.Status, r.Body)
		}
		if err := json.Unmarshal(r.Body, &j); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if j.Attempts != 1 || len(j.Episodes) != 2 {
		t.Errorf("done job = %+v, want 1 attempt over 2 episodes", j)
	}
	mems, err := env.c.ListMemories(context.Background(), engram.Scope{Org: "o", Project: "p", User: "u"}, engram.MemoryFilter{Kinds: []engram.Kind{engram.KindEpisodic}})
	if err != nil || len(mems.Memories) != 2 {
		t.Fatalf("episodic memories after the job: %+v, %v; want one per turn", mems, err)
	}
	for _, other := range []string{"?org=o&project=p&user=v", "?org=x&project=p&user=u", "?org=o&project=q&user=u"} {
		r := do(t, "GET", env.srv.URL+"/v1/jobs/"+res.Job.ID+other, "")
		if r.Status != http.StatusNotFound {
			t.Errorf("GET the job in scope %s: %d, want 404", other, r.Status)
		}
		if r := do(t, "GET", env.srv.URL+"/v1/jobs"+other, ""); r.Status != http.StatusOK || strings.Contains(string(r.Body), res.Job.ID) {
			t.Errorf("GET /v1/jobs in scope %s: %d %s, want 200 without the job", other, r.Status, r.Body)
		}
	}
	// The client, as the CLI's --server mode uses it.
	ctx := context.Background()
	scope := engram.Scope{Org: "o", Project: "p", User: "u"}
	page, err := env.c.ListJobs(ctx, scope, engram.JobFilter{States: []engram.JobState{engram.JobDone}})
	if err != nil || len(page.Jobs) != 1 || page.Jobs[0].ID != res.Job.ID {
		t.Errorf("client ListJobs(done) = %+v, %v", page, err)
	}
	if page, err := env.c.ListJobs(ctx, scope, engram.JobFilter{States: []engram.JobState{engram.JobFailed}}); err != nil || len(page.Jobs) != 0 {
		t.Errorf("client ListJobs(failed) = %+v, %v; want none", page, err)
	}
	if got, err := env.c.GetJob(ctx, scope, res.Job.ID); err != nil || got.State != engram.JobDone {
		t.Errorf("client GetJob = %+v, %v", got, err)
	}
	if _, err := env.c.GetJob(ctx, engram.Scope{Org: "o", Project: "p", User: "v"}, res.Job.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("client GetJob in another user's scope: %v, want ENOTFOUND", err)
	}
}

// TestJobs_BadInput: a bad async value, state filter or job id is a 400
// naming what is wrong, and a refused add stores nothing.
func TestJobs_BadInput(t *testing.T) {
	env := newEngineEnv(t, engramhttp.ServerOptions{})
	ns := `{"org":"o","project":"p","user":"u"}`
	sc := "?org=o&project=p&user=u"
	for _, tc := range []struct {
		name, method, path, body, msg string
	}{
		{"async as a string", "POST", "/v1/episodes", `{"namespace":` + ns + `,"async":"yes","episodes":[{"content":"x"}]}`, "async"},
		{"async as a number", "POST", "/v1/episodes", `{"namespace":` + ns + `,"async":1,"episodes":[{"content":"x"}]}`, "async"},
		{"async without formation", "POST", "/v1/episodes", `{"namespace":` + ns + `,"async":true,"form":false,"episodes":[{"content":"x"}]}`, "async"},
		{"bad state", "GET", "/v1/jobs" + sc + "&state=sleeping", "", `state "sleeping"`},
		{"bad job id", "GET", "/v1/jobs/nope" + sc, "", "job"},
		{"no scope", "GET", "/v1/jobs", "", "org is required"},
	} {
		r := do(t, tc.method, env.srv.URL+tc.path, tc.body)
		if r.Status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400; body %s", tc.name, r.Status, r.Body)
			continue
		}
		if e := errorOf(t, r); e.Error.Code != engram.EINVALID || !strings.Contains(e.Error.Message, tc.msg) {
			t.Errorf("%s: error %s %q, want EINVALID naming %q", tc.name, e.Error.Code, e.Error.Message, tc.msg)
		}
	}
	if n, err := env.c.ListEpisodes(context.Background(), engram.Scope{Org: "o", Project: "p", User: "u"}, engram.EpisodeFilter{}); err != nil || len(n.Episodes) != 0 {
		t.Errorf("episodes after refused adds: %+v, %v; want none", n, err)
	}
}

// TestJobs_Auth: jobs are read with a read key bound to their user; a key
// of another user of the tenant does not see them.
func TestJobs_Auth(t *testing.T) {
	eng, err := storeopen.Engine(context.Background(), t.TempDir(), engine.Options{Logger: discardLogger(), AccessFlush: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	e := &authEnv{keys: engram.Keys{Store: eng.Store()}}
	e.srv = httptest.NewServer(engramhttp.NewServer(eng, engramhttp.ServerOptions{Logger: discardLogger(), Ready: eng.Ready, Keys: e.keys}))
	t.Cleanup(e.srv.Close)
	writer := e.key(t, "o", "app", "u1", engram.RoleWrite)
	reader := e.key(t, "o", "app", "u1", engram.RoleRead)
	other := e.key(t, "o", "app", "u2", engram.RoleRead)
	r := e.call(t, writer, "POST", "/v1/episodes", `{"namespace":{"org":"o","project":"app","user":"u1"},"async":true,"episodes":[{"content":"我住在上海。"}]}`)
	if r.Status != http.StatusAccepted {
		t.Fatalf("async add: %d %s", r.Status, r.Body)
	}
	var res engram.AddEpisodesResult
	if err := json.Unmarshal(r.Body, &res); err != nil || res.Job == nil {
		t.Fatalf("async add answered %s: %v", r.Body, err)
	}
	if r := e.call(t, reader, "POST", "/v1/episodes", `{"namespace":{"org":"o","project":"app","user":"u1"},"async":true,"episodes":[{"content":"x"}]}`); r.Status != http.StatusForbidden {
		t.Errorf("async add with a read key: %d, want 403", r.Status)
	}
	if r := e.call(t, reader, "GET", "/v1/jobs/"+res.Job.ID+"?org=o&project=app&user=u1", ""); r.Status != http.StatusOK {
		t.Errorf("GET job with its user's read key: %d %s", r.Status, r.Body)
	}
	if r := e.call(t, other, "GET", "/v1/jobs/"+res.Job.ID+"?org=o&project=app&user=u2", ""); r.Status != http.StatusNotFound {
		t.Errorf("GET job with another user's key: %d, want 404", r.Status)
	}
	if r := e.call(t, other, "GET", "/v1/jobs/"+res.Job.ID+"?org=o&project=app&user=u1", ""); r.Status != http.StatusForbidden {
		t.Errorf("GET job in u1's scope with u2's key: %d, want 403", r.Status)
	}
}

// TestJobs_RunningRetrying: over HTTP, a job whose model call is in flight
// is listed as running with its attempt and lease, and after the call is
// cut by the call timeout as retrying with the error and its next run;
// the list reports the model's breaker.
func TestJobs_RunningRetrying(t *testing.T) {
	fake := openaitest.NewServer(t, openaitest.Options{StructuredOutputs: true})
	fake.SetHang(func(openaitest.Request) bool { return true })
	chat, err := openai.NewChat(openai.Config{BaseURL: fake.URL(), Model: "m1", MaxRetries: -1, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	f, err := llmformer.New(llmformer.Config{LLM: chat, CallTimeout: 300 * time.Millisecond, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	env := newEngineEnvWith(t, engine.Options{Former: f, Workers: 1, JobPoll: 10 * time.Millisecond, JobBackoff: time.Hour}, engramhttp.ServerOptions{})
	r := do(t, "POST", env.srv.URL+"/v1/episodes", `{"namespace":{"org":"o","project":"p","user":"u"},"async":true,
		"episodes":[{"role":"user","content":"Ich wohne in Leipzig."}]}`)
	if r.Status != http.StatusAccepted {
		t.Fatalf("async add: %d %s", r.Status, r.Body)
	}
	list := func(state string) engram.JobPage {
		t.Helper()
		r := do(t, "GET", env.srv.URL+"/v1/jobs?org=o&project=p&user=u&state="+state, "")
		var page engram.JobPage
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &page) != nil {
			t.Fatalf("GET /v1/jobs?state=%s: %d %s", state, r.Status, r.Body)
		}
		return page
	}
	waitPage := func(state string) engram.JobPage {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			if p := list(state); len(p.Jobs) == 1 {
				return p
			} else if time.Now().After(deadline) {
				t.Fatalf("no %s job after 10s: %+v", state, p)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	running := waitPage("running").Jobs[0]
	if running.Attempts != 1 || running.LeaseUntil == nil || running.LastError != "" {
		t.Errorf("running job = %+v, want attempt 1 under a lease, no error yet", running)
	}
	page := waitPage("retrying")
	j := page.Jobs[0]
	if j.ID != running.ID || j.Attempts != 1 || !strings.Contains(j.LastError, "call timeout of 300ms") || !j.RunAfter.After(time.Now().Add(30*time.Minute)) {
		t.Errorf("retrying job = %+v, want attempt 1, the timeout as its error, its next run after the backoff", j)
	}
	if b := page.Breaker; b == nil || b.State != "closed" || b.Failures != 1 {
		t.Errorf("breaker = %+v, want closed after one failure", b)
	}
	if p := list("running"); len(p.Jobs) != 0 {
		t.Errorf("running jobs after the timeout: %+v", p.Jobs)
	}
}

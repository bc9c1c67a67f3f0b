package enginetest

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/llmformer"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
)

// formationModel is a fake chat model that forms one fact of every batch
// and adds it beside whatever it is compared with.
func formationModel(t *testing.T) *openaitest.Server {
	return openaitest.NewServer(t, openaitest.Options{StructuredOutputs: true, Chat: func(r openaitest.ChatRequest) string {
		if r.ResponseFormat != nil && bytes.Contains(r.ResponseFormat.JSONSchema, []byte(`"decision"`)) {
			return `{"decision": "ADD", "target": 0, "reason": "new", "abstraction": "", "value": "", "cues": []}`
		}
		return llmFact("semantic", "Alice said something worth keeping", "")
	}})
}

// llmJobEngine is an engine whose background workers form with the LLM
// former at srv, its calls and breaker bounded by fc.
func llmJobEngine(t *testing.T, open Open, srv *openaitest.Server, fc llmformer.Config, o engine.Options) *engine.Engine {
	t.Helper()
	chat, err := openai.NewChat(openai.Config{BaseURL: srv.URL(), Model: "m1", MaxRetries: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	fc.LLM, fc.Logger = chat, slog.New(slog.DiscardHandler)
	f, err := llmformer.New(fc)
	if err != nil {
		t.Fatal(err)
	}
	o.Former, o.Logger, o.JobPoll = f, slog.New(slog.DiscardHandler), 10*time.Millisecond
	return newEngine(t, open, o)
}

// waitUntil polls until done says the jobs are as wanted, and fails
// the test with what says it is waiting for at the deadline.
func waitUntil(t *testing.T, what string, within time.Duration, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v still waiting for %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func jobState(t *testing.T, e *engine.Engine, ns engram.Namespace, id string) *engram.Job {
	t.Helper()
	return mustJob(t, e, engram.ScopeOf(ns), id)
}

// testJobsSlowModel: while the model hangs on the turns of one tenant (in
// two of its users, so both could take a worker each), the jobs of other
// tenants run and finish; the hanging calls are cut by the call timeout
// and retried, and the jobs finish once the model answers again.
func testJobsSlowModel(t *testing.T, open Open) {
	srv := formationModel(t)
	srv.SetHang(func(r openaitest.Request) bool { return bytes.Contains(r.Body, []byte("langsam")) })
	e := llmJobEngine(t, open, srv, llmformer.Config{CallTimeout: 2 * time.Second, BreakerFailures: -1},
		engine.Options{Workers: 2, JobBackoff: 20 * time.Millisecond})
	slow := []engram.Namespace{{Org: "slow", Project: "p", User: "a1"}, {Org: "slow", Project: "p", User: "a2"}}
	quick := []engram.Namespace{{Org: "quick", Project: "p", User: "b"}, {Org: "other", Project: "p", User: "c"}}
	var slowJobs, quickJobs []string
	for _, ns := range slow {
		slowJobs = append(slowJobs, addAsync(t, e, ns, "Ich antworte heute langsam.").Job.ID)
	}
	start := time.Now()
	for i, ns := range quick {
		quickJobs = append(quickJobs, addAsync(t, e, ns, []string{"Vivo en Madrid.", "I play the cello."}[i]).Job.ID)
	}
	waitUntil(t, "the other tenants' jobs", 10*time.Second, func() bool {
		return jobState(t, e, quick[0], quickJobs[0]).State == engram.JobDone && jobState(t, e, quick[1], quickJobs[1]).State == engram.JobDone
	})
	t.Logf("the other tenants' jobs were done %v after their adds", time.Since(start).Round(time.Millisecond))
	for i, ns := range slow {
		if j := jobState(t, e, ns, slowJobs[i]); j.State == engram.JobDone || j.LastError != "" {
			// Each hanging job holds its call until the timeout: a job of
			// the other tenants that finished with no call cut yet did not
			// wait for one.
			t.Errorf("slow job %d = %+v while the model hangs; want it held, no call cut yet", i, j)
		}
	}
	for _, ns := range quick {
		if n := countMemories(t, e, engram.ScopeOf(ns)); n == 0 {
			t.Errorf("no memories in %v", ns)
		}
	}
	waitUntil(t, "a hanging call cut by the call timeout", 10*time.Second, func() bool {
		j := jobState(t, e, slow[0], slowJobs[0])
		return j.Attempts >= 1 && strings.Contains(j.LastError, "call timeout of 2s")
	})
	srv.SetHang(nil)
	waitUntil(t, "the slow tenant's jobs after the model came back", 15*time.Second, func() bool {
		return jobState(t, e, slow[0], slowJobs[0]).State == engram.JobDone && jobState(t, e, slow[1], slowJobs[1]).State == engram.JobDone
	})
	for _, ns := range slow {
		if n := countMemories(t, e, engram.ScopeOf(ns)); n == 0 {
			t.Errorf("no memories in %v after the model came back", ns)
		}
	}
}

// testJobsModelDown: while the model is down, failed attempts leave the
// jobs retrying with the error and their next run, the breaker opens and
// holds the jobs off without using up their attempts (none fails, though
// the outage outlasts many more runs than JobAttempts), and once the model
// is back a probe closes the breaker and every job is done, its memories
// formed.
func testJobsModelDown(t *testing.T, open Open) {
	srv := formationModel(t)
	srv.SetDown(true)
	e := llmJobEngine(t, open, srv, llmformer.Config{BreakerFailures: 2, BreakerOpen: 20 * time.Millisecond, BreakerMaxOpen: 50 * time.Millisecond},
		engine.Options{Workers: 2, JobBackoff: 10 * time.Millisecond, JobAttempts: 3})
	nss := []engram.Namespace{{Org: "t1", Project: "p", User: "u1"}, {Org: "t1", Project: "p", User: "u2"}, {Org: "t2", Project: "p", User: "u1"}}
	texts := []string{"Ich wohne in Leipzig.", "Me encanta el flamenco.", "I moved to Lisbon."}
	ids := make([]string, len(nss))
	for i, ns := range nss {
		ids[i] = addAsync(t, e, ns, texts[i]).Job.ID
	}
	var seen *engram.Job
	waitUntil(t, "a retrying job and an open breaker", 10*time.Second, func() bool {
		for i, ns := range nss {
			page, err := e.ListJobs(ctx, engram.ScopeOf(ns), engram.JobFilter{States: []engram.JobState{engram.JobRetrying}})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Jobs) == 1 && page.Jobs[0].ID == ids[i] && page.Breaker != nil && page.Breaker.State == "open" {
				seen = &page.Jobs[0]
				return true
			}
		}
		return false
	})
	if seen.LastError == "" || !seen.RunAfter.After(seen.CreatedAt) || seen.LeaseUntil != nil {
		t.Errorf("retrying job = %+v, want its last error and a later run time, no lease", seen)
	}
	// Stay down for many more runs than JobAttempts allows.
	waitUntil(t, "the probes of a long outage", 10*time.Second, func() bool { return len(srv.Requests()) >= 4*len(nss)*3 })
	srv.SetDown(false)
	waitUntil(t, "every job after the model came back", 15*time.Second, func() bool {
		for i, ns := range nss {
			if j := jobState(t, e, ns, ids[i]); j.State == engram.JobFailed {
				t.Fatalf("job %d failed during the outage: %+v", i, j)
			} else if j.State != engram.JobDone {
				return false
			}
		}
		return true
	})
	for i, ns := range nss {
		if n := countMemories(t, e, engram.ScopeOf(ns)); n == 0 {
			t.Errorf("no memories in %v after the model came back", ns)
		}
		if j := jobState(t, e, ns, ids[i]); j.Attempts > 3 {
			t.Errorf("job %d made %d counted attempts, more than JobAttempts 3", i, j.Attempts)
		}
	}
	page, err := e.ListJobs(ctx, engram.ScopeOf(nss[0]), engram.JobFilter{})
	if err != nil || page.Breaker == nil || page.Breaker.State != "closed" {
		t.Errorf("breaker after recovery: %+v, %v; want closed", page, err)
	}
}

// testProvisional: with a provisional former, an asynchronous add whose
// model is down stores the rules' memories of its turns at once, marked
// provisional and found by search; once the model is back the job applies
// its memories and retires the provisional ones, so each turn is cited by
// the model's memories alone (no duplicates), except a provisional memory
// a user edited meanwhile, which stays. In English, German and Spanish.
func testProvisional(t *testing.T, open Open) {
	srv := formationModel(t)
	srv.SetDown(true)
	e := llmJobEngine(t, open, srv, llmformer.Config{BreakerFailures: 2, BreakerOpen: 20 * time.Millisecond, BreakerMaxOpen: 50 * time.Millisecond},
		engine.Options{Workers: 1, JobBackoff: 10 * time.Millisecond, Provisional: engine.DefaultFormer()})
	cases := []struct {
		ns         engram.Namespace
		text, word string
	}{
		{engram.Namespace{Org: "prov", Project: "p", User: "en"}, "I adopted a beagle called Rufus.", "beagle"},
		{engram.Namespace{Org: "prov", Project: "p", User: "de"}, "Ich habe einen Dackel namens Waldi.", "Dackel"},
		{engram.Namespace{Org: "prov", Project: "p", User: "es"}, "Tengo un perro que se llama Toby.", "perro"},
	}
	type added struct {
		job, episode string
		prov         []string
	}
	var adds []added
	for _, c := range cases {
		res := addAsync(t, e, c.ns, c.text)
		a := added{job: res.Job.ID, episode: res.Episodes[0].ID}
		for _, m := range res.Memories {
			if !m.Provisional() || m.Status != engram.StatusActive {
				t.Errorf("%s: async add returned %q (%s, metadata %v), want active provisional memories only", c.ns.User, m.Value, m.Status, m.Metadata)
			}
			a.prov = append(a.prov, m.ID)
		}
		if len(a.prov) == 0 {
			t.Fatalf("%s: the async add formed no provisional memory", c.ns.User)
		}
		hits, err := e.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(c.ns), Query: c.word, K: 5, Channels: []string{engine.ChannelBM25}})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits.Hits) == 0 || hits.Hits[0].Memory.ID != a.prov[0] {
			t.Errorf("%s: search %q while the model is down = %v, want the provisional memory", c.ns.User, c.word, hitValues(hits.Hits))
		}
		adds = append(adds, a)
	}
	// A user edits the first provisional memory of the last namespace.
	last := cases[len(cases)-1].ns
	edited := "Tengo un perro que se llama Toby y tiene tres años."
	if _, err := e.UpdateMemory(ctx, engram.ScopeOf(last), adds[len(adds)-1].prov[0], engram.MemoryPatch{Value: &edited}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a retrying job", 10*time.Second, func() bool {
		return jobState(t, e, cases[0].ns, adds[0].job).State == engram.JobRetrying
	})
	srv.SetDown(false)
	for i, c := range cases {
		waitUntil(t, "the job after the model came back", 15*time.Second, func() bool {
			return jobState(t, e, c.ns, adds[i].job).State == engram.JobDone
		})
		p, err := e.ListMemories(ctx, engram.ScopeOf(c.ns), engram.MemoryFilter{Sources: []string{adds[i].episode}})
		if err != nil {
			t.Fatal(err)
		}
		model, kept := 0, 0
		for _, m := range p.Memories {
			switch {
			case !m.Provisional():
				model++
			case c.ns == last && m.ID == adds[i].prov[0] && m.Value == edited:
				kept++
			default:
				t.Errorf("%s: provisional memory %q still active after the job", c.ns.User, m.Value)
			}
		}
		if model == 0 {
			t.Errorf("%s: no memory of the model's cites the turn after the job", c.ns.User)
		}
		if c.ns == last && kept != 1 {
			t.Errorf("%s: the edited provisional memory is gone", c.ns.User)
		}
	}
}

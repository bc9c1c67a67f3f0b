package entity_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/entity"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
	"github.com/engramhq/engram/uselite"
)

var (
	modelOnce sync.Once
	model     *uselite.Model
	modelErr  error
)

func loadModel(t testing.TB) *uselite.Model {
	t.Helper()
	modelOnce.Do(func() { model, modelErr = uselite.Load(uselite.DefaultDir()) })
	if modelErr != nil {
		t.Fatalf("load model: %v", modelErr)
	}
	return model
}

type score struct{ tp, fp, fn, tn int }

func (s score) precision() float64 { return float64(s.tp) / float64(max(1, s.tp+s.fp)) }
func (s score) recall() float64    { return float64(s.tp) / float64(max(1, s.tp+s.fn)) }
func (s score) String() string {
	return fmt.Sprintf("precision %.3f recall %.3f (tp %d fp %d fn %d tn %d)", s.precision(), s.recall(), s.tp, s.fp, s.fn, s.tn)
}

// measure scores r on pairs and counts the joins by stage.
func measure(t *testing.T, r *entity.Resolver, pairs []pair) (score, map[entity.Stage]int) {
	t.Helper()
	var s score
	stages := map[entity.Stage]int{}
	for _, p := range pairs {
		got, st, err := r.Same(context.Background(), p.a, p.b)
		if err != nil {
			t.Fatalf("pairs.tsv:%d: %v", p.line, err)
		}
		switch {
		case got && p.same:
			s.tp++
		case got:
			s.fp++
		case p.same:
			s.fn++
		default:
			s.tn++
		}
		if got {
			stages[st]++
		}
	}
	return s, stages
}

// TestResolutionStagesEmbedding measures the embedding stage (USE-lite
// over the normalised names; the fixture has no summaries) after the
// rules, at a sweep of join thresholds, against the rules alone. Then, as
// the gate of the model stage, it measures for each ask threshold how many
// pairs the model would be asked about and the recall a confirmer that is
// always right would reach: an upper bound, not a measurement of a model
// (none runs offline). The defaults are held to the target.
func TestResolutionStagesEmbedding(t *testing.T) {
	pairs := loadPairs(t)
	m := loadModel(t)
	base, _ := measure(t, &entity.Resolver{}, pairs)
	t.Logf("rules only: %v", base)
	for _, join := range []float64{0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.6} {
		s, st := measure(t, &entity.Resolver{Embedder: m, Join: join}, pairs)
		t.Logf("rules + embedding, join at cosine %.2f: %v; joined by embedding %d", join, s, st[entity.StageEmbed])
	}
	for _, ask := range []float64{0.8, 0.7, 0.6, 0.5, 0.4} {
		oracle := &oracleConfirmer{labels: labelsOf(pairs)}
		s, _ := measure(t, &entity.Resolver{Embedder: m, Join: 2, Ask: ask, Confirmer: oracle}, pairs)
		t.Logf("rules + a perfect confirmer asked at cosine >= %.2f: %v; %d of %d pairs asked", ask, s, oracle.asked, len(pairs))
	}
	s, _ := measure(t, &entity.Resolver{Embedder: m, Join: entity.DefaultEmbedJoin}, pairs)
	if s.precision() < 0.95 || s.recall() < 0.85 {
		t.Errorf("rules + embedding at the default %.2f: %v, want precision >= 0.95 at recall >= 0.85", entity.DefaultEmbedJoin, s)
	}
	if s.precision() < base.precision() {
		t.Errorf("the embedding stage at its default costs precision: %v against the rules' %v", s, base)
	}
}

// oracleConfirmer answers from the fixture's labels: the ceiling of the
// model stage, used only to size the ask threshold, never as a result.
type oracleConfirmer struct {
	labels map[[2]string]bool
	asked  int
}

func labelsOf(pairs []pair) map[[2]string]bool {
	out := map[[2]string]bool{}
	for _, p := range pairs {
		out[[2]string{p.a.Norm, p.b.Norm}] = p.same
		out[[2]string{p.b.Norm, p.a.Norm}] = p.same
	}
	return out
}

func (o *oracleConfirmer) Confirm(_ context.Context, a, b entity.Name) (bool, error) {
	o.asked++
	return o.labels[[2]string{a.Norm, b.Norm}], nil
}

// fakeChat starts the scripted fake server with reply deciding each
// answer from the request, and returns a chat client of it.
func fakeChat(t *testing.T, reply func(openaitest.ChatRequest) string) (*openai.Chat, *openaitest.Server) {
	t.Helper()
	srv := openaitest.NewServer(t, openaitest.Options{Chat: reply})
	chat, err := openai.NewChat(openai.Config{BaseURL: srv.URL(), Model: "fake-model", RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return chat, srv
}

// TestLLMConfirmer: the model stage asks the chat model in JSON mode with
// both names, their types and summaries, reads its verdict, vetoes a
// spelling-variant join it rejects, joins a translation it confirms, and
// turns a reply without a verdict into EUNAVAILABLE. The fake's verdicts
// are scripted for the wiring only; they measure nothing.
func TestLLMConfirmer(t *testing.T) {
	chat, srv := fakeChat(t, func(r openaitest.ChatRequest) string {
		user := r.Messages[len(r.Messages)-1].Content
		switch {
		case strings.Contains(user, "munchen") && strings.Contains(user, "munich"):
			return `{"same": true}`
		case strings.Contains(user, "北京"):
			return `{"verdict": "not sure"}`
		}
		return `{"same": false}`
	})
	r := &entity.Resolver{Confirmer: entity.LLMConfirmer{LLM: chat}}
	name := func(n, typ, summary string) entity.Name {
		return entity.Name{Norm: engram.NormalizeName(n), Type: typ, Summary: summary}
	}
	ctx := context.Background()
	if ok, st, err := r.Same(ctx, name("München", engram.EntityPlace, "city in Bavaria"), name("Munich", engram.EntityPlace, "")); err != nil || !ok || st != entity.StageLLM {
		t.Errorf("München ~ Munich = %v %q %v, want joined by the model", ok, st, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Chat == nil || reqs[0].Chat.ResponseFormat == nil || reqs[0].Chat.ResponseFormat.Type != "json_object" ||
		!strings.Contains(reqs[0].Chat.Messages[1].Content, "city in Bavaria") || !strings.Contains(reqs[0].Chat.Messages[1].Content, "(place)") {
		t.Errorf("the model was asked %+v", reqs)
	}
	if ok, st := entity.Same(name("Stephen", engram.EntityPerson, ""), name("Steven", engram.EntityPerson, "")); !ok || st != entity.StageEdit {
		t.Fatalf("the rules no longer join Stephen ~ Steven (%v %q): pick another spelling variant", ok, st)
	}
	if ok, _, err := r.Same(ctx, name("Stephen", engram.EntityPerson, ""), name("Steven", engram.EntityPerson, "")); err != nil || ok {
		t.Errorf("Stephen ~ Steven = %v %v, want the spelling-variant join vetoed", ok, err)
	}
	if ok, st, err := r.Same(ctx, name("Caroline", engram.EntityPerson, ""), name("caroline", "", "")); !ok || st != entity.StageExact || err != nil {
		t.Errorf("an exact match = %v %q %v, want it joined without asking", ok, st, err)
	}
	if ok, _, _ := r.Same(ctx, name("Paris", engram.EntityPlace, ""), name("Paris Hilton", engram.EntityPerson, "")); ok {
		t.Errorf("different known types were joined")
	}
	n := len(srv.Requests())
	if n != 2 {
		t.Errorf("%d model calls, want 2: exact matches and incompatible types never ask", n)
	}
	_, _, err := r.Same(ctx, name("北京", engram.EntityPlace, ""), name("Peking", engram.EntityPlace, ""))
	if engram.ErrorCode(err) != engram.EUNAVAILABLE {
		t.Errorf("a reply without a verdict: %v, want EUNAVAILABLE", err)
	}
}

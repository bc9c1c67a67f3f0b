package uselite_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/shareddata"
	"github.com/engramhq/engram/uselite"
)

var (
	modelOnce sync.Once
	model     *uselite.Model
	modelErr  error
)

// loadModel loads the installed model once per test binary. A missing model
// fails the test: the conformance suite must not pass by skipping.
func loadModel(t testing.TB) *uselite.Model {
	t.Helper()
	modelOnce.Do(func() { model, modelErr = uselite.Load(uselite.DefaultDir()) })
	if modelErr != nil {
		t.Fatalf("load model: %v", modelErr)
	}
	return model
}

// reference is the layout of the JavaScript implementation's outputs.
type reference struct {
	Texts  []string    `json:"texts"`
	Tokens [][]int32   `json:"tokens"`
	Embs   [][]float32 `json:"embs"`
}

func readReference(t *testing.T, path string) reference {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read reference: %v", err)
	}
	var r reference
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	if len(r.Texts) == 0 || len(r.Texts) != len(r.Tokens) || len(r.Texts) != len(r.Embs) {
		t.Fatalf("%s: %d texts, %d token lists, %d embeddings", path, len(r.Texts), len(r.Tokens), len(r.Embs))
	}
	return r
}

func maxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var d float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

const tolerance = 1e-5

// TestConformance checks token ids and embeddings against the reference
// produced by the package's own JavaScript implementation, once as one batch
// and once text by text (the two paths split work differently).
func TestConformance(t *testing.T) {
	m := loadModel(t)
	ref := readReference(t, filepath.Join(shareddata.Root(), "models", "use-lite", "reference_embeddings.json"))
	for i, text := range ref.Texts {
		if got, want := m.Tokenize(text), ref.Tokens[i]; !slices.Equal(got, want) {
			t.Errorf("Tokenize(%q) = %v, want %v", text, got, want)
		}
	}
	batch, err := m.Embed(context.Background(), ref.Texts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(batch), len(ref.Texts); got != want {
		t.Fatalf("Embed returned %d vectors, want %d", got, want)
	}
	var worst float64
	for i, text := range ref.Texts {
		single, err := m.Embed(context.Background(), []string{text})
		if err != nil {
			t.Fatal(err)
		}
		for _, got := range [][]float32{batch[i], single[0]} {
			d := maxAbsDiff(got, ref.Embs[i])
			worst = max(worst, d)
			if d > tolerance {
				t.Errorf("Embed(%q): max abs error %.3g > %g", text, d, tolerance)
			}
		}
	}
	t.Logf("max abs error against the JavaScript reference: %.3g", worst)
}

// TestEdgeConformance covers what the shared reference does not: the empty
// text, unknown symbols, NFKC, pieces with null scores, control characters
// and a text longer than MaxTokens (testdata/make-edge-reference.sh).
func TestEdgeConformance(t *testing.T) {
	m := loadModel(t)
	ref := readReference(t, filepath.Join("testdata", "edge_reference.json"))
	var worst float64
	sawLong, sawUnknown := false, false
	for i, text := range ref.Texts {
		want := ref.Tokens[i]
		if got := m.TokenizeAll(text); !slices.Equal(got, want) {
			t.Errorf("TokenizeAll(%q) = %v, want %v", text, got, want)
		}
		ids := m.Tokenize(text)
		if len(want) > uselite.MaxTokens {
			sawLong = true
			want = want[:uselite.MaxTokens]
		}
		if !slices.Equal(ids, want) {
			t.Errorf("Tokenize(%q) = %v, want %v", text, ids, want)
		}
		sawUnknown = sawUnknown || slices.Contains(ids, 0)
		// The JavaScript model sees only the first MaxTokens ids, so its
		// vector is compared with the vector of exactly those ids.
		got, err := m.EmbedIDs(context.Background(), [][]int32{ids})
		if err != nil {
			t.Fatal(err)
		}
		d := maxAbsDiff(got[0], ref.Embs[i])
		worst = max(worst, d)
		if d > tolerance {
			t.Errorf("EmbedIDs(Tokenize(%q)): max abs error %.3g > %g", text, d, tolerance)
		}
	}
	if !sawLong || !sawUnknown {
		t.Errorf("edge reference lacks a long text (%v) or an unknown symbol (%v)", sawLong, sawUnknown)
	}
	t.Logf("max abs error against the JavaScript edge reference: %.3g", worst)
}

// TestEmptyText pins the defined behaviour: no tokens, and the unit vector
// the graph yields for an empty sequence, the same inside a batch as alone.
func TestEmptyText(t *testing.T) {
	m := loadModel(t)
	if got := m.Tokenize(""); len(got) != 0 {
		t.Fatalf("Tokenize(\"\") = %v, want no ids", got)
	}
	alone, err := m.Embed(context.Background(), []string{""})
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := m.Embed(context.Background(), []string{"hello", "", "world"})
	if err != nil {
		t.Fatal(err)
	}
	var norm float64
	for _, v := range alone[0] {
		norm += float64(v) * float64(v)
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Errorf("|Embed(\"\")|^2 = %v, want 1", norm)
	}
	if d := maxAbsDiff(alone[0], mixed[1]); d != 0 {
		t.Errorf("empty text in a batch differs from alone by %g", d)
	}
	if c := cosine(alone[0], mixed[0]); c > 0.99 {
		t.Errorf("empty text embeds like \"hello\" (cosine %v)", c)
	}
	none, err := m.Embed(context.Background(), nil)
	if err != nil || len(none) != 0 {
		t.Errorf("Embed(nil) = %d vectors, %v; want 0, nil", len(none), err)
	}
}

func TestParaphrasesScoreHigher(t *testing.T) {
	m := loadModel(t)
	texts := []string{
		"The cat sat on the mat.", "A kitten was sitting on the rug.",
		"How do I reset my password?", "I forgot my login credentials and need to change them.",
		"The stock market crashed today.", "Share prices fell sharply this afternoon.",
		"My grandmother loves baking apple pies.", "Quantum computers use qubits.",
	}
	v, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	paraphrases := [][2]int{{0, 1}, {2, 3}, {4, 5}}
	unrelated := [][2]int{{0, 2}, {0, 7}, {1, 4}, {2, 6}, {3, 5}, {4, 6}, {5, 7}, {6, 7}}
	minPara, maxUnrel := math.Inf(1), math.Inf(-1)
	for _, p := range paraphrases {
		minPara = min(minPara, cosine(v[p[0]], v[p[1]]))
	}
	for _, p := range unrelated {
		maxUnrel = max(maxUnrel, cosine(v[p[0]], v[p[1]]))
	}
	if minPara <= maxUnrel {
		t.Errorf("lowest paraphrase cosine %.3f <= highest unrelated cosine %.3f", minPara, maxUnrel)
	}
	t.Logf("paraphrase cosine >= %.3f, unrelated <= %.3f", minPara, maxUnrel)
}

// TestLongText checks the documented rule for texts over MaxTokens:
// token-count-weighted mean of consecutive window vectors, re-normalised.
func TestLongText(t *testing.T) {
	m := loadModel(t)
	var sb strings.Builder
	for i := range 18 {
		fmt.Fprintf(&sb, "Note %d: the meeting moved to room %d because the projector broke. ", i, 100+i)
	}
	text := sb.String()
	ids := m.TokenizeAll(text)
	if len(ids) <= 2*uselite.MaxTokens {
		t.Fatalf("test text has %d tokens, want more than two windows", len(ids))
	}
	var windows [][]int32
	for s := 0; s < len(ids); s += uselite.MaxTokens {
		windows = append(windows, ids[s:min(s+uselite.MaxTokens, len(ids))])
	}
	wv, err := m.EmbedIDs(context.Background(), windows)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, uselite.Dim)
	for i, w := range windows {
		for c, v := range wv[i] {
			want[c] += float64(len(w)) * float64(v)
		}
	}
	var ss float64
	for _, v := range want {
		ss += v * v
	}
	wantF := make([]float32, len(want))
	for c, v := range want {
		wantF[c] = float32(v / math.Sqrt(ss))
	}
	got, err := m.Embed(context.Background(), []string{"short one", text})
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(got[1], wantF); d > 1e-6 {
		t.Errorf("long text differs from its weighted window mean by %g", d)
	}
	if d := maxAbsDiff(got[1], wv[0]); d < 1e-3 {
		t.Errorf("long text embeds like its first window alone (diff %g): later windows ignored", d)
	}
}

func TestEmbedIDsRejectsBadInput(t *testing.T) {
	m := loadModel(t)
	for name, seq := range map[string][]int32{
		"too long":   make([]int32, uselite.MaxTokens+1),
		"negative":   {5, -1},
		"past vocab": {5, 8000},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := m.EmbedIDs(context.Background(), [][]int32{{10}, seq})
			if got, want := engram.ErrorCode(err), engram.EINVALID; got != want {
				t.Errorf("code = %q (%v), want %q", got, err, want)
			}
		})
	}
}

// countdownCtx reports cancellation after its Err has been asked n times, so
// a test can cancel between batches deterministically.
type countdownCtx struct {
	context.Context
	mu sync.Mutex
	n  int
}

func (c *countdownCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n <= 0 {
		return context.Canceled
	}
	c.n--
	return nil
}

func TestEmbedRespectsCancellation(t *testing.T) {
	m := loadModel(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(ctx, []string{"hello"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a cancelled context: err = %v, want context.Canceled", err)
	}
	// Three windows of 128 tokens make at least two batches; cancellation
	// after the first check must stop the rest and return no vectors.
	long := strings.Repeat("alpha beta gamma delta ", 100)
	ctx2 := &countdownCtx{Context: context.Background(), n: 2}
	got, err := m.Embed(ctx2, []string{long})
	if !errors.Is(err, context.Canceled) || got != nil {
		t.Errorf("Embed cancelled between batches = %d vectors, %v; want none, context.Canceled", len(got), err)
	}
}

func TestConcurrentEmbedIsDeterministic(t *testing.T) {
	m := loadModel(t)
	texts := []string{"one fish", "two fish", "red fish, blue fish"}
	want, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := texts[g%len(texts):]
			got, err := m.Embed(context.Background(), in)
			if err != nil {
				errs <- err
				return
			}
			for i := range got {
				if d := maxAbsDiff(got[i], want[g%len(texts)+i]); d != 0 {
					errs <- fmt.Errorf("goroutine %d text %d differs by %g", g, i, d)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestEmbedderIdentity(t *testing.T) {
	var e engram.Embedder = loadModel(t)
	if got, want := e.Name(), "use-lite"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	if got, want := e.Dim(), 512; got != want {
		t.Errorf("Dim() = %d, want %d", got, want)
	}
}

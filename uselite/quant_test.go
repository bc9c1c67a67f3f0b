package uselite_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/shareddata"
	"github.com/engramhq/engram/uselite"
)

// Tolerances of the int8 encoder against fp32 (the reference): every
// vector's cosine and the mean over a set, and the mean overlap of top-10
// lists on the LoCoMo retrieval fixture.
const (
	int8MinCosine  = 0.995
	int8MeanCosine = 0.999
	int8MeanTop10  = 9.5
)

var (
	int8Once  sync.Once
	int8Model *uselite.Model
	int8Err   error
)

func loadInt8(t testing.TB) *uselite.Model {
	t.Helper()
	int8Once.Do(func() { int8Model, int8Err = uselite.LoadPrecision(uselite.DefaultDir(), uselite.Int8) })
	if int8Err != nil {
		t.Fatalf("load int8 model: %v", int8Err)
	}
	return int8Model
}

// cosineStats embeds texts with both models and returns the lowest and the
// mean cosine between the two vectors of each text, and the vectors.
func cosineStats(t *testing.T, texts []string) (lo, mean float64, ref, got [][]float32) {
	t.Helper()
	ctx := context.Background()
	ref, err := loadModel(t).Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	got, err = loadInt8(t).Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	lo = 1
	for i := range texts {
		c := cosine(ref[i], got[i])
		lo = min(lo, c)
		mean += c
		if c < int8MinCosine {
			t.Errorf("text %d %q: int8 cosine to fp32 %.5f < %g", i, texts[i], c, int8MinCosine)
		}
	}
	mean /= float64(len(texts))
	if mean < int8MeanCosine {
		t.Errorf("mean int8 cosine to fp32 %.5f < %g", mean, int8MeanCosine)
	}
	return lo, mean, ref, got
}

func TestInt8MatchesFP32OnReference(t *testing.T) {
	ref := readReference(t, filepath.Join(shareddata.Root(), "models", "use-lite", "reference_embeddings.json"))
	edge := readReference(t, filepath.Join("testdata", "edge_reference.json"))
	texts := append(slices.Clone(ref.Texts), edge.Texts...)
	lo, mean, _, _ := cosineStats(t, texts)
	t.Logf("%d reference texts: int8 cosine to fp32 min %.5f, mean %.5f", len(texts), lo, mean)
	if got, want := loadInt8(t).Precision(), uselite.Int8; got != want {
		t.Errorf("Precision() = %q, want %q", got, want)
	}
}

// locomoFixture returns the turns and questions of the first n LoCoMo
// conversations, each turn and question tagged with its conversation.
func locomoFixture(t *testing.T, n int) (turns, questions []string, turnConv, qConv []int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(shareddata.Dir(), "locomo", "locomo10.json"))
	if err != nil {
		t.Skipf("LoCoMo data not found (set ENGRAM_SHARED): %v", err)
	}
	var samples []struct {
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []struct {
			Question string `json:"question"`
		} `json:"qa"`
	}
	if err := json.Unmarshal(raw, &samples); err != nil {
		t.Fatalf("parse LoCoMo: %v", err)
	}
	for ci, s := range samples[:min(n, len(samples))] {
		var keys []string
		for k := range s.Conversation {
			if strings.HasPrefix(k, "session_") && !strings.HasSuffix(k, "date_time") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			var ts []struct{ Text, Blip_caption string }
			if json.Unmarshal(s.Conversation[k], &ts) != nil {
				continue // not a list of turns
			}
			for _, tu := range ts {
				text := tu.Text
				if tu.Blip_caption != "" {
					text += " [shares a photo: " + tu.Blip_caption + "]"
				}
				turns, turnConv = append(turns, text), append(turnConv, ci)
			}
		}
		for _, q := range s.QA {
			questions, qConv = append(questions, q.Question), append(qConv, ci)
		}
	}
	return turns, questions, turnConv, qConv
}

// TestInt8MatchesFP32OnLoCoMo compares the encoders on real dialogue: the
// cosine of every turn's two vectors, and, for every question, the overlap
// of the top 10 turns of its conversation by each encoder's vectors.
func TestInt8MatchesFP32OnLoCoMo(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds about 4,000 texts twice")
	}
	turns, questions, turnConv, qConv := locomoFixture(t, 6)
	lo, mean, refT, gotT := cosineStats(t, turns)
	t.Logf("%d LoCoMo turns: int8 cosine to fp32 min %.5f, mean %.5f", len(turns), lo, mean)
	_, _, refQ, gotQ := cosineStats(t, questions)
	var overlap float64
	worst := 10
	for qi := range questions {
		a := topK(refQ[qi], refT, turnConv, qConv[qi], 10)
		b := topK(gotQ[qi], gotT, turnConv, qConv[qi], 10)
		n := 0
		for _, x := range a {
			if slices.Contains(b, x) {
				n++
			}
		}
		overlap += float64(n)
		worst = min(worst, n)
	}
	overlap /= float64(len(questions))
	t.Logf("%d questions: top-10 overlap int8 vs fp32 mean %.3f, min %d", len(questions), overlap, worst)
	if overlap < int8MeanTop10 {
		t.Errorf("mean top-10 overlap %.3f < %g", overlap, int8MeanTop10)
	}
}

// topK returns the indices of the k vectors of conversation conv most
// similar to q.
func topK(q []float32, vs [][]float32, convOf []int, conv, k int) []int {
	type hit struct {
		i int
		s float64
	}
	var hits []hit
	for i, v := range vs {
		if convOf[i] == conv {
			hits = append(hits, hit{i, cosine(q, v)})
		}
	}
	sort.Slice(hits, func(a, b int) bool { return hits[a].s > hits[b].s })
	out := make([]int, 0, k)
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, h.i)
	}
	return out
}

func TestParsePrecision(t *testing.T) {
	for _, s := range []string{"fp32", "int8"} {
		if p, err := uselite.ParsePrecision(s); err != nil || string(p) != s {
			t.Errorf("ParsePrecision(%q) = %q, %v", s, p, err)
		}
	}
	for _, s := range []string{"", "FP32", "int4"} {
		_, err := uselite.ParsePrecision(s)
		if got, want := engram.ErrorCode(err), engram.EINVALID; got != want || !strings.Contains(err.Error(), "precision") {
			t.Errorf("ParsePrecision(%q): %v, want %s naming the precision", s, err, want)
		}
	}
	if _, err := uselite.LoadPrecision(uselite.DefaultDir(), "int4"); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("LoadPrecision(int4) = %v, want EINVALID", err)
	}
}

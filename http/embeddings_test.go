package http_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/openai"
)

// fakeEmbedder is a deterministic engram.Embedder: each text's vector is
// derived from hashes of the text, so equal texts get equal vectors and
// different texts almost surely different ones. It counts the texts it
// was asked to embed, and fails with err when set.
type fakeEmbedder struct {
	dim int

	mu    sync.Mutex
	texts int
	err   error
	// vectors, when set, replaces the answer, to play a broken embedder.
	vectors func(texts []string) [][]float32
}

func (f *fakeEmbedder) Name() string { return fmt.Sprintf("fake-%d", f.dim) }
func (f *fakeEmbedder) Dim() int     { return f.dim }

func (f *fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.texts += len(texts)
	if f.err != nil {
		return nil, f.err
	}
	if f.vectors != nil {
		return f.vectors(texts), nil
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = f.vector(t)
	}
	return out, nil
}

func (f *fakeEmbedder) vector(t string) []float32 {
	v := make([]float64, f.dim)
	var ss float64
	for j := range v {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d\x00%s", j, t)
		v[j] = float64(h.Sum64()%2001)/1000 - 1 + 1e-3
		ss += v[j] * v[j]
	}
	out := make([]float32, f.dim)
	for j, x := range v {
		out[j] = float32(x / math.Sqrt(ss))
	}
	return out
}

func (f *fakeEmbedder) embedded() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.texts
}

// embeddingsBody is the response of POST /v1/embeddings, decoded strictly.
type embeddingsBody struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

func postEmbeddings(t *testing.T, url, body string) embeddingsBody {
	t.Helper()
	r := do(t, "POST", url+"/v1/embeddings", body)
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if got, want := r.Header.Get("Content-Type"), "application/json"; got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
	var res embeddingsBody
	dec := json.NewDecoder(strings.NewReader(string(r.Body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("body %s: %v", r.Body, err)
	}
	return res
}

// floats decodes the embeddings of a float response.
func (b embeddingsBody) floats(t *testing.T) [][]float32 {
	t.Helper()
	out := make([][]float32, len(b.Data))
	for i, d := range b.Data {
		if err := json.Unmarshal(d.Embedding, &out[i]); err != nil {
			t.Fatalf("embedding %d %s is not an array of numbers: %v", i, d.Embedding, err)
		}
	}
	return out
}

// base64s decodes the embeddings of a base64 response the way OpenAI's
// SDKs do: little-endian float32s.
func (b embeddingsBody) base64s(t *testing.T) [][]float32 {
	t.Helper()
	out := make([][]float32, len(b.Data))
	for i, d := range b.Data {
		var s string
		if err := json.Unmarshal(d.Embedding, &s); err != nil {
			t.Fatalf("embedding %d %s is not a string: %v", i, d.Embedding, err)
		}
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("embedding %d is not standard base64: %v", i, err)
		}
		if len(raw)%4 != 0 {
			t.Fatalf("embedding %d has %d bytes, not a whole number of float32s", i, len(raw))
		}
		for j := 0; j < len(raw); j += 4 {
			out[i] = append(out[i], math.Float32frombits(binary.LittleEndian.Uint32(raw[j:])))
		}
	}
	return out
}

func sameVectors(a, b [][]float32) bool {
	return slices.EqualFunc(a, b, func(x, y []float32) bool {
		return slices.EqualFunc(x, y, func(p, q float32) bool { return math.Float32bits(p) == math.Float32bits(q) })
	})
}

func TestEmbeddings(t *testing.T) {
	emb := &fakeEmbedder{dim: 8}
	srv, _ := newFakeServer(t, &fakeService{}, engramhttp.ServerOptions{Embedder: emb})
	texts := []string{"I like tea", "Ann moved to Paris in 2021", "x"}
	want := make([][]float32, len(texts))
	for i, s := range texts {
		want[i] = emb.vector(s)
	}
	if slices.EqualFunc(want[0], want[1], func(a, b float32) bool { return a == b }) {
		t.Fatal("the fake gives two texts the same vector; the test could not tell them apart")
	}

	t.Run("array of strings", func(t *testing.T) {
		res := postEmbeddings(t, srv.URL, `{"input":`+mustJSON(t, texts)+`,"model":"text-embedding-3-small","user":"u1"}`)
		if got, want := res.Object, "list"; got != want {
			t.Errorf("object = %q, want %q", got, want)
		}
		// The response names the model that made the vectors, not the one
		// the client asked for.
		if got, want := res.Model, emb.Name(); got != want {
			t.Errorf("model = %q, want %q", got, want)
		}
		for i, d := range res.Data {
			if d.Object != "embedding" || d.Index != i {
				t.Errorf("data[%d] = object %q index %d, want embedding %d", i, d.Object, d.Index, i)
			}
		}
		if got := res.floats(t); !sameVectors(got, want) {
			t.Errorf("embeddings differ from the embedder's:\n got %v\nwant %v", got, want)
		}
		if res.Usage.PromptTokens < len(texts) || res.Usage.TotalTokens != res.Usage.PromptTokens {
			t.Errorf("usage = %+v, want at least one token per text and total = prompt", res.Usage)
		}
	})

	t.Run("one string", func(t *testing.T) {
		res := postEmbeddings(t, srv.URL, `{"input":"I like tea"}`)
		if got := res.floats(t); !sameVectors(got, want[:1]) {
			t.Errorf("embedding of a string input:\n got %v\nwant %v", got, want[:1])
		}
		arr := postEmbeddings(t, srv.URL, `{"input":["I like tea"]}`)
		if res.Usage != arr.Usage {
			t.Errorf("usage of a string %+v differs from that of a one-element array %+v", res.Usage, arr.Usage)
		}
	})

	t.Run("base64", func(t *testing.T) {
		res := postEmbeddings(t, srv.URL, `{"input":`+mustJSON(t, texts)+`,"encoding_format":"base64"}`)
		if got := res.base64s(t); !sameVectors(got, want) {
			t.Errorf("base64 embeddings decode to\n%v\nwant the float ones\n%v", got, want)
		}
		floats := postEmbeddings(t, srv.URL, `{"input":`+mustJSON(t, texts)+`,"encoding_format":"float"}`)
		if !sameVectors(res.base64s(t), floats.floats(t)) {
			t.Error("base64 and float answers differ")
		}
	})

	t.Run("matching dimensions", func(t *testing.T) {
		res := postEmbeddings(t, srv.URL, `{"input":"x","dimensions":8}`)
		if got := res.floats(t); !sameVectors(got, want[2:]) {
			t.Errorf("got %v, want %v", got, want[2:])
		}
	})

	t.Run("usage grows with the text", func(t *testing.T) {
		short := postEmbeddings(t, srv.URL, `{"input":"tea"}`)
		long := postEmbeddings(t, srv.URL, `{"input":"`+strings.Repeat("tea and biscuits ", 50)+`"}`)
		if short.Usage.PromptTokens < 1 || long.Usage.PromptTokens <= 10*short.Usage.PromptTokens {
			t.Errorf("usage of 3 bytes %d, of 850 bytes %d; want at least 1 and a count that grows with the text",
				short.Usage.PromptTokens, long.Usage.PromptTokens)
		}
	})
}

func TestEmbeddings_BadInput(t *testing.T) {
	emb := &fakeEmbedder{dim: 8}
	srv, _ := newFakeServer(t, &fakeService{}, engramhttp.ServerOptions{Embedder: emb})
	many := make([]string, engramhttp.MaxEmbeddingInputs+1)
	for i := range many {
		many[i] = "t"
	}
	long := strings.Repeat("x", engram.MaxContentBytes+1)
	for _, tc := range []struct {
		name, body, msg string
	}{
		{"dimensions mismatch", `{"input":"x","dimensions":1536}`, "dimensions 1536 cannot be served: this server's model fake-8 produces vectors of 8 dimensions"},
		{"zero dimensions", `{"input":"x","dimensions":0}`, "dimensions 0"},
		{"empty string", `{"input":""}`, "input is empty"},
		{"empty text in array", `{"input":["a",""]}`, "input[1] is empty"},
		{"empty array", `{"input":[]}`, "input is an empty array"},
		{"too many inputs", `{"input":` + mustJSON(t, many) + `}`, fmt.Sprintf("input has %d texts, more than the limit of %d", len(many), engramhttp.MaxEmbeddingInputs)},
		{"text too long", `{"input":["a","` + long + `"]}`, fmt.Sprintf("input[1] is %d bytes, longer than the limit of %d", len(long), engram.MaxContentBytes)},
		{"no input", `{"model":"m"}`, `"input" is required`},
		{"null input", `{"input":null}`, `"input" is required`},
		{"token ids", `{"input":[1,2,3]}`, "input[0] is token ids"},
		{"arrays of token ids", `{"input":[[1,2],[3]]}`, "input[0] is token ids"},
		{"one token id", `{"input":7}`, "input is token ids"},
		{"object input", `{"input":{"text":"x"}}`, "input must be a string or an array of strings"},
		{"null in array", `{"input":["a",null]}`, "input[1] must be a string"},
		{"unknown encoding", `{"input":"x","encoding_format":"int8"}`, `encoding_format "int8" is not one of float, base64`},
		{"unknown field", `{"input":"x","input_type":"query"}`, `unknown field "input_type"`},
		{"dimensions not a number", `{"input":"x","dimensions":"8"}`, `dimensions must be an integer`},
		{"not JSON", `input=x`, "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, "POST", srv.URL+"/v1/embeddings", tc.body)
			checkBadInput(t, badInput{status: 400, code: engram.EINVALID, msg: tc.msg}, r)
		})
	}
	if n := emb.embedded(); n != 0 {
		t.Errorf("the embedder was asked for %d texts by bad requests", n)
	}

	// The limits are inclusive.
	res := postEmbeddings(t, srv.URL, `{"input":`+mustJSON(t, many[1:])+`}`)
	if got, want := len(res.Data), engramhttp.MaxEmbeddingInputs; got != want {
		t.Errorf("%d embeddings for %d texts", got, want)
	}
	res = postEmbeddings(t, srv.URL, `{"input":"`+long[1:]+`"}`)
	if got, want := len(res.Data), 1; got != want {
		t.Errorf("%d embeddings for %d texts", got, want)
	}
}

func TestEmbeddings_Failures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		emb    engram.Embedder
		status int
		code   string
		msg    string
	}{
		{"no embedder", nil, 503, engram.EUNAVAILABLE, "this server has no embedder configured"},
		{"embedder unavailable", &fakeEmbedder{dim: 4, err: engram.Errorf(engram.EUNAVAILABLE, "model server is down")}, 503, engram.EUNAVAILABLE, "model server is down"},
		{"embedder mismatch", &fakeEmbedder{dim: 4, err: engram.Errorf(engram.EMISMATCH, "model changed")}, 422, engram.EMISMATCH, "model changed"},
		{"embedder fails", &fakeEmbedder{dim: 4, err: errors.New("onnx: out of memory")}, 500, engram.EINTERNAL, "internal error"},
		{"embedder returns too few vectors", &fakeEmbedder{dim: 4, vectors: func([]string) [][]float32 { return nil }}, 500, engram.EINTERNAL, "internal error"},
		{"embedder returns a short vector", &fakeEmbedder{dim: 4, vectors: func(ts []string) [][]float32 {
			return [][]float32{make([]float32, 3)}
		}}, 500, engram.EINTERNAL, "internal error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := engramhttp.ServerOptions{}
			if tc.emb != nil {
				opts.Embedder = tc.emb
			}
			srv, _ := newFakeServer(t, &fakeService{}, opts)
			r := do(t, "POST", srv.URL+"/v1/embeddings", `{"input":["a"]}`)
			checkBadInput(t, badInput{status: tc.status, code: tc.code, msg: tc.msg}, r)
		})
	}
}

// lazyDimEmbedder reports dimension 0, as an embedder that learns its
// length from its first answer does before it has one.
type lazyDimEmbedder struct{ *fakeEmbedder }

func (lazyDimEmbedder) Dim() int { return 0 }

// TestEmbeddings_UnknownDimension: dimensions is checked against the
// vectors when the embedder cannot say its length in advance.
func TestEmbeddings_UnknownDimension(t *testing.T) {
	srv, _ := newFakeServer(t, &fakeService{}, engramhttp.ServerOptions{Embedder: lazyDimEmbedder{&fakeEmbedder{dim: 4}}})
	if res := postEmbeddings(t, srv.URL, `{"input":"x","dimensions":4}`); len(res.floats(t)[0]) != 4 {
		t.Errorf("got %s, want a 4-dimensional vector", res.Data[0].Embedding)
	}
	r := do(t, "POST", srv.URL+"/v1/embeddings", `{"input":"x","dimensions":5}`)
	checkBadInput(t, badInput{status: 400, code: engram.EINVALID, msg: "produces vectors of 4 dimensions"}, r)
}

// TestEmbeddings_OpenAIClient points engram's own OpenAI-compatible
// embedder at the endpoint: a standard client can consume it, and gets the
// vectors of the server's model.
func TestEmbeddings_OpenAIClient(t *testing.T) {
	emb := &fakeEmbedder{dim: 16}
	srv := httptest.NewServer(engramhttp.NewServer(&fakeService{}, engramhttp.ServerOptions{Logger: discardLogger(), Embedder: emb}))
	t.Cleanup(srv.Close)
	ctx := context.Background()

	// A batch size below the number of texts makes the client send
	// several requests and reassemble the answers by index.
	client, err := openai.NewEmbedder(openai.Config{BaseURL: srv.URL + "/v1", Model: "x", BatchSize: 3, MaxRetries: -1, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"alpha", "beta", "gamma", "delta", "épsilon ✓", "zeta"}
	got, err := client.Embed(ctx, texts)
	if err != nil {
		t.Fatalf("Embed through engram: %v", err)
	}
	want, err := emb.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	if !sameVectors(got, want) {
		t.Errorf("the client's vectors differ from the server's model:\n got %v\nwant %v", got, want)
	}
	if got, want := client.Dim(), emb.Dim(); got != want {
		t.Errorf("client learnt Dim %d, want %d", got, want)
	}

	// A client asking for the model's own dimension is served; one asking
	// for another is told why not, without retries.
	same, err := openai.NewEmbedder(openai.Config{BaseURL: srv.URL, Model: "x", Dimensions: 16, MaxRetries: -1, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := same.Probe(ctx); err != nil {
		t.Errorf("Probe with matching dimensions: %v", err)
	}
	other, err := openai.NewEmbedder(openai.Config{BaseURL: srv.URL + "/v1", Model: "x", Dimensions: 1536, MaxRetries: -1, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.Embed(ctx, []string{"x"})
	if got, want := engram.ErrorCode(err), engram.EINVALID; got != want {
		t.Errorf("Embed with dimensions 1536: code %q (%v), want %q", got, err, want)
	}
	if !strings.Contains(engram.ErrorMessage(err), "produces vectors of 16 dimensions") {
		t.Errorf("message %q does not carry the server's sentence", engram.ErrorMessage(err))
	}
}

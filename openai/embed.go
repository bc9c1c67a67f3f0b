package openai

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"unicode/utf8"

	"github.com/engramhq/engram"
)

// Embedder embeds texts with an OpenAI-compatible /embeddings endpoint. It
// implements engram.Embedder and is safe for concurrent use.
type Embedder struct {
	c    client
	name string
	dim  atomic.Int64 // configured, or learnt from the first answer; 0 before
}

var _ engram.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder for cfg, or an EINVALID error when cfg is
// unusable. It makes no request; call Probe to check the server.
func NewEmbedder(cfg Config) (*Embedder, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Embedder{c: client{cfg: cfg}, name: "openai:" + cfg.Model}
	if cfg.Dimensions > 0 {
		// Shortened vectors of one model are not comparable with its full
		// ones, so the length is part of the identity stores check.
		e.name += ":" + strconv.Itoa(cfg.Dimensions)
		e.dim.Store(int64(cfg.Dimensions))
	}
	return e, nil
}

// Name returns "openai:<model>", with ":<dimensions>" appended when
// Config.Dimensions is set.
func (e *Embedder) Name() string { return e.name }

// Dim returns Config.Dimensions when set, else the vector length of the
// first successful answer, and 0 before any (see Probe).
func (e *Embedder) Dim() int { return int(e.dim.Load()) }

// Probe embeds a short text, so that Dim is known afterwards, and returns
// the dimension. It fails like Embed, e.g. EUNAVAILABLE when the server is
// down or EMISMATCH when it ignores Config.Dimensions.
func (e *Embedder) Probe(ctx context.Context) (int, error) {
	if _, err := e.Embed(ctx, []string{"probe"}); err != nil {
		return 0, err
	}
	return e.Dim(), nil
}

type embeddingRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     int      `json:"dimensions,omitempty"`
	EncodingFormat string   `json:"encoding_format"`
}

type embeddingResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// Embed returns one unit-length vector per text, in order, sending at most
// Config.BatchSize texts per request. It fails as a whole: EINVALID for an
// empty or non-UTF-8 text or a rejected request, EMISMATCH when the server's
// vectors do not have the expected length, EINTERNAL when its answer is
// malformed (wrong count, bad indexes, zero or non-finite vectors), and as
// described in the package comment for HTTP failures.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for i, t := range texts {
		if t == "" {
			return nil, engram.Errorf(engram.EINVALID, "openai: text %d is empty; embeddings endpoints reject empty input", i)
		}
		if !utf8.ValidString(t) {
			return nil, engram.Errorf(engram.EINVALID, "openai: text %d is not valid UTF-8", i)
		}
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.c.cfg.BatchSize {
		batch := texts[start:min(start+e.c.cfg.BatchSize, len(texts))]
		vecs, err := e.embedBatch(ctx, batch)
		if err != nil {
			if len(texts) > len(batch) {
				return nil, fmt.Errorf("texts %d to %d: %w", start, start+len(batch)-1, err)
			}
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (e *Embedder) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	req := embeddingRequest{
		Model:          e.c.cfg.Model,
		Input:          batch,
		Dimensions:     e.c.cfg.Dimensions,
		EncodingFormat: "float",
	}
	var resp embeddingResponse
	if err := e.c.post(ctx, "/embeddings", req, &resp); err != nil {
		return nil, err
	}
	if len(resp.Data) != len(batch) {
		return nil, engram.Errorf(engram.EINTERNAL, "openai: the server returned %d embeddings for %d texts", len(resp.Data), len(batch))
	}

	// Servers may answer out of order; index says which input each is for.
	// A server that omits every index is taken to answer in order.
	out := make([][]float32, len(batch))
	for pos, d := range resp.Data {
		i := pos
		if d.Index != nil {
			i = *d.Index
		} else if pos > 0 && resp.Data[0].Index != nil {
			return nil, engram.Errorf(engram.EINTERNAL, "openai: the server's embedding %d has no index while others do", pos)
		}
		if i < 0 || i >= len(batch) {
			return nil, engram.Errorf(engram.EINTERNAL, "openai: the server returned an embedding for index %d of a batch of %d", i, len(batch))
		}
		if out[i] != nil {
			return nil, engram.Errorf(engram.EINTERNAL, "openai: the server returned two embeddings for index %d", i)
		}
		if len(d.Embedding) == 0 {
			return nil, engram.Errorf(engram.EINTERNAL, "openai: the server returned an empty embedding for index %d", i)
		}
		out[i] = d.Embedding
	}

	if err := e.checkDim(len(out[0])); err != nil {
		return nil, err
	}
	for i, v := range out {
		if len(v) != len(out[0]) {
			return nil, engram.Errorf(engram.EMISMATCH, "openai: the server returned vectors of %d and %d dimensions in one answer", len(out[0]), len(v))
		}
		if err := normalize(v); err != nil {
			return nil, engram.Errorf(engram.EINTERNAL, "openai: embedding of text %d: %v", i, err)
		}
	}
	return out, nil
}

// checkDim compares a returned length with the configured or learnt one,
// learning it on the first answer.
func (e *Embedder) checkDim(n int) error {
	if e.c.cfg.Dimensions > 0 {
		if n != e.c.cfg.Dimensions {
			return engram.Errorf(engram.EMISMATCH, "openai: the server returned %d-dimensional vectors but Dimensions is %d; model %q may not support the dimensions parameter",
				n, e.c.cfg.Dimensions, e.c.cfg.Model)
		}
		return nil
	}
	if e.dim.CompareAndSwap(0, int64(n)) {
		return nil
	}
	if want := e.Dim(); n != want {
		return engram.Errorf(engram.EMISMATCH, "openai: the server returned %d-dimensional vectors, earlier answers had %d; did the model %q change?",
			n, want, e.c.cfg.Model)
	}
	return nil
}

// normalize scales v to unit length in place unless it already is.
func normalize(v []float32) error {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	norm := math.Sqrt(ss)
	switch {
	case math.IsNaN(norm) || math.IsInf(norm, 0):
		return fmt.Errorf("the vector has a non-finite component")
	case norm == 0:
		return fmt.Errorf("the vector is all zeros and has no direction")
	case math.Abs(norm-1) < 1e-5:
		return nil
	}
	inv := 1 / norm
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return nil
}

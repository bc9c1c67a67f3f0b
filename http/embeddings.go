package http

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"unicode/utf8"

	"github.com/engramhq/engram"
)

// MaxEmbeddingInputs is the most texts one POST /v1/embeddings request may
// carry; OpenAI's API has the same limit, so clients already batch to it.
const MaxEmbeddingInputs = 2048

// Encodings of the vectors in an embeddings response.
const (
	EncodingFloat  = "float"  // a JSON array of numbers
	EncodingBase64 = "base64" // the little-endian float32 bytes, standard base64
)

// embeddingsRequest is the body of POST /v1/embeddings, in the shape of
// OpenAI's embeddings API. Input stays raw because it is a string or an
// array, and token-id arrays deserve their own error message.
type embeddingsRequest struct {
	Input json.RawMessage `json:"input"`
	// Model is accepted and ignored: the server has one embedder, named in
	// the response, and clients send their own default model name.
	Model          string `json:"model,omitempty"`
	EncodingFormat string `json:"encoding_format,omitempty"`
	Dimensions     *int   `json:"dimensions,omitempty"`
	User           string `json:"user,omitempty"`
}

// embeddingsResponse is the body of a successful POST /v1/embeddings.
type embeddingsResponse struct {
	Object string          `json:"object"` // always "list"
	Data   []embeddingData `json:"data"`
	Model  string          `json:"model"`
	Usage  embeddingsUsage `json:"usage"`
}

type embeddingData struct {
	Object string `json:"object"` // always "embedding"
	Index  int    `json:"index"`
	// Embedding is a []float32, or a string for EncodingBase64.
	Embedding any `json:"embedding"`
}

// embeddingsUsage counts tokens the way OpenAI's response does. engram's
// models do not use OpenAI's tokenizer, so the counts are estimates.
type embeddingsUsage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// handleEmbeddings serves the server's embedder in the shape of OpenAI's
// embeddings API, so that other programs can share engram's model by
// pointing an OpenAI client at /v1.
func (s *Server) handleEmbeddings(w http.ResponseWriter, r *http.Request, _ query) error {
	if s.embedder == nil {
		return engram.Errorf(engram.EUNAVAILABLE, "this server has no embedder configured, so POST /v1/embeddings cannot answer")
	}
	var req embeddingsRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	texts, err := embeddingInputs(req.Input)
	if err != nil {
		return err
	}
	if err := s.checkEmbedBytes("inputs", texts); err != nil {
		return err
	}
	format := req.EncodingFormat
	switch format {
	case "":
		format = EncodingFloat
	case EncodingFloat, EncodingBase64:
	default:
		return engram.Errorf(engram.EINVALID, "request body: encoding_format %q is not one of float, base64", format)
	}
	dim := s.embedder.Dim()
	// An embedder that learns its length from its first answer reports 0
	// until then; its vectors are checked after embedding instead.
	if req.Dimensions != nil && dim > 0 && *req.Dimensions != dim {
		return s.dimensionsError(*req.Dimensions, dim)
	}

	vecs, err := s.embedder.Embed(embedPartition(r), texts)
	if err != nil {
		return fmt.Errorf("embeddings: embed %d texts with %s: %w", len(texts), s.embedder.Name(), err)
	}
	if len(vecs) != len(texts) {
		return fmt.Errorf("embeddings: embedder %s returned %d vectors for %d texts", s.embedder.Name(), len(vecs), len(texts))
	}
	if dim == 0 {
		dim = len(vecs[0])
		if dim == 0 {
			return fmt.Errorf("embeddings: embedder %s returned an empty vector", s.embedder.Name())
		}
	}
	for i, v := range vecs {
		if len(v) != dim {
			return fmt.Errorf("embeddings: embedder %s returned a vector of %d dimensions for text %d, want %d", s.embedder.Name(), len(v), i, dim)
		}
	}
	if req.Dimensions != nil && *req.Dimensions != dim {
		return s.dimensionsError(*req.Dimensions, dim)
	}

	resp := embeddingsResponse{
		Object: "list",
		Data:   make([]embeddingData, len(vecs)),
		Model:  s.embedder.Name(),
	}
	for i, v := range vecs {
		d := embeddingData{Object: "embedding", Index: i, Embedding: v}
		if format == EncodingBase64 {
			d.Embedding = base64Vector(v)
		}
		resp.Data[i] = d
		resp.Usage.PromptTokens += estimateTokens(texts[i])
	}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// embedPartition returns the request's context naming the embedding cache
// partition of its API key's binding (org, project and user when bound to
// one), so that how fast a text is answered says nothing about texts other
// tenants or users stored. Without authentication every request shares
// the partition of calls that name none, which no stored memory fills.
func embedPartition(r *http.Request) context.Context {
	k := keyFrom(r.Context())
	if k == nil {
		return r.Context()
	}
	return engram.WithEmbedPartition(r.Context(), engram.Namespace{Org: k.Org, Project: k.Project, User: k.User})
}

func (s *Server) dimensionsError(asked, dim int) error {
	return engram.Errorf(engram.EINVALID, "request body: dimensions %d cannot be served: this server's model %s produces vectors of %d dimensions; send %d or leave dimensions out",
		asked, s.embedder.Name(), dim, dim)
}

// embeddingInputs reads the input field: one string or an array of
// strings, each non-empty and at most engram.MaxContentBytes.
func embeddingInputs(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, engram.Errorf(engram.EINVALID, "request body: field \"input\" is required: a string or an array of strings")
	}
	var texts []string
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, bodyError("request body: input", err)
		}
		texts = []string{s}
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, bodyError("request body: input", err)
		}
		if len(items) == 0 {
			return nil, engram.Errorf(engram.EINVALID, "request body: input is an empty array; send at least one text")
		}
		if len(items) > MaxEmbeddingInputs {
			return nil, engram.Errorf(engram.EINVALID, "request body: input has %d texts, more than the limit of %d; split it into several requests", len(items), MaxEmbeddingInputs)
		}
		texts = make([]string, len(items))
		for i, it := range items {
			if len(it) == 0 || it[0] != '"' {
				return nil, inputTypeError(fmt.Sprintf("input[%d]", i), it)
			}
			if err := json.Unmarshal(it, &texts[i]); err != nil {
				return nil, bodyError(fmt.Sprintf("request body: input[%d]", i), err)
			}
		}
	default:
		return nil, inputTypeError("input", raw)
	}
	for i, t := range texts {
		what := "input"
		if raw[0] == '[' {
			what = fmt.Sprintf("input[%d]", i)
		}
		if t == "" {
			return nil, engram.Errorf(engram.EINVALID, "request body: %s is empty; every text to embed must have content", what)
		}
		if len(t) > engram.MaxContentBytes {
			return nil, engram.Errorf(engram.EINVALID, "request body: %s is %d bytes, longer than the limit of %d", what, len(t), engram.MaxContentBytes)
		}
		// Go's decoder replaces invalid UTF-8 in JSON strings, so this only
		// guards against a future change of decoder.
		if !utf8.ValidString(t) {
			return nil, engram.Errorf(engram.EINVALID, "request body: %s is not valid UTF-8", what)
		}
	}
	return texts, nil
}

// inputTypeError explains an input that is not text. Numbers and arrays of
// numbers are OpenAI's token-id form, which only a server with the
// client's tokenizer can read.
func inputTypeError(what string, v json.RawMessage) error {
	if len(v) > 0 && (v[0] == '[' || v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
		return engram.Errorf(engram.EINVALID, "request body: %s is token ids; this server embeds text only, so send strings (LangChain: set check_embedding_ctx_length=False)", what)
	}
	return engram.Errorf(engram.EINVALID, "request body: %s must be a string or an array of strings", what)
}

// base64Vector encodes v as OpenAI's base64 encoding format does: the
// little-endian IEEE 754 float32 bytes, standard base64 with padding.
func base64Vector(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// estimateTokens estimates the tokens of t at one per four bytes of UTF-8,
// rounded up, the usual rule of thumb for English with BPE tokenizers.
func estimateTokens(t string) int {
	return (len(t) + 3) / 4
}

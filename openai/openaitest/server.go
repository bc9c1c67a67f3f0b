package openaitest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
)

// Options configure a Server. The zero value is a working server.
type Options struct {
	// Dim is the length of returned vectors when a request does not ask for
	// "dimensions". Default 32.
	Dim int
	// APIKey, when set, must arrive as "Authorization: Bearer <key>", else
	// the server answers 401 like OpenAI does.
	APIKey string
	// Models, when set, lists the only model names accepted; others get
	// 404 model_not_found.
	Models []string
	// IgnoreDimensions makes the server ignore the "dimensions" parameter,
	// like servers whose models cannot shorten vectors.
	IgnoreDimensions bool
	// Shuffle returns embeddings out of order (each with its correct index).
	Shuffle bool
	// Unnormalized returns vectors of length 3 instead of unit length.
	Unnormalized bool
	// Latency delays every answer (SetLatency changes it later).
	Latency time.Duration
	// StructuredOutputs makes the server accept response_format
	// json_schema; without it such requests get 400, like servers that
	// only know JSON mode.
	StructuredOutputs bool
	// Chat produces a chat reply when no queued reply (QueueChat) is left.
	// Without either, a chat request is answered with 400.
	Chat func(ChatRequest) string
	// Transcribe answers POST /v1/audio/transcriptions; without it such a
	// request is answered with 400. Segments are sent only when the
	// request asks for response_format verbose_json.
	Transcribe func(TranscriptionRequest) Transcription
}

// TranscriptionRequest is the multipart body of POST
// /v1/audio/transcriptions.
type TranscriptionRequest struct {
	Model          string
	FileName       string
	File           []byte
	ResponseFormat string
	Language       string
}

// Transcription is the answer to a TranscriptionRequest.
type Transcription struct {
	Text     string
	Segments []TranscriptionSegment
}

// TranscriptionSegment is one timed segment of a Transcription; Speaker is
// sent as diarizing models do, when set.
type TranscriptionSegment struct {
	Start   float64 `json:"start"`
	End     float64 `json:"end"`
	Text    string  `json:"text"`
	Speaker string  `json:"speaker,omitempty"`
}

// Fault makes the server fail one request.
type Fault struct {
	// Status is the HTTP status to answer with, e.g. 429, 500, 503;
	// default 500.
	Status int
	// RetryAfter, when non-empty, is sent as the Retry-After header.
	RetryAfter string
	// Message is the error message in the body; default "openaitest:
	// injected fault".
	Message string
	// Drop closes the connection without any answer instead (Status is
	// then ignored), which the client sees as a transport error.
	Drop bool
}

// Request is one request the server received, as recorded for assertions.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// Status is what the server answered; 0 when it sent nothing (a
	// dropped connection or a client that gave up during Latency).
	Status int
	// Embedding or Chat is the decoded body for the two endpoints, nil when
	// it could not be decoded.
	Embedding     *EmbeddingRequest
	Chat          *ChatRequest
	Transcription *TranscriptionRequest
}

// EmbeddingRequest is the body of POST /v1/embeddings. Input is normalised
// to a list (OpenAI also accepts a single string).
type EmbeddingRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"-"`
	Dimensions     *int     `json:"dimensions,omitempty"`
	EncodingFormat string   `json:"encoding_format,omitempty"`
}

// ChatRequest is the body of POST /v1/chat/completions.
type ChatRequest struct {
	Model          string          `json:"model"`
	Messages       []ChatMessage   `json:"messages"`
	Temperature    *float64        `json:"temperature,omitempty"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
	// Stream asks for the reply as server-sent events, one chunk per word,
	// ending with "data: [DONE]".
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	// User is the end-user id OpenAI takes for abuse monitoring.
	User string `json:"user,omitempty"`
}

// StreamOptions is a ChatRequest's stream_options; IncludeUsage adds a
// last chunk with no choices and the usage.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage,omitempty"`
}

// ChatMessage is one message of a ChatRequest. Content is the message's
// text: a string as sent, or the text parts of an array of content parts
// joined, in order; Parts reports that it came as such an array, and
// Images lists the URLs of its image_url parts (data: URLs included).
type ChatMessage struct {
	Role    string   `json:"role"`
	Content string   `json:"content"`
	Parts   bool     `json:"-"`
	Images  []string `json:"-"`
}

// UnmarshalJSON decodes a message whose content is a string, null or an
// array of content parts; other content is an error.
func (m *ChatMessage) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = ChatMessage{Role: raw.Role}
	if len(raw.Content) == 0 || string(raw.Content) == "null" {
		return nil
	}
	if raw.Content[0] != '[' {
		return json.Unmarshal(raw.Content, &m.Content)
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(raw.Content, &parts); err != nil {
		return fmt.Errorf("message content: %w", err)
	}
	var sb strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text":
			sb.WriteString(p.Text)
		case "image_url":
			m.Images = append(m.Images, p.ImageURL.URL)
		}
	}
	m.Content, m.Parts = sb.String(), true
	return nil
}

// ResponseFormat is a ChatRequest's response_format; Type "json_object"
// asks for JSON mode.
type ResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema json.RawMessage `json:"json_schema,omitempty"`
}

// Server is a fake OpenAI-compatible server listening on 127.0.0.1. Its
// methods are safe for concurrent use.
type Server struct {
	ts   *httptest.Server
	opts Options

	mu      sync.Mutex
	dim     int
	latency time.Duration
	faults  []Fault
	replies []string
	reqs    []*Request
	rng     *rand.Rand
	chatN   int
	down    bool
	hang    func(Request) bool
}

// NewServer starts a server. When t is non-nil the server is closed at the
// end of the test; otherwise call Close. It panics if it cannot listen.
func NewServer(t testing.TB, opts Options) *Server {
	if opts.Dim <= 0 {
		opts.Dim = 32
	}
	s := &Server{
		opts:    opts,
		dim:     opts.Dim,
		latency: opts.Latency,
		rng:     rand.New(rand.NewPCG(1, 2)),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/embeddings", s.handle(s.embeddings))
	mux.HandleFunc("/v1/chat/completions", s.handle(s.chat))
	mux.HandleFunc("/v1/audio/transcriptions", s.handle(s.transcribe))
	s.ts = httptest.NewServer(mux)
	if t != nil {
		t.Cleanup(s.Close)
	}
	return s
}

// URL returns the API base URL, "http://127.0.0.1:<port>/v1".
func (s *Server) URL() string { return s.ts.URL + "/v1" }

// Close stops the server, cutting requests still in progress.
func (s *Server) Close() {
	s.ts.CloseClientConnections()
	s.ts.Close()
}

// FailNext makes the next n requests, to either endpoint, fail with f.
// Faults queue up behind ones not yet used.
func (s *Server) FailNext(n int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults = append(s.faults, f)
	}
}

// SetDown takes the server down (on) or back up: while it is down, every
// request's connection is closed without an answer, as a crashed upstream
// behind a proxy does.
func (s *Server) SetDown(on bool) {
	s.mu.Lock()
	s.down = on
	s.mu.Unlock()
}

// SetHang makes later requests that match never get an answer: the server
// holds each until its client gives up or the server closes. nil stops
// the hanging (requests already held stay held).
func (s *Server) SetHang(match func(Request) bool) {
	s.mu.Lock()
	s.hang = match
	s.mu.Unlock()
}

// SetLatency delays every later answer by d.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	s.latency = d
	s.mu.Unlock()
}

// SetDim changes the default vector length of later answers.
func (s *Server) SetDim(dim int) {
	s.mu.Lock()
	s.dim = dim
	s.mu.Unlock()
}

// QueueChat appends replies that later chat requests receive, one each, in
// order, before Options.Chat is consulted.
func (s *Server) QueueChat(replies ...string) {
	s.mu.Lock()
	s.replies = append(s.replies, replies...)
	s.mu.Unlock()
}

// Requests returns a copy of the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = *r
	}
	return out
}

// Reset forgets recorded requests, pending faults and queued replies.
func (s *Server) Reset() {
	s.mu.Lock()
	s.reqs, s.faults, s.replies = nil, nil, nil
	s.mu.Unlock()
}

// handle wraps an endpoint with recording, latency, faults and the key check.
func (s *Server) handle(fn func(w http.ResponseWriter, r *Request) int) http.HandlerFunc {
	return func(w http.ResponseWriter, hr *http.Request) {
		body, _ := io.ReadAll(hr.Body)
		rec := &Request{Method: hr.Method, Path: hr.URL.Path, Header: hr.Header.Clone(), Body: body}
		s.mu.Lock()
		s.reqs = append(s.reqs, rec)
		latency := s.latency
		var fault *Fault
		switch {
		case s.down:
			fault = &Fault{Drop: true}
		case s.hang != nil && s.hang(*rec):
			s.mu.Unlock()
			<-hr.Context().Done() // closing the server cuts the connection too
			return
		case len(s.faults) > 0:
			fault = &s.faults[0]
			s.faults = s.faults[1:]
		}
		s.mu.Unlock()

		status := s.serve(w, hr, rec, latency, fault, fn)
		s.mu.Lock()
		rec.Status = status
		s.mu.Unlock()
	}
}

func (s *Server) serve(w http.ResponseWriter, hr *http.Request, rec *Request, latency time.Duration, fault *Fault, fn func(http.ResponseWriter, *Request) int) int {
	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-t.C:
		case <-hr.Context().Done():
			t.Stop()
			return 0
		}
	}
	if fault != nil {
		if fault.Drop {
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					conn.Close()
					return 0
				}
			}
			panic(http.ErrAbortHandler)
		}
		if fault.RetryAfter != "" {
			w.Header().Set("Retry-After", fault.RetryAfter)
		}
		msg := fault.Message
		if msg == "" {
			msg = "openaitest: injected fault"
		}
		status := fault.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		return writeError(w, status, msg, "server_error", "")
	}
	if hr.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return writeError(w, http.StatusMethodNotAllowed, "only POST is supported", "invalid_request_error", "")
	}
	if key := s.opts.APIKey; key != "" {
		auth := hr.Header.Get("Authorization")
		switch {
		case auth == "":
			return writeError(w, http.StatusUnauthorized, "You didn't provide an API key.", "invalid_request_error", "")
		case auth != "Bearer "+key:
			return writeError(w, http.StatusUnauthorized, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
		}
	}
	return fn(w, rec)
}

func (s *Server) checkModel(w http.ResponseWriter, model string) (int, bool) {
	if model == "" {
		return writeError(w, http.StatusBadRequest, "you must provide a model parameter", "invalid_request_error", ""), false
	}
	if len(s.opts.Models) > 0 && !slices.Contains(s.opts.Models, model) {
		return writeError(w, http.StatusNotFound, fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model),
			"invalid_request_error", "model_not_found"), false
	}
	return 0, true
}

func (s *Server) embeddings(w http.ResponseWriter, rec *Request) int {
	var raw struct {
		EmbeddingRequest
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(rec.Body, &raw); err != nil {
		return writeError(w, http.StatusBadRequest, "We could not parse the JSON body of your request: "+err.Error(), "invalid_request_error", "")
	}
	req := raw.EmbeddingRequest
	var one string
	if json.Unmarshal(raw.Input, &one) == nil {
		req.Input = []string{one}
	} else if err := json.Unmarshal(raw.Input, &req.Input); err != nil {
		return writeError(w, http.StatusBadRequest, "'input' must be a string or an array of strings", "invalid_request_error", "")
	}
	s.mu.Lock()
	rec.Embedding = &req
	dim := s.dim
	s.mu.Unlock()

	if st, ok := s.checkModel(w, req.Model); !ok {
		return st
	}
	if len(req.Input) == 0 {
		return writeError(w, http.StatusBadRequest, "'input' is empty", "invalid_request_error", "")
	}
	for i, t := range req.Input {
		if t == "" {
			return writeError(w, http.StatusBadRequest, fmt.Sprintf("'$.input[%d]' is invalid: empty string", i), "invalid_request_error", "")
		}
	}
	if req.Dimensions != nil && !s.opts.IgnoreDimensions {
		if d := *req.Dimensions; d < 1 || d > 8192 {
			return writeError(w, http.StatusBadRequest, fmt.Sprintf("'dimensions' %d is outside 1..8192", d), "invalid_request_error", "")
		}
		dim = *req.Dimensions
	}
	if f := req.EncodingFormat; f != "" && f != "float" && f != "base64" {
		return writeError(w, http.StatusBadRequest, fmt.Sprintf("'encoding_format' %q is not float or base64", f), "invalid_request_error", "")
	}

	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	data := make([]item, len(req.Input))
	tokens := 0
	for i, text := range req.Input {
		v := Vector(text, dim)
		if s.opts.Unnormalized {
			for j := range v {
				v[j] *= 3
			}
		}
		var emb any = v
		if req.EncodingFormat == "base64" {
			b := make([]byte, 4*len(v))
			for j, x := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
			}
			emb = base64.StdEncoding.EncodeToString(b)
		}
		data[i] = item{Object: "embedding", Index: i, Embedding: emb}
		tokens += len(words(text))
	}
	if s.opts.Shuffle {
		s.mu.Lock()
		s.rng.Shuffle(len(data), func(i, j int) { data[i], data[j] = data[j], data[i] })
		s.mu.Unlock()
	}
	return writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data":   data,
		"model":  req.Model,
		"usage":  map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

func (s *Server) chat(w http.ResponseWriter, rec *Request) int {
	var req ChatRequest
	if err := json.Unmarshal(rec.Body, &req); err != nil {
		return writeError(w, http.StatusBadRequest, "We could not parse the JSON body of your request: "+err.Error(), "invalid_request_error", "")
	}
	s.mu.Lock()
	rec.Chat = &req
	s.mu.Unlock()
	if st, ok := s.checkModel(w, req.Model); !ok {
		return st
	}
	if len(req.Messages) == 0 {
		return writeError(w, http.StatusBadRequest, "'messages' must contain at least one message", "invalid_request_error", "")
	}
	if rf := req.ResponseFormat; rf != nil && rf.Type != "text" && rf.Type != "json_object" && (rf.Type != "json_schema" || !s.opts.StructuredOutputs) {
		return writeError(w, http.StatusBadRequest, fmt.Sprintf("'response_format.type' %q is not supported", rf.Type), "invalid_request_error", "")
	}

	s.mu.Lock()
	var reply string
	ok := false
	if len(s.replies) > 0 {
		reply, s.replies, ok = s.replies[0], s.replies[1:], true
	}
	s.chatN++
	n := s.chatN
	s.mu.Unlock()
	if !ok && s.opts.Chat != nil {
		reply, ok = s.opts.Chat(req), true
	}
	if !ok {
		return writeError(w, http.StatusBadRequest, "openaitest: no chat reply is scripted (use QueueChat or Options.Chat)", "invalid_request_error", "")
	}
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(words(m.Content))
	}
	completion := len(words(reply))
	usage := map[string]int{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
	if req.Stream {
		return writeStream(w, fmt.Sprintf("chatcmpl-%d", n), req, reply, usage)
	}
	return writeJSON(w, http.StatusOK, map[string]any{
		"id":      fmt.Sprintf("chatcmpl-%d", n),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   req.Model,
		"choices": []map[string]any{{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": reply},
			"finish_reason": "stop",
		}},
		"usage": usage,
	})
}

func (s *Server) transcribe(w http.ResponseWriter, rec *Request) int {
	hr, err := http.NewRequest(http.MethodPost, "/", bytes.NewReader(rec.Body))
	if err != nil {
		return writeError(w, http.StatusBadRequest, err.Error(), "invalid_request_error", "")
	}
	hr.Header.Set("Content-Type", rec.Header.Get("Content-Type"))
	if err := hr.ParseMultipartForm(32 << 20); err != nil {
		return writeError(w, http.StatusBadRequest, "the body is not multipart/form-data: "+err.Error(), "invalid_request_error", "")
	}
	req := TranscriptionRequest{Model: hr.FormValue("model"), ResponseFormat: hr.FormValue("response_format"), Language: hr.FormValue("language")}
	if f, h, err := hr.FormFile("file"); err == nil {
		req.FileName = h.Filename
		req.File, _ = io.ReadAll(f)
		f.Close()
	}
	s.mu.Lock()
	rec.Transcription = &req
	s.mu.Unlock()
	if st, ok := s.checkModel(w, req.Model); !ok {
		return st
	}
	if len(req.File) == 0 {
		return writeError(w, http.StatusBadRequest, "'file' is required", "invalid_request_error", "")
	}
	if f := req.ResponseFormat; f != "" && f != "json" && f != "verbose_json" {
		return writeError(w, http.StatusBadRequest, fmt.Sprintf("'response_format' %q is not supported", f), "invalid_request_error", "")
	}
	if s.opts.Transcribe == nil {
		return writeError(w, http.StatusBadRequest, "openaitest: no transcription is scripted (use Options.Transcribe)", "invalid_request_error", "")
	}
	t := s.opts.Transcribe(req)
	out := map[string]any{"text": t.Text}
	if req.ResponseFormat == "verbose_json" {
		segs := t.Segments
		if segs == nil {
			segs = []TranscriptionSegment{}
		}
		out["task"], out["segments"] = "transcribe", segs
	}
	return writeJSON(w, http.StatusOK, out)
}

// writeStream answers a streaming chat request as OpenAI does: a chunk
// with the role, one chunk per word of reply (its trailing space kept),
// one with the finish reason, with include_usage one with the usage, then
// "data: [DONE]"; each event is flushed as it is written.
func writeStream(w http.ResponseWriter, id string, req ChatRequest, reply string, usage map[string]int) int {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	created := time.Now().Unix()
	chunk := func(choices []map[string]any, extra map[string]any) {
		v := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model, "choices": choices}
		for k, x := range extra {
			v[k] = x
		}
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		http.NewResponseController(w).Flush()
	}
	choice := func(delta map[string]any, finish any) []map[string]any {
		return []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}}
	}
	chunk(choice(map[string]any{"role": "assistant", "content": ""}, nil), nil)
	for _, piece := range strings.SplitAfter(reply, " ") {
		if piece != "" {
			chunk(choice(map[string]any{"content": piece}, nil), nil)
		}
	}
	chunk(choice(map[string]any{}, "stop"), nil)
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		chunk([]map[string]any{}, map[string]any{"usage": usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	http.NewResponseController(w).Flush()
	return http.StatusOK
}

// writeError answers in OpenAI's error shape and returns the status.
func writeError(w http.ResponseWriter, status int, msg, typ, code string) int {
	var c any
	if code != "" {
		c = code
	}
	return writeJSON(w, status, map[string]any{
		"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c},
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
	return status
}

// Vector returns the unit vector of length dim the server answers for text:
// a sum of pseudo-random Gaussian directions, one per lower-cased word, plus
// a smaller one for the exact text so that different texts never coincide.
// The first k components for dim > k are those for k before normalising.
func Vector(text string, dim int) []float32 {
	acc := make([]float64, dim)
	for _, w := range words(text) {
		addDirection(acc, "w\x00"+w, 1)
	}
	addDirection(acc, "t\x00"+text, 0.25)
	var ss float64
	for _, x := range acc {
		ss += x * x
	}
	inv := 1 / math.Sqrt(ss)
	v := make([]float32, dim)
	for i, x := range acc {
		v[i] = float32(x * inv)
	}
	return v
}

func addDirection(acc []float64, key string, weight float64) {
	h := sha256.Sum256([]byte(key))
	r := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(h[:8]), binary.LittleEndian.Uint64(h[8:16])))
	for i := range acc {
		acc[i] += weight * r.NormFloat64()
	}
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

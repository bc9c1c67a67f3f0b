// Package openaitest runs a fake OpenAI-compatible server on a real loopback
// TCP port for tests: the openai client's own, the HTTP server's and the
// evaluations'. It serves POST /v1/embeddings and POST /v1/chat/completions
// in OpenAI's wire format, injects faults (error statuses with Retry-After,
// dropped connections, latency), can require an API key, and records every
// request it receives.
//
// Embeddings are deterministic: Vector(text, dim) is what the server returns
// for text, so tests can compute expected vectors. Texts that share words
// point in similar directions, which makes nearest-neighbour search over
// fake vectors behave plausibly. Chat replies are scripted with QueueChat or
// Options.Chat, and come as one JSON answer or, for "stream": true, as
// server-sent events with one chunk per word.
//
//	srv := openaitest.NewServer(t, openaitest.Options{Dim: 64})
//	emb, _ := openai.NewEmbedder(openai.Config{BaseURL: srv.URL(), Model: "m"})
//	srv.FailNext(2, openaitest.Fault{Status: 429, RetryAfter: "0"})
package openaitest

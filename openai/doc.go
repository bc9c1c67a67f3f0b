// Package openai is a small client for OpenAI-compatible HTTP APIs, written
// on net/http without an SDK. It offers an Embedder (POST /embeddings) that
// implements engram.Embedder and a Chat client (POST /chat/completions) for
// memory formation and for answering and judging in evaluations.
//
// The same code talks to OpenAI, Ollama, vLLM and LM Studio, which all serve
// these two endpoints under a /v1 prefix. Config.BaseURL may name the server
// root ("http://host:11434") or the API prefix ("http://host:11434/v1"); a
// URL with no path gets "/v1" appended, any other path is used as given, so
// gateways with their own prefix work too.
//
// Requests are retried on 429, on 5xx (except 501) and on transport errors
// and timeouts, with exponential backoff and jitter, honouring Retry-After.
// Errors are *engram.Error values: EUNAVAILABLE when the server cannot be
// reached or retries are exhausted, EINVALID for a rejected request,
// EUNAUTHORIZED for a rejected key, with a sentence that includes the HTTP
// status and the server's own message. Cancelling the context stops a call
// at once and returns an error for which errors.Is(err, ctx.Err()) holds.
//
// Package openaitest provides a fake server for tests.
package openai

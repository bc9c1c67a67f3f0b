// Package http serves engram's REST API over an engram.Service and provides
// a Client that implements engram.Service against such a server, so the CLI
// and Go programs use one interface whether the engine is in-process or
// remote.
//
// Every error response has the body {"error":{"code":"...","message":"..."}},
// whose code is one of the engram error codes; ErrorStatus is the only place
// that maps codes to HTTP statuses. The server parses and checks the shape
// of requests (JSON syntax, unknown fields and query parameters, sizes,
// times, ids); the rules of the domain are left to the service so that they
// live in one place.
//
// POST /v1/embeddings serves the server's embedder in the shape of OpenAI's
// embeddings API, so that other tools on the machine can share engram's
// model through any OpenAI client; it answers 503 when no embedder is
// configured.
//
// The API is described by the OpenAPI document served at
// GET /v1/openapi.json.
package http

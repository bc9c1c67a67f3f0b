// Package chatproxy gives any OpenAI client memory: it serves POST
// /v1/chat/completions (OpenAI's wire format, streaming and not) in front
// of an OpenAI-compatible upstream LLM. For each request it finds the user
// (the X-Engram-User header, else the request's "user" field, else the user
// the API key is bound to), searches that user's memories with the last
// user message, puts the assembled context (within a token budget) into
// the system message between <engram-memories> tags, forwards the request
// otherwise unchanged, relays the reply unchanged in shape, and stores the
// turn (the last user message and the assistant's reply) as episodes,
// formed as the engine is configured. A request whose user message is
// followed by tool results stores only the reply: the message was stored
// with the request that asked it.
//
// A reply is delivered only once its turn is stored: a non-streaming reply
// is written after the store succeeds, and a stream's closing "data:
// [DONE]" is held back until then (a failed store ends the stream with an
// error event instead). An upstream that fails stores nothing: its status
// and error body reach the client in OpenAI's error shape, and the client's
// retry sends the same message again.
//
// The Handler is meant to be mounted on the engram HTTP server
// (http.Mount), which authenticates the key and bounds the body first.
package chatproxy

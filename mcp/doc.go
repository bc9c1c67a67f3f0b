// Package mcp serves engram to agents over the Model Context Protocol: the
// tools remember, recall, get, list, update, forget and history, and the
// resources of a user's profile and of a memory by id, over one
// engram.Service. NewServer makes a server for a process that talks to one
// MCP host (engram mcp, over stdio), Handler one for streamable HTTP behind
// the API's checks (engram serve, at /mcp), where every call stays inside
// the binding of the request's API key and a key needs the role write for
// the tools that change memories. A tool's scope is what its arguments
// name, each field not named taken from the server's default scope (the
// key's binding over HTTP). Bad arguments are tool errors (IsError) whose
// text names the field, and nothing is stored.
package mcp

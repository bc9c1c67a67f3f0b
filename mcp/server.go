package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/internal/jsonbody"
)

// Options configure a server.
type Options struct {
	// Scope is the default scope of every call: a tool argument that names
	// no org, project, user, agent or session takes it from here. Over HTTP
	// a request with an API key takes the key's binding instead.
	Scope engram.Namespace
	// Actor is recorded as the author of writes made through NewServer's
	// server (default "mcp"); over HTTP the request's actor is.
	Actor string
	// Version is the server version announced to clients.
	Version string
	// Logger receives internal errors, which clients see only as a
	// generic sentence; nil discards them.
	Logger *slog.Logger
}

// Service is what the MCP tools and resources call of engram: search,
// memories (add, read, change, delete, history), adding episodes and the
// profile (see engram.Service for how each fails). *engine.Engine and
// *http.Client implement it.
type Service interface {
	engram.SearchService
	engram.MemoryService
	engram.ProfileReader
	// AddEpisodes is engram.EpisodeService's.
	AddEpisodes(ctx context.Context, req engram.AddEpisodesRequest) (*engram.AddEpisodesResult, error)
}

// caller is who a server answers: the service, the default scope, the API
// key of the request (nil without authentication) and the actor of writes.
type caller struct {
	svc    Service
	def    engram.Namespace
	key    *engram.APIKey
	actor  string
	logger *slog.Logger
}

// NewServer returns an MCP server over svc for one host talking to it
// directly (no API key): every call is made as opts.Actor, in opts.Scope
// unless its arguments name another scope.
func NewServer(svc Service, opts Options) *sdk.Server {
	actor := opts.Actor
	if actor == "" {
		actor = "mcp"
	}
	return newServer(&caller{svc: svc, def: opts.Scope, actor: actor, logger: logger(opts)}, opts.Version, nil)
}

// Handler returns the streamable HTTP endpoint of an MCP server over svc,
// to be served as an engramhttp.Mount with the role read. It is stateless:
// each request gets a server for its own API key (engramhttp.KeyFrom) and
// actor, its default scope the key's binding (opts.Scope without a key),
// so no request acts with another's key. Write tools refuse a key without
// the role write; every scope a call names must lie in the key's binding.
func Handler(svc Service, opts Options) http.Handler {
	cache := sdk.NewSchemaCache()
	lg := logger(opts)
	return refuseInvalidUTF8(sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		c := &caller{svc: svc, def: opts.Scope, actor: engram.ActorFrom(r.Context()), logger: lg}
		if k := engramhttp.KeyFrom(r.Context()); k != nil {
			c.key = k
			c.def = engram.Namespace{Org: k.Org, Project: k.Project, User: k.User}
		}
		return newServer(c, opts.Version, cache)
	}, &sdk.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		// The engram server in front checks Host and Origin against its
		// own allowed lists, which name more than localhost.
		DisableLocalhostProtection: true,
	}))
}

// refuseInvalidUTF8 answers a JSON-RPC parse error (HTTP 400) to a request
// whose body is not valid UTF-8, which the SDK's decoder would otherwise
// turn into U+FFFD, so that two different byte strings never reach the
// service as one name or one text. A body it cannot read is left to h.
func refuseInvalidUTF8(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		b, err := io.ReadAll(r.Body)
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), errReader{err}))
		if err == nil {
			if uerr := jsonbody.CheckUTF8(b); uerr != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				msg, _ := json.Marshal("the request body: " + uerr.Error())
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":%s}}`, msg)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// errReader returns err (io.EOF when nil) from every Read, so a body that
// failed part-way still fails for the handler that reads it after us.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err == nil {
		return 0, io.EOF
	}
	return 0, e.err
}

func logger(opts Options) *slog.Logger {
	if opts.Logger != nil {
		return opts.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// instructions tell a host's model what the server is for.
const instructions = `engram is a long-term memory. Call recall with a question before answering ` +
	`anything that may depend on what the user said before; call remember with the turns of the ` +
	`conversation (or a single fact) worth keeping. Memories have ids: get, update, forget and ` +
	`history act on one. Scope arguments (org, project, user, agent, session) are optional and ` +
	`default to the server's scope.`

// newServer builds the server for one caller, with its tools and resources.
func newServer(c *caller, version string, cache *sdk.SchemaCache) *sdk.Server {
	if version == "" {
		version = "dev"
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "engram", Version: version}, &sdk.ServerOptions{
		Instructions: instructions,
		SchemaCache:  cache,
	})
	c.addTools(s)
	c.addResources(s)
	return s
}

// ScopeArgs are the scope fields every tool takes. Each one left empty is
// the server's default.
type ScopeArgs struct {
	Org     string `json:"org,omitempty" jsonschema:"organisation; default the server's"`
	Project string `json:"project,omitempty" jsonschema:"project; default the server's"`
	User    string `json:"user,omitempty" jsonschema:"user the memories belong to; default the server's"`
	Agent   string `json:"agent,omitempty" jsonschema:"agent; default the server's"`
	Session string `json:"session,omitempty" jsonschema:"session (one conversation); default the server's"`
	// IncludeShared also reads memories stored at project level.
	IncludeShared bool `json:"include_shared,omitempty" jsonschema:"reads also see memories shared at project level (no user, agent or session)"`
}

// scope resolves a's scope against the caller's defaults and checks it:
// EINVALID for a bad name, EFORBIDDEN outside the key's binding.
func (c *caller) scope(a ScopeArgs) (engram.Scope, error) {
	or := func(v, def string) string {
		if v != "" {
			return v
		}
		return def
	}
	s := engram.Scope{
		Org: or(a.Org, c.def.Org), Project: or(a.Project, c.def.Project), User: or(a.User, c.def.User),
		Agent: or(a.Agent, c.def.Agent), Session: or(a.Session, c.def.Session),
		IncludeShared: a.IncludeShared,
	}.Normalize()
	if err := s.Validate(); err != nil {
		return s, err
	}
	if err := engramhttp.CheckBinding(c.key, s.Namespace()); err != nil {
		return s, err
	}
	return s, nil
}

// writable refuses a write tool to a key whose role does not allow writes.
func (c *caller) writable(tool string) error {
	if c.key == nil || c.key.Allows(engram.RoleWrite) {
		return nil
	}
	return engram.Errorf(engram.EFORBIDDEN, "this API key has the role %s; the tool %s needs a key with the role write", c.key.Role, tool)
}

// context attributes the call's writes to the caller's actor.
func (c *caller) context(ctx context.Context) context.Context {
	return engram.WithActor(ctx, c.actor)
}

// toolError turns err into the error text of a failed tool call: the
// message of an engram error, or a generic sentence for an internal one,
// whose detail goes to the log.
func (c *caller) toolError(ctx context.Context, tool string, err error) error {
	if engram.ErrorCode(err) == engram.EINTERNAL {
		c.logger.ErrorContext(ctx, "mcp tool failed", "tool", tool, "err", err)
		return fmt.Errorf("%s failed: internal error (the server's log has the detail)", tool)
	}
	return errors.New(engram.ErrorMessage(err))
}

// invalid is an EINVALID error for a bad argument.
func invalid(format string, args ...any) error {
	return engram.Errorf(engram.EINVALID, format, args...)
}

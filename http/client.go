package http

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/engramhq/engram"
)

// DefaultClientTimeout bounds each call of a Client except Export and
// Import, which can run long and are bounded by their context only.
const DefaultClientTimeout = 30 * time.Second

// ClientOptions configure a Client. The zero value is usable.
type ClientOptions struct {
	// Timeout bounds each call except Export and Import;
	// DefaultClientTimeout when 0, no bound when negative.
	Timeout time.Duration
	// Actor is sent as the X-Engram-Actor header so that writes are
	// attributed to it, unless the call's context carries an actor
	// (engram.WithActor), which wins. Empty leaves the server's default.
	Actor string
	// Key is the API key sent as "Authorization: Bearer KEY" with every
	// call; empty sends none, which only a server run with --no-auth
	// accepts.
	Key string
	// HTTPClient sends the requests; a new client with no overall timeout
	// when nil.
	HTTPClient *http.Client
}

// Client is an engram.Service that calls an engram server. Its methods
// fail with the *engram.Error the server answered, with the same code and
// message as the service behind it; with EUNAVAILABLE when the server
// cannot be reached or does not answer in time; and with the context's
// error when the caller's context ends.
type Client struct {
	*conn
	graphClient // entities, relations, their edits, communities
	mediaClient // identities and resources
}

// conn is the connection every part of a Client calls through: the
// server's address, the HTTP client, the timeout of a call, the actor and
// the API key.
type conn struct {
	base    string
	baseErr error
	hc      *http.Client
	timeout time.Duration
	actor   string
	key     string
}

// graphClient is the part of a Client that implements
// engram.GraphService, engram.GraphEditor and engram.CommunityService.
type graphClient struct{ *conn }

// mediaClient is the part of a Client that implements
// engram.IdentityService and engram.ResourceService.
type mediaClient struct{ *conn }

var _ engram.Service = (*Client)(nil)

// NewClient returns a client of the server at baseURL, e.g.
// "http://localhost:7070". A malformed baseURL makes every call fail with
// EINVALID.
func NewClient(baseURL string, opts ClientOptions) *Client {
	cn := &conn{
		base:    strings.TrimRight(baseURL, "/"),
		hc:      opts.HTTPClient,
		timeout: opts.Timeout,
		actor:   opts.Actor,
		key:     opts.Key,
	}
	c := &Client{conn: cn, graphClient: graphClient{cn}, mediaClient: mediaClient{cn}}
	if u, err := url.Parse(c.base); err != nil {
		c.baseErr = engram.Errorf(engram.EINVALID, "server URL %q is malformed: %v", baseURL, err)
	} else if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.baseErr = engram.Errorf(engram.EINVALID, "server URL %q must be http:// or https:// and name a host", baseURL)
	}
	if c.hc == nil {
		c.hc = &http.Client{}
	}
	if c.timeout == 0 {
		c.timeout = DefaultClientTimeout
	}
	return c
}

// Health returns nil when the server answers GET /healthz with 200.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, "GET", "/healthz", nil, nil, nil)
}

// Ready returns nil when the server reports itself ready (GET /readyz),
// else an EUNAVAILABLE error with the server's reason.
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, "GET", "/readyz", nil, nil, nil)
}

// AddEpisodes implements engram.Service.
func (c *Client) AddEpisodes(ctx context.Context, req engram.AddEpisodesRequest) (*engram.AddEpisodesResult, error) {
	return doNew[engram.AddEpisodesResult](ctx, c.conn, "POST", "/v1/episodes", nil, req)
}

// AddMemories implements engram.Service.
func (c *Client) AddMemories(ctx context.Context, req engram.AddMemoriesRequest) ([]engram.Memory, error) {
	var res memoriesResponse
	if err := c.do(ctx, "POST", "/v1/memories", nil, req, &res); err != nil {
		return nil, err
	}
	return res.Memories, nil
}

// GetEpisode implements engram.Service.
func (c *Client) GetEpisode(ctx context.Context, s engram.Scope, id string) (*engram.Episode, error) {
	p, err := idPath("/v1/episodes/", id, "")
	if err != nil {
		return nil, err
	}
	return doNew[engram.Episode](ctx, c.conn, "GET", p, scopeValues(s), nil)
}

// GetMemory implements engram.Service.
func (c *Client) GetMemory(ctx context.Context, s engram.Scope, id string) (*engram.Memory, error) {
	p, err := idPath("/v1/memories/", id, "")
	if err != nil {
		return nil, err
	}
	return doNew[engram.Memory](ctx, c.conn, "GET", p, vaultScope(ctx, s), nil)
}

// ListEpisodes implements engram.Service.
func (c *Client) ListEpisodes(ctx context.Context, s engram.Scope, f engram.EpisodeFilter) (*engram.EpisodePage, error) {
	q := scopeValues(s)
	for _, r := range f.Roles {
		q.Add("role", r)
	}
	setString(q, "speaker", f.Speaker)
	setString(q, "contains", f.Contains)
	setString(q, "cursor", f.Cursor)
	setTime(q, "occurred_after", f.OccurredAfter)
	setTime(q, "occurred_before", f.OccurredBefore)
	setInt(q, "limit", f.Limit)
	if err := setMeta(q, "meta.", f.Metadata); err != nil {
		return nil, err
	}
	return doNew[engram.EpisodePage](ctx, c.conn, "GET", "/v1/episodes", q, nil)
}

// ListMemories implements engram.Service.
func (c *Client) ListMemories(ctx context.Context, s engram.Scope, f engram.MemoryFilter) (*engram.MemoryPage, error) {
	q := vaultScope(ctx, s)
	for _, k := range f.Kinds {
		q.Add("kind", string(k))
	}
	for _, st := range f.Statuses {
		q.Add("status", string(st))
	}
	setString(q, "contains", f.Contains)
	setString(q, "cursor", f.Cursor)
	if len(f.IDs)+len(f.Sources) > maxQueryIDs || slices.Contains(f.IDs, "") || slices.Contains(f.Sources, "") {
		// Long id lists make URLs that proxies refuse, and an empty id
		// would be dropped from a query string rather than judged by the
		// service; the body form carries both.
		return c.listMemoriesPost(ctx, s, f)
	}
	for _, id := range f.IDs {
		q.Add("id", id)
	}
	for _, id := range f.Sources {
		q.Add("source", id)
	}
	setTime(q, "created_after", f.CreatedAfter)
	setTime(q, "created_before", f.CreatedBefore)
	setTime(q, "valid_at", f.ValidAt)
	setTime(q, "valid_after", f.ValidAfter)
	setTime(q, "valid_before", f.ValidBefore)
	setInt(q, "limit", f.Limit)
	if err := setMeta(q, "meta.", f.Metadata); err != nil {
		return nil, err
	}
	for k, vs := range f.MetadataIn {
		if len(vs) == 0 {
			// An empty list cannot be written as parameters; the body
			// form carries it so that the service can judge it.
			return c.listMemoriesPost(ctx, s, f)
		}
		for _, v := range vs {
			sv, err := encodeMetaValue(v)
			if err != nil {
				return nil, engram.Errorf(engram.EINVALID, "filter: metadata_in %q: value is not representable as JSON: %v", k, err)
			}
			q.Add("meta_in."+k, sv)
		}
	}
	return doNew[engram.MemoryPage](ctx, c.conn, "GET", "/v1/memories", q, nil)
}

// maxQueryIDs is the most ids ListMemories sends in a query string, about
// 3 KB of URL; more go in the body of POST /v1/memories/list.
const maxQueryIDs = 100

func (c *Client) listMemoriesPost(ctx context.Context, s engram.Scope, f engram.MemoryFilter) (*engram.MemoryPage, error) {
	return doNew[engram.MemoryPage](ctx, c.conn, "POST", "/v1/memories/list", nil, listMemoriesRequest{Scope: s, Filter: f, Vault: engram.VaultFrom(ctx)})
}

// Search implements engram.Service.
func (c *Client) Search(ctx context.Context, req engram.SearchRequest) (*engram.SearchResult, error) {
	return doNew[engram.SearchResult](ctx, c.conn, "POST", "/v1/search", nil, req)
}

// UpdateMemory implements engram.Service.
func (c *Client) UpdateMemory(ctx context.Context, s engram.Scope, id string, p engram.MemoryPatch) (*engram.Memory, error) {
	path, err := idPath("/v1/memories/", id, "")
	if err != nil {
		return nil, err
	}
	return doNew[engram.Memory](ctx, c.conn, "PATCH", path, scopeValues(s), p)
}

// SupersedeMemory implements engram.Service.
func (c *Client) SupersedeMemory(ctx context.Context, s engram.Scope, id string, req engram.SupersedeRequest) (*engram.SupersedeResult, error) {
	path, err := idPath("/v1/memories/", id, "/supersede")
	if err != nil {
		return nil, err
	}
	return doNew[engram.SupersedeResult](ctx, c.conn, "POST", path, scopeValues(s), req)
}

// DeleteMemory implements engram.Service.
func (c *Client) DeleteMemory(ctx context.Context, s engram.Scope, id string, o engram.DeleteOptions) error {
	path, err := idPath("/v1/memories/", id, "")
	if err != nil {
		return err
	}
	q := vaultScope(ctx, s)
	if o.Hard {
		q.Set("hard", "true")
	}
	setString(q, "reason", o.Reason)
	return c.do(ctx, "DELETE", path, q, nil, nil)
}

// RestoreMemory implements engram.Service.
func (c *Client) RestoreMemory(ctx context.Context, s engram.Scope, id string, reason string) (*engram.Memory, error) {
	path, err := idPath("/v1/memories/", id, "/restore")
	if err != nil {
		return nil, err
	}
	return doNew[engram.Memory](ctx, c.conn, "POST", path, vaultScope(ctx, s), reasonRequest{Reason: reason})
}

// History implements engram.Service.
func (c *Client) History(ctx context.Context, s engram.Scope, id string) ([]engram.Version, error) {
	path, err := idPath("/v1/memories/", id, "/history")
	if err != nil {
		return nil, err
	}
	var res historyResponse
	if err := c.do(ctx, "GET", path, vaultScope(ctx, s), nil, &res); err != nil {
		return nil, err
	}
	return res.Versions, nil
}

// Rollback implements engram.Service.
func (c *Client) Rollback(ctx context.Context, s engram.Scope, id string, v int, reason string) (*engram.Memory, error) {
	path, err := idPath("/v1/memories/", id, "/rollback")
	if err != nil {
		return nil, err
	}
	return doNew[engram.Memory](ctx, c.conn, "POST", path, scopeValues(s), rollbackRequest{Version: &v, Reason: reason})
}

// DeleteEpisode implements engram.Service.
func (c *Client) DeleteEpisode(ctx context.Context, s engram.Scope, id string) (*engram.EpisodeDeleteResult, error) {
	path, err := idPath("/v1/episodes/", id, "")
	if err != nil {
		return nil, err
	}
	return doNew[engram.EpisodeDeleteResult](ctx, c.conn, "DELETE", path, scopeValues(s), nil)
}

// DeleteScope implements engram.Service.
func (c *Client) DeleteScope(ctx context.Context, s engram.Scope) (*engram.PurgeCounts, error) {
	return doNew[engram.PurgeCounts](ctx, c.conn, "DELETE", "/v1/scope", scopeValues(s), nil)
}

// Audit implements engram.Service.
func (c *Client) Audit(ctx context.Context, s engram.Scope, f engram.AuditFilter) (*engram.AuditPage, error) {
	q := scopeValues(s)
	for _, op := range f.Ops {
		q.Add("op", op)
	}
	setTime(q, "after", f.After)
	setTime(q, "before", f.Before)
	setInt(q, "limit", f.Limit)
	setString(q, "cursor", f.Cursor)
	return doNew[engram.AuditPage](ctx, c.conn, "GET", "/v1/audit", q, nil)
}

// GetJob implements engram.Service by GET /v1/jobs/{id}.
func (c *Client) GetJob(ctx context.Context, s engram.Scope, id string) (*engram.Job, error) {
	p, err := idPath("/v1/jobs/", id, "")
	if err != nil {
		return nil, err
	}
	return doNew[engram.Job](ctx, c.conn, "GET", p, scopeValues(s), nil)
}

// ListJobs implements engram.Service by GET /v1/jobs.
func (c *Client) ListJobs(ctx context.Context, s engram.Scope, f engram.JobFilter) (*engram.JobPage, error) {
	q := scopeValues(s)
	for _, st := range f.States {
		q.Add("state", string(st))
	}
	setInt(q, "limit", f.Limit)
	setString(q, "cursor", f.Cursor)
	return doNew[engram.JobPage](ctx, c.conn, "GET", "/v1/jobs", q, nil)
}

// exportLine is one line of an export stream: a record, or the error that
// ended the stream after it had started.
type exportLine struct {
	engram.Record
	Error *errorDetail `json:"error,omitempty"`
}

// Export implements engram.Service by streaming GET /v1/export: fn sees
// each record as it arrives. An error from fn stops the export and is
// returned as is. Export is bounded by ctx only, not by the Timeout.
func (c *Client) Export(ctx context.Context, s engram.Scope, fn func(engram.Record) error) error {
	resp, err := c.send(ctx, ctx, "GET", "/v1/export", vaultScope(ctx, s), nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return responseError(resp)
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	for n := 1; ; n++ {
		b, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			if cerr := ctx.Err(); cerr != nil {
				return fmt.Errorf("engram client: export: %w", cerr)
			}
			return engram.Errorf(engram.EUNAVAILABLE, "the export stream from %s broke off after %d lines: %v", c.base, n-1, rerr)
		}
		if len(bytes.TrimSpace(b)) > 0 {
			var line exportLine
			if err := decodeResponse(bytes.NewReader(b), &line); err != nil {
				return engram.Errorf(engram.EINTERNAL, "export line %d from %s is not a record: %v", n, c.base, err)
			}
			if line.Error != nil {
				return &engram.Error{Code: line.Error.Code, Message: line.Error.Message}
			}
			if err := fn(line.Record); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
	}
}

// Import implements engram.Service by streaming the records as NDJSON to
// POST /v1/import. It is bounded by ctx only, not by the Timeout.
func (c *Client) Import(ctx context.Context, s engram.Scope, recs []engram.Record) (*engram.ImportResult, error) {
	pr, pw := io.Pipe()
	var (
		wg     sync.WaitGroup
		encErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		bw := bufio.NewWriterSize(pw, 64<<10)
		for i := range recs {
			b, err := json.Marshal(&recs[i])
			if err != nil {
				encErr = engram.Errorf(engram.EINVALID, "import: record %d is not representable as JSON: %v", i+1, err)
				pw.CloseWithError(encErr)
				return
			}
			if _, err := bw.Write(append(b, '\n')); err != nil {
				pw.CloseWithError(err) // the server stopped reading; its answer says why
				return
			}
		}
		pw.CloseWithError(bw.Flush())
	}()

	var res engram.ImportResult
	resp, err := c.send(ctx, ctx, "POST", "/v1/import", scopeValues(s), pr, NDJSONType)
	if err == nil {
		err = readResponse(resp, &res)
	}
	pr.Close() // stops the writer if the server answered before reading it all
	wg.Wait()
	if encErr != nil {
		return nil, encErr
	}
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// doNew is c.do into a new T, which it returns; it fails as do does.
func doNew[T any](ctx context.Context, c *conn, method, path string, q url.Values, in any) (*T, error) {
	var out T
	if err := c.do(ctx, method, path, q, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// do sends a JSON request (in, unless nil) and decodes a JSON answer into
// out (unless nil), bounded by the client's Timeout.
func (c *conn) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return engram.Errorf(engram.EINVALID, "request is not representable as JSON: %v", err)
		}
		body = bytes.NewReader(b)
	}
	callCtx := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	resp, err := c.send(ctx, callCtx, method, path, q, body, "application/json")
	if err != nil {
		return err
	}
	return readResponse(resp, out)
}

// send sends a request under callCtx; ctx is the caller's context, told
// apart from callCtx so that the client's own timeout becomes EUNAVAILABLE
// while the caller's cancellation stays the context's error.
func (c *conn) send(ctx, callCtx context.Context, method, path string, q url.Values, body io.Reader, contentType string) (*http.Response, error) {
	if c.baseErr != nil {
		return nil, c.baseErr
	}
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(callCtx, method, u, body)
	if err != nil {
		return nil, engram.Errorf(engram.EINVALID, "cannot build request %s %s: %v", method, u, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil && contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if actor := engram.ActorFrom(ctx); actor != "" {
		req.Header.Set(ActorHeader, actor)
	} else if c.actor != "" {
		req.Header.Set(ActorHeader, c.actor)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("engram client: %s %s: %w", method, path, cerr)
		}
		if callCtx.Err() != nil {
			return nil, engram.Errorf(engram.EUNAVAILABLE, "the engram server at %s did not answer %s %s within %s", c.base, method, path, c.timeout)
		}
		return nil, engram.Errorf(engram.EUNAVAILABLE, "cannot reach the engram server at %s: %v", c.base, errors.Unwrap(err))
	}
	return resp, nil
}

// readResponse closes resp after decoding a success into out or turning a
// failure into an error.
func readResponse(resp *http.Response, out any) error {
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return responseError(resp)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil
	}
	if err := decodeResponse(resp.Body, out); err != nil {
		return engram.Errorf(engram.EINTERNAL, "cannot decode the answer to %s %s: %v", resp.Request.Method, resp.Request.URL.Path, err)
	}
	return nil
}

// decodeResponse decodes leniently (a newer server may add fields) but
// keeps metadata numbers exact.
func decodeResponse(r io.Reader, out any) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	return dec.Decode(out)
}

// responseError turns an error response into the *engram.Error the server
// sent, or, when the body is not ours (a proxy's page), an error with the
// code ErrorStatus maps to that status.
func responseError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var er errorResponse
	if err := json.Unmarshal(b, &er); err == nil && er.Error.Code != "" {
		return &engram.Error{Code: er.Error.Code, Message: er.Error.Message}
	}
	snippet := strings.TrimSpace(string(b))
	if len(snippet) > 200 {
		snippet = snippet[:200] + "..."
	}
	if snippet == "" {
		return engram.Errorf(codeOfStatus(resp.StatusCode), "the server answered %s", resp.Status)
	}
	return engram.Errorf(codeOfStatus(resp.StatusCode), "the server answered %s: %s", resp.Status, snippet)
}

// idPath builds prefix+id+suffix. Ids are checked here as the server would
// check them, because an empty or dot id would change which route the path
// reaches.
func idPath(prefix, id, suffix string) (string, error) {
	what := "memory"
	if strings.HasPrefix(prefix, "/v1/episodes/") {
		what = "episode"
	} else if strings.HasPrefix(prefix, "/v1/jobs/") {
		what = "job"
	} else if strings.HasPrefix(prefix, "/v1/resources/") {
		what = "resource"
	}
	if err := engram.CheckID(what, id); err != nil {
		return "", err
	}
	return prefix + id + suffix, nil
}

func scopeValues(s engram.Scope) url.Values {
	q := url.Values{}
	setString(q, "org", s.Org)
	setString(q, "project", s.Project)
	setString(q, "user", s.User)
	setString(q, "agent", s.Agent)
	setString(q, "session", s.Session)
	if s.IncludeShared {
		q.Set("include_shared", "true")
	}
	return q
}

func setString(q url.Values, name, v string) {
	if v != "" {
		q.Set(name, v)
	}
}

func setInt(q url.Values, name string, v int) {
	if v != 0 {
		q.Set(name, strconv.Itoa(v))
	}
}

func setTime(q url.Values, name string, t *time.Time) {
	if t != nil {
		q.Set(name, t.Format(time.RFC3339Nano))
	}
}

func setMeta(q url.Values, prefix string, m map[string]any) error {
	for k, v := range m {
		s, err := encodeMetaValue(v)
		if err != nil {
			return engram.Errorf(engram.EINVALID, "filter: metadata %q: value is not representable as JSON: %v", k, err)
		}
		q.Set(prefix+k, s)
	}
	return nil
}

// vaultScope is scopeValues with vault=true when ctx carries
// engram.WithVault, so that a caller of the Client asks for the vault the
// way an in-process caller of the engine does.
func vaultScope(ctx context.Context, s engram.Scope) url.Values {
	q := scopeValues(s)
	if engram.VaultFrom(ctx) {
		q.Set("vault", "true")
	}
	return q
}

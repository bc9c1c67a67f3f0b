package http

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path"
	"strconv"

	"github.com/engramhq/engram"
)

// Resources over HTTP. An upload is POST /v1/resources with a
// multipart/form-data body whose part named "file" carries the content,
// its file name and its Content-Type (what `curl -F file=@report.pdf`
// sends); the query names the scope, and optionally name and source. The
// part is streamed into the store one chunk at a time, so the body limit
// of this route is ServerOptions.MaxResourceBytes, not MaxBodyBytes. The
// content comes back from GET /v1/resources/{id}/content with its
// Content-Type, Content-Length and an ETag that is its SHA-256.

// DefaultMaxResourceBytes is the default ServerOptions.MaxResourceBytes.
const DefaultMaxResourceBytes = 256 << 20

// resourceFilePart is the form field that carries an upload's content.
const resourceFilePart = "file"

func (s *mediaRoutes) handleAddResource(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	if r.ContentLength > s.maxResource {
		return s.resourceTooLarge()
	}
	part, err := filePart(r)
	if err != nil {
		return err
	}
	defer part.Close()
	res := engram.Resource{Namespace: sc.Namespace(), Name: q.str("name"), Source: q.str("source"), MIMEType: part.Header.Get("Content-Type")}
	if res.Name == "" {
		res.Name = path.Base(part.FileName())
	}
	if res.MIMEType == "" || res.MIMEType == "application/octet-stream" {
		if byExt := mime.TypeByExtension(path.Ext(res.Name)); byExt != "" {
			res.MIMEType = byExt
		} else if res.MIMEType == "" {
			res.MIMEType = "application/octet-stream"
		}
	}
	out, err := s.svc.AddResource(r.Context(), res, &limitErrReader{r: part, s: s})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// filePart returns the part of a multipart body named "file"; EINVALID
// when the body is not multipart or has no such part before its end.
func filePart(r *http.Request) (*multipart.Part, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, engram.Errorf(engram.EINVALID, "request body: not a multipart/form-data body with a boundary: %v", err)
	}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, engram.Errorf(engram.EINVALID, "request body: no part named %q carries the file", resourceFilePart)
		} else if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, engram.Errorf(engram.ETOOLARGE, "request body: larger than the limit of %d bytes", mbe.Limit)
			}
			return nil, engram.Errorf(engram.EINVALID, "request body: malformed multipart body: %v", err)
		}
		if p.FormName() == resourceFilePart {
			return p, nil
		}
		_ = p.Close()
	}
}

// limitErrReader turns the body limit's error into ETOOLARGE naming the
// limit and the flag that sets it.
type limitErrReader struct {
	r io.Reader
	s *mediaRoutes
}

func (l *limitErrReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return n, l.s.resourceTooLarge()
	}
	return n, err
}

func (s *mediaRoutes) resourceTooLarge() error {
	return engram.Errorf(engram.ETOOLARGE, "request body: a resource may be at most %d bytes (engram serve --max-resource-bytes)", s.maxResource)
}

func (s *mediaRoutes) handleListResources(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	f := engram.ResourceFilter{Cursor: q.str("cursor")}
	if f.Limit, err = q.int("limit"); err != nil {
		return err
	}
	page, err := s.svc.ListResources(r.Context(), sc, f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *mediaRoutes) handleGetResource(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "resource")
	if err != nil {
		return err
	}
	res, err := s.svc.GetResource(r.Context(), sc, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// handleResourceContent streams a resource's content. Once the headers
// are sent an error can only cut the body short, which the client sees
// as fewer bytes than Content-Length; it is logged.
func (s *mediaRoutes) handleResourceContent(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "resource")
	if err != nil {
		return err
	}
	res, body, err := s.svc.OpenResource(r.Context(), sc, id)
	if err != nil {
		return err
	}
	defer body.Close()
	etag := `"` + res.SHA256 + `"`
	h := w.Header()
	h.Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", res.MIMEType)
	h.Set("Content-Length", strconv.FormatInt(res.Size, 10))
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": res.Name}))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, body); err != nil {
		s.logger.WarnContext(r.Context(), "http: a resource download was cut short", "resource", id, "err", err)
	}
	return nil
}

func (s *mediaRoutes) handleDeleteResource(w http.ResponseWriter, r *http.Request, q query) error {
	sc, id, err := scopeAndID(r, q, "resource")
	if err != nil {
		return err
	}
	if err := s.svc.DeleteResource(r.Context(), sc, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

var _ engram.ResourceService = (*Client)(nil)

// AddResource implements engram.ResourceService with POST /v1/resources,
// streaming body as the file part of a multipart form (without the
// client's timeout, which would cut a large upload).
func (c *mediaClient) AddResource(ctx context.Context, r engram.Resource, body io.Reader) (*engram.Resource, error) {
	q := scopeValues(engram.ScopeOf(r.Namespace))
	setString(q, "name", r.Name)
	setString(q, "source", r.Source)
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": resourceFilePart, "filename": r.Name}))
		h.Set("Content-Type", r.MIMEType)
		part, err := mw.CreatePart(h)
		if err == nil {
			_, err = io.Copy(part, body)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	resp, err := c.send(ctx, ctx, "POST", "/v1/resources", q, pr, mw.FormDataContentType())
	if err != nil {
		pr.CloseWithError(err)
		return nil, err
	}
	var out engram.Resource
	if err := readResponse(resp, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetResource implements engram.ResourceService.
func (c *mediaClient) GetResource(ctx context.Context, s engram.Scope, id string) (*engram.Resource, error) {
	p, err := idPath("/v1/resources/", id, "")
	if err != nil {
		return nil, err
	}
	return doNew[engram.Resource](ctx, c.conn, "GET", p, scopeValues(s), nil)
}

// ListResources implements engram.ResourceService.
func (c *mediaClient) ListResources(ctx context.Context, s engram.Scope, f engram.ResourceFilter) (*engram.ResourcePage, error) {
	q := scopeValues(s)
	setString(q, "cursor", f.Cursor)
	setInt(q, "limit", f.Limit)
	return doNew[engram.ResourcePage](ctx, c.conn, "GET", "/v1/resources", q, nil)
}

// OpenResource implements engram.ResourceService with GET
// /v1/resources/{id}/content (and the metadata from GET
// /v1/resources/{id}); the reader streams the response body.
func (c *mediaClient) OpenResource(ctx context.Context, s engram.Scope, id string) (*engram.Resource, io.ReadCloser, error) {
	res, err := c.GetResource(ctx, s, id)
	if err != nil {
		return nil, nil, err
	}
	p, err := idPath("/v1/resources/", id, "/content")
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.send(ctx, ctx, "GET", p, scopeValues(s), nil, "")
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, readResponse(resp, nil)
	}
	return res, resp.Body, nil
}

// DeleteResource implements engram.ResourceService.
func (c *mediaClient) DeleteResource(ctx context.Context, s engram.Scope, id string) error {
	p, err := idPath("/v1/resources/", id, "")
	if err != nil {
		return err
	}
	return c.do(ctx, "DELETE", p, scopeValues(s), nil, nil)
}

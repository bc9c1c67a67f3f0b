package http

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/engramhq/engram"
)

// handleHealth answers liveness, and whether the server requires API keys
// (a fact of its configuration, not of any tenant), so that the dashboard
// asks for a key only when one is needed.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request, _ query) error {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "keys_required": s.keys != nil})
	return nil
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request, _ query) error {
	if s.ready != nil {
		if err := s.ready(r.Context()); err != nil {
			// Readiness is read by operators and orchestrators: give them
			// the reason even when it is not an engram error.
			msg := err.Error()
			var e *engram.Error
			if errors.As(err, &e) {
				msg = e.Message
			}
			s.logger.Warn("not ready", "err", err)
			writeJSON(w, http.StatusServiceUnavailable, errorResponse{Error: errorDetail{Code: engram.EUNAVAILABLE, Message: msg}})
			return nil
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}

//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document describing the API.
func OpenAPI() []byte { return bytes.Clone(openAPI) }

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request, _ query) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(openAPI)
	return nil
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request, _ query) error {
	var req engram.SearchRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	r, err := askVault(r, req.Vault)
	if err != nil {
		return err
	}
	res, err := s.svc.Search(r.Context(), req)
	if err != nil {
		return err
	}
	res.Hits = nonNil(res.Hits)
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) handleDeleteScope(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	counts, err := s.svc.DeleteScope(r.Context(), sc)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, counts)
	return nil
}

func (s *Server) handleAudit(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	var f engram.AuditFilter
	f.Ops = q.list("op")
	f.Cursor = q.str("cursor")
	if f.After, err = q.time("after"); err != nil {
		return err
	}
	if f.Before, err = q.time("before"); err != nil {
		return err
	}
	if f.Limit, err = q.int("limit"); err != nil {
		return err
	}
	page, err := s.svc.Audit(r.Context(), sc, f)
	if err != nil {
		return err
	}
	page.Entries = nonNil(page.Entries)
	writeJSON(w, http.StatusOK, page)
	return nil
}

// NDJSONType is the media type of export and import bodies: one JSON
// engram.Record per line.
const NDJSONType = "application/x-ndjson"

// handleExport streams the scope's records as NDJSON. The status line is
// held back until the first record so that a failure before it (a bad
// scope) is an ordinary error response; a failure after it is reported as
// a last line {"error":{...}} that clients must check for, because the 200
// is already on the wire.
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	started := false
	start := func() {
		if !started {
			started = true
			w.Header().Set("Content-Type", NDJSONType)
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusOK)
		}
	}
	bw := bufio.NewWriterSize(deadlineWriter{w: w, rc: http.NewResponseController(w), d: s.timeouts[2]}, 32<<10)
	enc := json.NewEncoder(bw)
	var writeErr error
	err = s.svc.Export(r.Context(), sc, func(rec engram.Record) error {
		start()
		if err := enc.Encode(rec); err != nil {
			writeErr = err
			return fmt.Errorf("export: write record: %w", err)
		}
		return nil
	})
	if err != nil && !started {
		return err
	}
	start()
	if writeErr != nil {
		// Most likely the client went away; there is no one to tell.
		s.logger.Info("export: stream to client ended", "path", r.URL.Path, "err", writeErr)
		return nil
	}
	if err != nil {
		code, msg := engram.ErrorCode(err), engram.ErrorMessage(err)
		if ErrorStatus(code) == http.StatusInternalServerError {
			s.logger.Error("export failed mid-stream", "path", r.URL.Path, "err", err)
			code, msg = engram.EINTERNAL, internalMessage
		}
		_ = enc.Encode(errorResponse{Error: errorDetail{Code: code, Message: msg}})
	}
	if ferr := bw.Flush(); ferr != nil {
		s.logger.Info("export: client went away", "err", ferr)
	}
	return nil
}

// deadlineWriter moves the connection's write deadline d ahead before
// every write, so that the server's write timeout bounds each piece of a
// long response rather than all of it.
type deadlineWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (dw deadlineWriter) Write(p []byte) (int, error) {
	// Not every ResponseWriter supports deadlines (a test recorder does
	// not); without one there is nothing to extend.
	_ = dw.rc.SetWriteDeadline(time.Now().Add(dw.d))
	return dw.w.Write(p)
}

// handleImport reads a body of records (NDJSON, or one JSON array), every
// record decoded as strictly as a JSON request body, within the limits on
// records and bytes, and hands them to the service in one call so that the
// import is all or nothing.
func (s *Server) handleImport(w http.ResponseWriter, r *http.Request, q query) error {
	sc, err := q.scope()
	if err != nil {
		return err
	}
	recs, err := readRecords(r.Body, keyFrom(r.Context()), importLimits{records: s.maxRecords, recordBytes: s.maxBody})
	if err != nil {
		return err
	}
	res, err := s.svc.Import(r.Context(), sc, recs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

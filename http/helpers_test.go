package http_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// apiError is the error shape every error response has.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rawResponse is a response read in full.
type rawResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends a raw request to base+path with an optional body, by default
// with Content-Type application/json when there is one. header holds name,
// value pairs; an empty value removes the header.
func do(t *testing.T, method, url, body string, header ...string) rawResponse {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Content-Type" {
			req.Header.Del(header[i])
		}
		if header[i+1] == "" {
			req.Header.Del(header[i])
			continue
		}
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawResponse{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// errorOf decodes an error body strictly: exactly the documented shape.
func errorOf(t *testing.T, r rawResponse) apiError {
	t.Helper()
	var e apiError
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("body %q is not in the error shape: %v", r.Body, err)
	}
	if e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("body %q lacks code or message", r.Body)
	}
	if got, want := r.Header.Get("Content-Type"), "application/json"; got != want {
		t.Errorf("error Content-Type = %q, want %q", got, want)
	}
	return e
}

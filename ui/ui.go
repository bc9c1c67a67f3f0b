package ui

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

//go:embed static
var static embed.FS

// Prefix is the path the dashboard is served under.
const Prefix = "/ui/"

// CSP is the Content-Security-Policy of every dashboard file: scripts,
// styles, images and API calls from the server's own origin only, no
// inline code, no framing.
const CSP = "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"

// Handler serves the dashboard's files under Prefix (a request for Prefix
// itself gets index.html); a missing file gets 404. Only GET and HEAD are
// answered (405 method_not_allowed otherwise, in the API's error shape).
func Handler() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree always has static/
	}
	files := http.StripPrefix(Prefix, http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			engramhttp.WriteError(w, r, engram.Errorf(engram.EMETHOD, "method %s is not allowed on %s; allowed: GET, HEAD", r.Method, r.URL.Path))
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

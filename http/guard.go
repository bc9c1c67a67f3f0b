package http

import (
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/engramhq/engram"
)

// Browser-facing guards. A page on another site can make the browser send
// requests to a server on localhost, and with DNS rebinding read the
// answers; two checks stop that without credentials. The Host header must
// name this server (a rebound name does not), and a request carrying an
// Origin header must come from an origin the operator allowed, which alone
// gets CORS headers.

// loopbackNames are the Host names always accepted at the port the server
// listens on.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// corsMethods and corsHeaders are what a preflight from an allowed origin
// may use.
const (
	corsMethods = "GET, POST, PATCH, DELETE"
	corsHeaders = "Authorization, Content-Type, " + ActorHeader + ", " + RequestIDHeader
	corsMaxAge  = "600"
)

// checkHost returns an EFORBIDDEN error unless the request's Host header
// names the address the server listens on (bound, "" when unknown),
// localhost, 127.0.0.1 or [::1] at its port (any port when bound is
// unknown), or an allowed host. A request without a Host header (HTTP/1.0)
// passes: browsers always send one.
func (s *Server) checkHost(r *http.Request, bound string) error {
	if r.Host == "" || slices.Contains(s.allowedHosts, "*") {
		return nil
	}
	host, port := splitHost(r.Host)
	boundHost, boundPort := "", ""
	if bound != "" {
		boundHost, boundPort = splitHost(bound)
	}
	if bound != "" && host == boundHost && port == boundPort {
		return nil
	}
	if slices.Contains(loopbackNames, host) && (bound == "" || port == boundPort) {
		return nil
	}
	for _, a := range s.allowedHosts {
		ah, ap := splitHost(a)
		if ah == host && (!hasPort(a) || ap == port) {
			return nil
		}
	}
	return engram.Errorf(engram.EFORBIDDEN, "header Host %q does not name this server; if clients reach it by that name, add it to the allowed hosts (engram serve --allowed-hosts, ENGRAM_ALLOWED_HOSTS)", r.Host)
}

// splitHost splits "host:port", "host", "[v6]:port" or "[v6]" into a lower
// case host without a trailing dot and a port, "80" when absent.
func splitHost(hp string) (host, port string) {
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		host, port = strings.TrimSuffix(strings.TrimPrefix(hp, "["), "]"), "80"
	}
	return strings.TrimSuffix(strings.ToLower(host), "."), port
}

// sameOrigin reports whether origin is the scheme and host the request was
// sent to. With "*" in AllowedHosts no origin is taken as the server's own:
// any name passes the Host check then, so a page on a DNS name rebound to
// the server would count as same-origin.
func (s *Server) sameOrigin(r *http.Request, origin string) bool {
	if slices.Contains(s.allowedHosts, "*") {
		return false
	}
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	return r.Host != "" && strings.EqualFold(origin, scheme+r.Host)
}

func hasPort(hp string) bool {
	_, _, err := net.SplitHostPort(hp)
	return err == nil
}

// checkOrigin returns an EFORBIDDEN error when the request carries an Origin
// header that is not allowed. For an allowed origin it sets the CORS
// headers, and answers a preflight itself, reporting done. A page of the
// server's own origin (the dashboard at /ui/, whose module scripts and
// writes carry Origin) is always allowed: its Host passed checkHost, so a
// rebound DNS name cannot pose as it.
func (s *Server) checkOrigin(w http.ResponseWriter, r *http.Request) (done bool, err error) {
	origin := r.Header.Get("Origin")
	if origin == "" || s.sameOrigin(r, origin) {
		return false, nil
	}
	w.Header().Add("Vary", "Origin")
	if !slices.ContainsFunc(s.allowedOrigins, func(a string) bool { return a == "*" || strings.EqualFold(a, origin) }) {
		return false, engram.Errorf(engram.EFORBIDDEN, "requests from origin %q are not accepted; to let a web page at that origin call this server, add it to the allowed origins (engram serve --allowed-origins, ENGRAM_ALLOWED_ORIGINS)", origin)
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", RequestIDHeader)
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", corsMethods)
		h.Set("Access-Control-Allow-Headers", corsHeaders)
		h.Set("Access-Control-Max-Age", corsMaxAge)
		w.WriteHeader(http.StatusNoContent)
		return true, nil
	}
	return false, nil
}

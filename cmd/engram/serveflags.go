package main

import (
	"flag"
	"strings"
	"time"

	engramhttp "github.com/engramhq/engram/http"
)

// serveFlags are the flags of engram serve that shape the HTTP server:
// connection timeouts and the hosts and browser origins it answers.
type serveFlags struct {
	timeouts                     [4]*string // read header, read, write, idle
	allowedHosts, allowedOrigins *string
}

var timeoutFlags = [4]struct {
	name, env string
	def       time.Duration
	usage     string
}{
	{"read-header-timeout", "ENGRAM_READ_HEADER_TIMEOUT", engramhttp.DefaultReadHeaderTimeout, "time a client has to send a request's headers"},
	{"read-timeout", "ENGRAM_READ_TIMEOUT", engramhttp.DefaultReadTimeout, "time a client has to send a whole request, body included"},
	{"write-timeout", "ENGRAM_WRITE_TIMEOUT", engramhttp.DefaultWriteTimeout, "time to answer a request (an export: each piece of it)"},
	{"idle-timeout", "ENGRAM_IDLE_TIMEOUT", engramhttp.DefaultIdleTimeout, "time an idle keep-alive connection is kept open"},
}

func (f *serveFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	for i, tf := range timeoutFlags {
		f.timeouts[i] = fs.String(tf.name, envOr(getenv, tf.env, tf.def.String()), tf.usage+" (`duration`, env "+tf.env+")")
	}
	f.allowedHosts = fs.String("allowed-hosts", getenv("ENGRAM_ALLOWED_HOSTS"),
		"comma-separated `hosts` accepted in the Host header besides the listening address and localhost: name, name:port, or * for any (env ENGRAM_ALLOWED_HOSTS)")
	f.allowedOrigins = fs.String("allowed-origins", getenv("ENGRAM_ALLOWED_ORIGINS"),
		"comma-separated browser `origins` (https://app.example.com) allowed to call the API, with CORS; * for any (env ENGRAM_ALLOWED_ORIGINS)")
}

// options returns the server options the flags give; a duration that does
// not parse or is not positive is a usage error naming the flag.
func (f *serveFlags) options(cmd *Command) (engramhttp.ServerOptions, error) {
	var d [4]time.Duration
	for i, tf := range timeoutFlags {
		v, err := time.ParseDuration(*f.timeouts[i])
		if err != nil || v <= 0 {
			return engramhttp.ServerOptions{}, cmdUsageErrorf(cmd, "--%s (env %s) %q is not a positive duration like 30s or 2m", tf.name, tf.env, *f.timeouts[i])
		}
		d[i] = v
	}
	return engramhttp.ServerOptions{
		ReadHeaderTimeout: d[0], ReadTimeout: d[1], WriteTimeout: d[2], IdleTimeout: d[3],
		AllowedHosts:   splitList(*f.allowedHosts),
		AllowedOrigins: splitList(*f.allowedOrigins),
	}, nil
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

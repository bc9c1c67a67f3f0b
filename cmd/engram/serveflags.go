package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
)

// serveFlags are the flags of engram serve that shape the HTTP server:
// connection timeouts, the hosts and browser origins it answers, and the
// limits per client.
type serveFlags struct {
	timeouts                     [4]*string // read header, read, write, idle
	allowedHosts, allowedOrigins *string
	maxEmbedBytes                *int64
	maxImportRecords             *int64
	noAuth                       *bool
	rateLimit                    *float64
	rateBurst, maxConcurrent     *int64
	tlsCert, tlsKey              *string
	workers, jobsPerTenant       *int64
	jobLease                     *string
	embedInline                  *bool
	vaultKeyFile                 *string
	sensitive                    *string
	sensitiveTune                func(*engine.Options) // sensitive as read by options
	mcp                          mcpFlags
	indexDir                     *string
	indexPath                    string // indexDir resolved by resolveIndexDir
	resourceQuota                *int64
	maxResourceBytes             *int64
	textIndexMB, textIndexLimit  *int64
	rowCacheMB                   *int64
	search                       searchFlags
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
	f.maxEmbedBytes = fs.Int64("max-embed-bytes", envInt64(getenv, "ENGRAM_MAX_EMBED_BYTES", engramhttp.DefaultMaxEmbedBytes),
		"most `bytes` of text one request may ask to embed (env ENGRAM_MAX_EMBED_BYTES)")
	f.maxImportRecords = fs.Int64("max-import-records", envInt64(getenv, "ENGRAM_MAX_IMPORT_RECORDS", engramhttp.DefaultMaxImportRecords),
		"most `records` one import request may hold (env ENGRAM_MAX_IMPORT_RECORDS)")
	f.rateLimit = fs.Float64("rate-limit", envFloat(getenv, "ENGRAM_RATE_LIMIT", engramhttp.DefaultRateLimit),
		"`requests` a second each API key (or client IP without keys) may send; 0 for no limit (env ENGRAM_RATE_LIMIT)")
	f.rateBurst = fs.Int64("rate-burst", envInt64(getenv, "ENGRAM_RATE_BURST", engramhttp.DefaultRateBurst),
		"`requests` a client may send at once above --rate-limit (env ENGRAM_RATE_BURST)")
	f.maxConcurrent = fs.Int64("max-concurrent", envInt64(getenv, "ENGRAM_MAX_CONCURRENT", engramhttp.DefaultMaxConcurrent),
		"`requests` each API key (or client IP) may have in flight; 0 for no limit (env ENGRAM_MAX_CONCURRENT)")
	f.tlsCert = fs.String("tls-cert", getenv("ENGRAM_TLS_CERT"),
		"serve HTTPS with the PEM certificate (chain) in this `file`; needs --tls-key (env ENGRAM_TLS_CERT)")
	f.tlsKey = fs.String("tls-key", getenv("ENGRAM_TLS_KEY"),
		"PEM private key `file` of --tls-cert (env ENGRAM_TLS_KEY)")
	f.workers = fs.Int64("workers", envInt64(getenv, "ENGRAM_WORKERS", 4),
		"background `workers` forming the memories of asynchronous adds and embedding those of the others; 0 runs none, and adds then embed before they answer (env ENGRAM_WORKERS)")
	f.jobsPerTenant = fs.Int64("jobs-per-tenant", envInt64(getenv, "ENGRAM_JOBS_PER_TENANT", 0),
		"most background `jobs` of one tenant (org/project) run at once, so one tenant's slow formations leave workers to the others; 0 for --workers minus one (env ENGRAM_JOBS_PER_TENANT)")
	f.jobLease = fs.String("job-lease", envOr(getenv, "ENGRAM_JOB_LEASE", "1m"),
		"how long a worker holds a background job before another server's may take it over (`duration`, env ENGRAM_JOB_LEASE)")
	f.embedInline = fs.Bool("embed-inline", envBool(getenv, "ENGRAM_EMBED_INLINE"),
		"an add of episodes embeds its memories before it answers; by default it answers once they are stored and found by full text, and background workers embed them for the dense channel (env ENGRAM_EMBED_INLINE=1)")
	f.vaultKeyFile = fs.String("vault-key-file", getenv(envVaultKeyFile),
		"`file` holding the vault's master key, 32 bytes as hex, base64 or raw; or set ENGRAM_VAULT_KEY (env "+envVaultKeyFile+")")
	f.sensitive = fs.String("sensitive", getenv("ENGRAM_SENSITIVE"),
		"default `policy` for secrets and personal data found in writes: group=treatment pairs of secret, payment, id, contact and seal, redact, keep, or one treatment for all; groups left out: secret=seal,payment=seal,id=seal,contact=keep; a tenant's admin may set its own; off: no detection at all, every text stored as sent whatever a tenant set (env ENGRAM_SENSITIVE)")
	f.indexDir = fs.String("index-dir", getenv("ENGRAM_INDEX_DIR"),
		"`directory` where each user's vector and full-text indexes are saved, so a restart loads them instead of building them; default DATA/ann, with --store the user's cache directory; off to save none (env ENGRAM_INDEX_DIR)")
	f.textIndexMB = fs.Int64("text-index-mb", envInt64(getenv, "ENGRAM_TEXT_INDEX_MB", engine.DefaultTextIndexBytes>>20),
		"`megabytes` all users' in-memory text indexes may take together; past it the least recently searched are dropped and loaded again when needed; 0 for no bound (env ENGRAM_TEXT_INDEX_MB)")
	f.textIndexLimit = fs.Int64("text-index-limit", envInt64(getenv, "ENGRAM_TEXT_INDEX_LIMIT", engine.DefaultTextIndexLimit),
		"most `memories` one user may have for full-text search to use the in-memory index; above it the store's index serves; 0 always uses the store's (env ENGRAM_TEXT_INDEX_LIMIT)")
	f.rowCacheMB = fs.Int64("row-cache-mb", envInt64(getenv, "ENGRAM_ROW_CACHE_MB", engine.DefaultRowCacheBytes>>20),
		"`megabytes` of memories the in-memory text indexes keep for searches, all users together, so a search reads from the store only those it lacks; 0 keeps none (env ENGRAM_ROW_CACHE_MB)")
	f.noAuth = fs.Bool("no-auth", envBool(getenv, "ENGRAM_NO_AUTH"),
		"serve without API keys; allowed only on a loopback --addr (env ENGRAM_NO_AUTH=1)")
	f.allowedHosts = fs.String("allowed-hosts", getenv("ENGRAM_ALLOWED_HOSTS"),
		"comma-separated `hosts` accepted in the Host header besides the listening address and localhost: name, name:port, or * for any (env ENGRAM_ALLOWED_HOSTS)")
	f.allowedOrigins = fs.String("allowed-origins", getenv("ENGRAM_ALLOWED_ORIGINS"),
		"comma-separated browser `origins` (https://app.example.com) allowed to call the API, with CORS; * for any (env ENGRAM_ALLOWED_ORIGINS)")
	f.resourceQuota = fs.Int64("resource-quota", envInt64(getenv, "ENGRAM_RESOURCE_QUOTA", 0),
		"most `bytes` of resources (uploaded files) each tenant may store; 0 for no quota (env ENGRAM_RESOURCE_QUOTA)")
	f.maxResourceBytes = fs.Int64("max-resource-bytes", envInt64(getenv, "ENGRAM_MAX_RESOURCE_BYTES", engramhttp.DefaultMaxResourceBytes),
		"largest upload to POST /v1/resources, in `bytes` (env ENGRAM_MAX_RESOURCE_BYTES)")
	f.mcp.register(fs, getenv)
	f.search.register(fs, getenv)
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
	if *f.maxEmbedBytes <= 0 {
		return engramhttp.ServerOptions{}, cmdUsageErrorf(cmd, "--max-embed-bytes (env ENGRAM_MAX_EMBED_BYTES) must be a positive number of bytes")
	}
	if *f.resourceQuota < 0 || *f.maxResourceBytes <= 0 {
		return engramhttp.ServerOptions{}, cmdUsageErrorf(cmd, "--resource-quota (env ENGRAM_RESOURCE_QUOTA) must be a number of bytes, 0 for none, and --max-resource-bytes (env ENGRAM_MAX_RESOURCE_BYTES) a positive one")
	}
	if *f.maxImportRecords <= 0 || *f.maxImportRecords > 1<<30 {
		return engramhttp.ServerOptions{}, cmdUsageErrorf(cmd, "--max-import-records (env ENGRAM_MAX_IMPORT_RECORDS) must be a number of records from 1 to 1073741824")
	}
	switch {
	case !(*f.rateLimit >= 0) || math.IsInf(*f.rateLimit, 1):
		return engramhttp.ServerOptions{}, cmdUsageErrorf(cmd, "--rate-limit (env ENGRAM_RATE_LIMIT) must be a number of requests a second, 0 for no limit")
	case *f.rateBurst < 1 || *f.rateBurst > 1<<20:
		return engramhttp.ServerOptions{}, cmdUsageErrorf(cmd, "--rate-burst (env ENGRAM_RATE_BURST) must be a number of requests from 1 to 1048576")
	case *f.maxConcurrent < 0 || *f.maxConcurrent > 1<<20:
		return engramhttp.ServerOptions{}, cmdUsageErrorf(cmd, "--max-concurrent (env ENGRAM_MAX_CONCURRENT) must be a number of requests up to 1048576, 0 for no limit")
	}
	switch {
	case *f.textIndexMB < 0 || *f.textIndexMB > 1<<30:
		return engramhttp.ServerOptions{}, cmdUsageErrorf(cmd, "--text-index-mb (env ENGRAM_TEXT_INDEX_MB) must be a number of megabytes up to 1073741824, 0 for no bound")
	case *f.textIndexLimit < 0 || *f.textIndexLimit > math.MaxInt32:
		return engramhttp.ServerOptions{}, cmdUsageErrorf(cmd, "--text-index-limit (env ENGRAM_TEXT_INDEX_LIMIT) must be a number of memories up to 2147483647, 0 to use the store's index always")
	case *f.rowCacheMB < 0 || *f.rowCacheMB > 1<<30:
		return engramhttp.ServerOptions{}, cmdUsageErrorf(cmd, "--row-cache-mb (env ENGRAM_ROW_CACHE_MB) must be a number of megabytes up to 1073741824, 0 to keep none")
	}
	if *f.workers < 0 || *f.workers > 256 {
		return engramhttp.ServerOptions{}, cmdUsageErrorf(cmd, "--workers (env ENGRAM_WORKERS) must be a number from 0 to 256")
	}
	if *f.jobsPerTenant < 0 || *f.jobsPerTenant > 256 {
		return engramhttp.ServerOptions{}, cmdUsageErrorf(cmd, "--jobs-per-tenant (env ENGRAM_JOBS_PER_TENANT) must be a number from 0 to 256")
	}
	if v, err := time.ParseDuration(*f.jobLease); err != nil || v < time.Second {
		return engramhttp.ServerOptions{}, cmdUsageErrorf(cmd, "--job-lease (env ENGRAM_JOB_LEASE) %q is not a duration of at least 1s like 1m", *f.jobLease)
	}
	switch {
	case *f.tlsCert != "" && *f.tlsKey == "":
		return engramhttp.ServerOptions{}, cmdUsageErrorf(cmd, "--tls-cert is given but not --tls-key (env ENGRAM_TLS_KEY); HTTPS needs both, or neither for plain HTTP")
	case *f.tlsCert == "" && *f.tlsKey != "":
		return engramhttp.ServerOptions{}, cmdUsageErrorf(cmd, "--tls-key is given but not --tls-cert (env ENGRAM_TLS_CERT); HTTPS needs both, or neither for plain HTTP")
	}
	if err := f.mcp.check(cmd); err != nil {
		return engramhttp.ServerOptions{}, err
	}
	if err := f.search.check(cmd); err != nil {
		return engramhttp.ServerOptions{}, err
	}
	if err := f.checkSensitive(cmd); err != nil {
		return engramhttp.ServerOptions{}, err
	}
	var tlsConfig *tls.Config
	if *f.tlsCert != "" {
		cert, err := loadCertificate(*f.tlsCert, *f.tlsKey)
		if err != nil {
			return engramhttp.ServerOptions{}, err
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return engramhttp.ServerOptions{
		TLS:               tlsConfig,
		RateLimit:         *f.rateLimit,
		RateBurst:         int(*f.rateBurst),
		MaxConcurrent:     int(*f.maxConcurrent),
		MaxEmbedBytes:     *f.maxEmbedBytes,
		MaxImportRecords:  int(*f.maxImportRecords),
		MaxResourceBytes:  *f.maxResourceBytes,
		ReadHeaderTimeout: d[0], ReadTimeout: d[1], WriteTimeout: d[2], IdleTimeout: d[3],
		AllowedHosts:   splitList(*f.allowedHosts),
		AllowedOrigins: splitList(*f.allowedOrigins),
	}, nil
}

// checkSensitive reads --sensitive into sensitiveTune; a bad policy is
// a usage error naming the flag.
func (f *serveFlags) checkSensitive(cmd *Command) error {
	t, err := engine.SensitiveTune(*f.sensitive)
	if err != nil {
		return cmdUsageErrorf(cmd, "--sensitive (env ENGRAM_SENSITIVE): %s", engram.ErrorMessage(err))
	}
	f.sensitiveTune = t
	return nil
}

// tuneEngine sets the engine options the flags give: its background
// workers and their lease, its saved indexes, its resource quota, the
// bounds of its text indexes, and the search channels and agentic rules
// turned on (checked by options).
func (f *serveFlags) tuneEngine(o *engine.Options) {
	f.search.tune(o)
	o.Workers = int(*f.workers)
	o.JobsPerTenant = int(*f.jobsPerTenant)
	o.JobLease, _ = time.ParseDuration(*f.jobLease)
	o.EmbedInline = *f.embedInline
	if f.sensitiveTune != nil {
		f.sensitiveTune(o)
	}
	o.IndexDir = f.indexPath
	o.ResourceQuota = *f.resourceQuota
	o.TextIndexBytes = *f.textIndexMB << 20
	if *f.textIndexMB == 0 {
		o.TextIndexBytes = -1 // no bound
	}
	o.TextIndexLimit = int(*f.textIndexLimit)
	if *f.textIndexLimit == 0 {
		o.TextIndexLimit = -1 // the store's index always
	}
	o.RowCacheBytes = *f.rowCacheMB << 20
	if *f.rowCacheMB == 0 {
		o.RowCacheBytes = -1 // none
	}
}

// resolveIndexDir picks the directory of the saved vector indexes:
// --index-dir, else DATA/ann beside a data directory's database, else
// (PostgreSQL) engram/ann in the user's cache directory; none for "off" or
// when no cache directory is known.
func (f *serveFlags) resolveIndexDir(data, store string) {
	switch {
	case *f.indexDir == "off":
		f.indexPath = ""
	case *f.indexDir != "":
		f.indexPath = *f.indexDir
	case store == "":
		f.indexPath = filepath.Join(data, "ann")
	default:
		if dir, err := os.UserCacheDir(); err == nil {
			f.indexPath = filepath.Join(dir, "engram", "ann")
		}
	}
}

// loadCertificate reads the PEM certificate chain in certFile and the
// private key in keyFile; an error names the file at fault.
func loadCertificate(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("--tls-cert: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("--tls-key: %w", err)
	}
	n := 0
	for rest := certPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return tls.Certificate{}, fmt.Errorf("--tls-cert %s: %w", certFile, err)
		}
		n++
	}
	if n == 0 {
		return tls.Certificate{}, fmt.Errorf("--tls-cert %s: no PEM CERTIFICATE block", certFile)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("--tls-key %s (the key of --tls-cert %s): %w", keyFile, certFile, err)
	}
	return cert, nil
}

// envBool reports whether the variable key is set to a true value (1,
// true); anything else is false.
func envBool(getenv func(string) string, key string) bool {
	v, err := strconv.ParseBool(getenv(key))
	return err == nil && v
}

// isLoopback reports whether the listen address addr binds only to the
// loopback interface: localhost or a loopback IP. An empty host (":8080")
// binds every interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkAuth refuses --no-auth on an address other programs and machines
// can reach, with a sentence saying how to serve there with a key.
func (f *serveFlags) checkAuth(cmd *Command, addr string) error {
	if !*f.noAuth || isLoopback(addr) {
		return nil
	}
	return cmdUsageErrorf(cmd, "--no-auth (ENGRAM_NO_AUTH) is allowed only on a loopback address such as 127.0.0.1:8080, and --addr is %s; "+
		"to serve there, create a key with engram keys create --org ORG --project PROJECT --role admin (same --data or --store as the server) and drop --no-auth", addr)
}

// envInt64 is the integer in the variable key, def when it is unset; a
// value that is not an integer gives -1, which options refuses.
func envInt64(getenv func(string) string, key string, def int64) int64 {
	v := getenv(key)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// envFloat is the number in the variable key, def when it is unset; a
// value that is not a number gives -1, which options refuses.
func envFloat(getenv func(string) string, key string, def float64) float64 {
	v := getenv(key)
	if v == "" {
		return def
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return -1
	}
	return n
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

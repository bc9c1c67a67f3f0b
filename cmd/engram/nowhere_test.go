package main_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/openai/openaitest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// nowhereSpans are the secrets the write paths below bring, in English,
// Spanish, German, French and Chinese turns: a provider key, a card that
// passes the Luhn check, passwords, an IBAN, another key.
var nowhereSpans = []string{
	"sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "6011 0000 0000 0004", "Sommer2024!",
	"DE89 3704 0044 0532 0130 00", "Zk4Lm9Qp2Rs7Tv1Wx6Yz3Ab8Cd5Ef0Gh", "Tr0ub4dor&3",
}

func vaultKeyEnv() string {
	return "ENGRAM_VAULT_KEY=" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("n", 32)))
}

// httpBody answers GET or POST url (a JSON body, unless empty) and fails
// on a status other than 200.
func httpBody(t *testing.T, method, url, body string) string {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 && resp.StatusCode != 201 {
		t.Fatalf("%s %s: status %d: %s", method, url, resp.StatusCode, b)
	}
	return string(b)
}

// noSpan fails for each secret of nowhereSpans that text holds, raw or
// as a JSON string holds it.
func noSpan(t *testing.T, where, text string) {
	t.Helper()
	for _, span := range nowhereSpans {
		q, _ := json.Marshal(span)
		if strings.Contains(text, span) || strings.Contains(text, string(q[1:len(q)-1])) {
			t.Errorf("%s holds %q", where, span)
		}
	}
}

// TestSensitiveNowhere brings secrets through every write path of a
// server logging JSON at debug level with a vault key (the REST API, the
// Mem0 API, MCP's remember as turns and as a fact, a memory added as is,
// the chat proxy, an uploaded document) and then looks for them where
// they must not be: the server's log, GET /metrics, the routes the
// dashboard reads (episodes, memories, search, audit, scopes, tenants,
// entities), the uploaded document's content, the export and the training
// data (which must hold the memory added as is, with its placeholder).
// Each place is checked to hold the placeholders or the
// tenant's other texts, so a check is not blind.
func TestSensitiveNowhere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	up := openaitest.NewServer(t, openaitest.Options{Chat: func(openaitest.ChatRequest) string { return "Noted." }})
	s := startServer(t, dir, append(baseEnv(t), vaultKeyEnv(), "ENGRAM_PROXY_KEY=up-key"),
		"--log-format", "json", "--log-level", "debug", "--proxy-url", up.URL(), "--proxy-org", "acme", "--proxy-project", "app",
		"--mem0-org", "acme", "--mem0-project", "app", "--mcp-org", "acme", "--mcp-project", "app", "--mcp-user", "ann")
	c := &cli{t: t, env: baseEnv(t), extra: []string{"--server", s.url, "--org", "acme", "--project", "app"}}
	c.ok("add", "--user", "ann", "--role", "user", "my OpenAI key is "+nowhereSpans[0]+", keep it for the deploy")
	c.ok("add", "--user", "ann", "--role", "user", "I live in Berlin.")
	c.ok("add", "--memory", "--user", "ann", "Ana paga la luz con la tarjeta "+nowhereSpans[1])
	httpBody(t, "POST", s.url+"/mem0/v1/memories/", `{"user_id":"ann","messages":[{"role":"user","content":"Mi tarjeta es `+nowhereSpans[1]+` y caduca pronto"}]}`)
	cs := connectMCP(t, &sdk.StreamableClientTransport{Endpoint: s.url + "/mcp", DisableStandaloneSSE: true})
	callMCP(t, cs, "remember", map[string]any{"turns": []map[string]any{{"role": "user", "content": "Das Passwort für den Router lautet: " + nowhereSpans[2]}}})
	callMCP(t, cs, "remember", map[string]any{"fact": "la clé API est " + nowhereSpans[4]})
	httpBody(t, "POST", s.url+"/v1/chat/completions", `{"model":"m","user":"ann","messages":[{"role":"user","content":"Virement sur `+nowhereSpans[3]+` avant lundi"}]}`)
	doc := filepath.Join(t.TempDir(), "notes.md")
	if err := os.WriteFile(doc, []byte("# 笔记\n\n我的密码是 "+nowhereSpans[5]+"，别告诉别人\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ok("resources", "add", "--user", "ann", doc)

	q := "?org=acme&project=app&user=ann"
	episodes := httpBody(t, "GET", s.url+"/v1/episodes"+q+"&limit=1000", "")
	for _, ph := range []string{"[secret:api_key#1]", "[payment:card#1]", "[secret:password#1]", "[payment:iban#1]"} {
		if !strings.Contains(episodes, ph) {
			t.Errorf("the episodes lack %s: the write paths' checks would be blind\n%s", ph, episodes)
		}
	}
	memories := httpBody(t, "GET", s.url+"/v1/memories"+q+"&limit=1000", "")
	if !strings.Contains(memories, "la clé API est [secret:api_key#1]") || !strings.Contains(memories, "我的密码是 [secret:password#1]") {
		t.Errorf("the memories lack the fact's or the document's placeholder:\n%s", memories)
	}
	reads := map[string]string{"episodes": episodes, "memories": memories}
	for name, path := range map[string]string{
		"audit": "/v1/audit" + q, "scopes": "/v1/scopes?org=acme&project=app", "tenants": "/v1/tenants",
		"entities": "/v1/entities" + q, "metrics": "/metrics", "resources": "/v1/resources" + q,
	} {
		reads[name] = httpBody(t, "GET", s.url+path, "")
	}
	var res engram.ResourcePage
	if err := json.Unmarshal([]byte(reads["resources"]), &res); err != nil || len(res.Resources) != 1 {
		t.Fatalf("resources: %s (%v)", reads["resources"], err)
	}
	reads["the uploaded document"] = httpBody(t, "GET", s.url+"/v1/resources/"+res.Resources[0].ID+"/content"+q, "")
	if !strings.Contains(reads["the uploaded document"], "我的密码是 [secret:password#1]") {
		t.Errorf("the uploaded document lacks its placeholder: %q", reads["the uploaded document"])
	}
	for _, span := range nowhereSpans {
		reads["search "+span] = httpBody(t, "POST", s.url+"/v1/search", `{"scope":{"org":"acme","project":"app","user":"ann"},"query":`+jsonString(span)+`}`)
	}
	if !strings.Contains(reads["metrics"], "engram_http_requests_total") || !strings.Contains(reads["audit"], "sensitive") {
		t.Errorf("the metrics or the audit miss what they should hold:\n%.300s\n%.300s", reads["metrics"], reads["audit"])
	}
	for name, body := range reads {
		noSpan(t, name, body)
	}
	if code := s.stop(t); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	logs := s.logs.String()
	if !strings.Contains(logs, `"msg"`) || !strings.Contains(logs, "/v1/chat/completions") {
		t.Fatalf("the server's log is not JSON or misses the requests: the check would be blind\n%s", logs)
	}
	noSpan(t, "the server's log", logs)
	local := &cli{t: t, env: baseEnv(t), extra: []string{"--data", dir, "--org", "acme", "--project", "app", "--user", "ann"}}
	noSpan(t, "the export", local.ok("export"))
	sft := local.ok("export", "--format", "sft")
	if !strings.Contains(sft, "Berlin") || !strings.Contains(sft, "Ana paga la luz con la tarjeta [payment:card#1]") {
		t.Errorf("the training data lack the kept fact or the memory that held the card: the check would be blind\n%s", sft)
	}
	noSpan(t, "the training data", sft)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestScanServer: engram scan --server scans through a running server that
// requires keys: without a key or with a write key it fails (exit 1) and
// scans nothing; with the tenant's admin key it reports the password and
// the card stored while the tenant kept them (kinds and record ids, never
// the values), without --user it sweeps every user of the tenant, and
// --apply, once the tenant's policy seals, seals them
// through the server, after which the episodes hold placeholders and a
// second scan finds nothing.
func TestScanServer(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	local := localCLI(t, dir)
	admin := strings.TrimSpace(local.ok("keys", "create", "--org", "acme", "--project", "app", "--role", "admin", "--name", "ops"))
	writer := strings.TrimSpace(local.ok("keys", "create", "--org", "acme", "--project", "app", "--role", "write"))
	s := startServer(t, dir, append(baseEnv(t), vaultKeyEnv(), "ENGRAM_SENSITIVE=keep"), "--no-auth=false")
	remote := func(key string) *cli {
		return &cli{t: t, env: baseEnv(t), extra: []string{"--server", s.url, "--key", key, "--org", "acme", "--project", "app"}}
	}
	remote(admin).ok("add", "--user", "ann", "Das Passwort für den Router lautet: Sommer2024!")
	remote(admin).ok("add", "--user", "ann", "Mi tarjeta es 6011 0000 0000 0004 y caduca pronto")
	for _, key := range []string{"", writer} {
		if e := remote(key).fail(1, "scan", "--user", "ann"); !strings.Contains(e, "key") {
			t.Errorf("scan with key %q: %q", key, e)
		}
	}
	var rep engram.SensitiveScan
	remote(admin).json(&rep, "scan", "--user", "ann")
	kinds := map[string]int{}
	for _, f := range rep.Found {
		kinds[f.Kind] = f.Count
	}
	if rep.Episodes != 2 || kinds["password"] == 0 || kinds["card"] == 0 || rep.Treated != nil {
		t.Fatalf("scan --server = %+v", rep)
	}
	if out := remote(admin).ok("scan", "--user", "ann"); strings.Contains(out, "Sommer2024!") || strings.Contains(out, "6011 0000 0000 0004") || !strings.Contains(out, "password") {
		t.Errorf("scan --server printed %q", out)
	}
	remote(admin).ok("add", "--user", "bob", "IBAN: DE89 3704 0044 0532 0130 00")
	var sweep engram.SensitiveScan
	remote(admin).json(&sweep, "scan")
	if sweep.Users != 2 || !slices.ContainsFunc(sweep.Found, func(f engram.SensitiveFound) bool { return f.User == "bob" && f.Kind == "iban" }) ||
		!slices.ContainsFunc(sweep.Found, func(f engram.SensitiveFound) bool { return f.User == "ann" && f.Kind == "card" }) {
		t.Errorf("scan --server without --user = %+v; want every user of the tenant", sweep)
	}
	if out := remote(admin).ok("scan"); !strings.Contains(out, "scanned 2 users") || !strings.Contains(out, `of user "bob"`) || strings.Contains(out, "DE89") {
		t.Errorf("scan --server without --user printed %q", out)
	}
	remote(admin).ok("sensitive", "--set", "secret=seal,payment=seal")
	remote(admin).json(&rep, "scan", "--apply", "--user", "ann")
	if got := engram.SummarizeSensitive(rep.Treated); !strings.Contains(got, "sealed card") || !strings.Contains(got, "sealed password") {
		t.Errorf("scan --server --apply treated %q", got)
	}
	var eps engram.EpisodePage
	remote(admin).json(&eps, "list", "--episodes", "--user", "ann")
	b, _ := json.Marshal(eps)
	if strings.Contains(string(b), "Sommer2024!") || strings.Contains(string(b), "6011 0000 0000 0004") || !strings.Contains(string(b), "[payment:card#1]") {
		t.Errorf("after scan --apply the episodes are %s", b)
	}
	remote(admin).json(&rep, "scan", "--user", "ann")
	if len(rep.Found) != 0 {
		t.Errorf("a second scan found %+v", rep.Found)
	}
}

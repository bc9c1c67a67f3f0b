package main_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectMCP connects an MCP client through transport.
func connectMCP(t *testing.T, transport sdk.Transport) *sdk.ClientSession {
	t.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "cli-test", Version: "v0"}, nil).Connect(context.Background(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callMCP calls a tool that must succeed and returns its text.
func callMCP(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		t.Fatalf("%s: tool error %s", name, b.String())
	}
	return b.String()
}

// engram mcp serves the tools on stdio in the scope of its flags; what it
// stores is what the other commands read there, written by the actor mcp.
func TestMCP_Stdio(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(binPath, "mcp", "--data", dir, "--org", "acme", "--project", "app", "--user", "ann")
	cmd.Env = baseEnv(t)
	cs := connectMCP(t, &sdk.CommandTransport{Command: cmd})
	out := callMCP(t, cs, "remember", map[string]any{"turns": []map[string]any{
		{"role": "user", "speaker": "Ann", "content": "Mi perro se llama Toby y le encanta la playa."},
	}})
	if !strings.Contains(out, "Toby") {
		t.Fatalf("remember = %s", out)
	}
	if out := callMCP(t, cs, "recall", map[string]any{"query": "¿Cómo se llama el perro?"}); !strings.Contains(out, "Toby") {
		t.Fatalf("recall = %s", out)
	}
	fact := callMCP(t, cs, "remember", map[string]any{"fact": "Ann's dog Toby is three years old."})
	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	c := localCLI(t, dir)
	if out := c.ok("search", "--org", "acme", "--project", "app", "--user", "ann", "perro", "Toby"); !strings.Contains(out, "Toby") {
		t.Fatalf("search in the flags' scope = %q", out)
	}
	if out := c.ok("search", "--org", "acme", "--project", "app", "--user", "bob", "perro", "Toby"); strings.Contains(out, "Toby") {
		t.Fatalf("bob's search finds ann's memory: %q", out)
	}
	var rem struct {
		Memories []struct{ ID string } `json:"memories"`
	}
	if err := json.Unmarshal([]byte(fact), &rem); err != nil || len(rem.Memories) != 1 {
		t.Fatalf("remember = %s (%v)", fact, err)
	}
	if h := c.ok("history", "--org", "acme", "--project", "app", "--user", "ann", "--json", rem.Memories[0].ID); !strings.Contains(h, `"actor": "mcp"`) {
		t.Fatalf("history of %s = %s, want the actor mcp", rem.Memories[0].ID, h)
	}
}

func TestMCP_BadFlags(t *testing.T) {
	c := &cli{t: t, env: baseEnv(t)}
	for _, args := range [][]string{
		{"mcp", "--data", t.TempDir(), "--org", ""},
		{"mcp", "--data", t.TempDir(), "--user", "a/b"},
		{"mcp", "--data", t.TempDir(), "extra"},
		{"serve", "--data", t.TempDir(), "--no-auth", "--addr", "127.0.0.1:0", "--mcp-user", "a/b"},
		{"serve", "--data", t.TempDir(), "--no-auth", "--addr", "127.0.0.1:0", "--mcp-org", ""},
	} {
		r := c.run(args...)
		if r.code != 2 || !strings.Contains(r.stderr, "engram: ") {
			t.Errorf("engram %s: exit %d, stderr %q; want 2 and a sentence", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	r := c.run("mcp", "--data", t.TempDir(), "--user", "a/b")
	if !strings.Contains(r.stderr, "namespace.user") {
		t.Errorf("bad --user: %q does not name the field", r.stderr)
	}
	r = c.run("serve", "--data", t.TempDir(), "--no-auth", "--addr", "127.0.0.1:0", "--mcp-user", "a/b")
	if !strings.Contains(r.stderr, "--mcp-user") {
		t.Errorf("bad --mcp-user: %q does not name the flag", r.stderr)
	}
}

// engram serve serves the tools at /mcp; without keys, in the scope of
// its --mcp-* flags.
func TestServe_MCP(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, baseEnv(t), "--mcp-org", "acme", "--mcp-project", "app", "--mcp-user", "ann")
	cs := connectMCP(t, &sdk.StreamableClientTransport{Endpoint: s.url + "/mcp", DisableStandaloneSSE: true})
	callMCP(t, cs, "remember", map[string]any{"fact": "Ann plays the cello on Sundays."})
	if out := callMCP(t, cs, "recall", map[string]any{"query": "cello"}); !strings.Contains(out, "Sundays") {
		t.Fatalf("recall = %s", out)
	}
	c := &cli{t: t, env: baseEnv(t), extra: []string{"--server", s.url}}
	if out := c.ok("search", "--org", "acme", "--project", "app", "--user", "ann", "cello"); !strings.Contains(out, "Sundays") {
		t.Fatalf("search in the --mcp-* scope = %q", out)
	}
	if code := s.stop(t); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, s.logs.String())
	}
}

// Over PostgreSQL (engram serve --store) the tools and the profile
// resource work the same.
func TestServe_MCPPostgres(t *testing.T) {
	env := append(baseEnv(t), "ENGRAM_STORE="+pgSchemaURL(t))
	s := startServer(t, t.TempDir(), env, "--mcp-org", "acme", "--mcp-project", "app", "--mcp-user", "ann")
	cs := connectMCP(t, &sdk.StreamableClientTransport{Endpoint: s.url + "/mcp", DisableStandaloneSSE: true})
	callMCP(t, cs, "remember", map[string]any{"fact": "Ann ist Vegetarierin.", "kind": "core"})
	if out := callMCP(t, cs, "recall", map[string]any{"query": "Vegetarierin"}); !strings.Contains(out, "Ann ist Vegetarierin.") {
		t.Fatalf("recall = %s", out)
	}
	res, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "engram://profile"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Contents[0].Text, "Ann ist Vegetarierin.") {
		t.Fatalf("profile = %s, want the core memory", res.Contents[0].Text)
	}
}

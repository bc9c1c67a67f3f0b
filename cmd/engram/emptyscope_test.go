package main_test

import (
	"strings"
	"testing"
)

// TestSearchListSayEmptyScope: a search or list that finds nothing names
// on stderr the scope it read, and says whether that scope holds nothing
// (with the flags to name another) or holds records none of which matched;
// it exits 0 and stdout stays empty, locally and through a server.
func TestSearchListSayEmptyScope(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	local := localCLI(t, dir)
	local.ok("add", "--memory", "--org", "acme", "--project", "app", "--user", "ann", "Ann joue du violoncelle.")
	srv := startServer(t, dir, local.env)
	remote := &cli{t: t, env: local.env, extra: []string{"--server", srv.url}}
	for name, c := range map[string]*cli{"local": local, "server": remote} {
		for _, args := range [][]string{{"search", "violoncelle"}, {"list"}, {"list", "--episodes"}} {
			r := c.run(append(args, "--user", "ann")...)
			if r.code != 0 || r.stdout != "" {
				t.Fatalf("%s %v: exit %d, stdout %q", name, args, r.code, r.stdout)
			}
			if !strings.Contains(r.stderr, `org default, project default, user ann`) || !strings.Contains(r.stderr, "this scope holds nothing") || !strings.Contains(r.stderr, "--org") {
				t.Errorf("%s %v in the default tenant: stderr %q", name, args, r.stderr)
			}
		}
		r := c.run("search", "Klavier", "--org", "acme", "--project", "app", "--user", "ann")
		if r.code != 0 || !strings.Contains(r.stderr, "org acme, project app, user ann") || !strings.Contains(r.stderr, "none matched") {
			t.Errorf("%s: a search matching nothing in a scope with memories: exit %d, stderr %q", name, r.code, r.stderr)
		}
		r = c.run("search", "violoncelle", "--org", "acme", "--project", "app", "--user", "ann")
		if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "violoncelle") {
			t.Errorf("%s: a search that matches: exit %d, stdout %q, stderr %q", name, r.code, r.stdout, r.stderr)
		}
	}
}

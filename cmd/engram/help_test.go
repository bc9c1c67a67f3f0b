package main_test

import (
	"strings"
	"testing"
)

// allCommands is every subcommand; help must list each one.
var allCommands = []string{
	"serve", "add", "search", "get", "list", "update", "delete", "restore", "conflicts",
	"history", "rollback", "import", "export", "version", "help",
}

// dataCommands share the flags that choose the data and the namespace.
var dataCommands = []string{
	"add", "search", "get", "list", "update", "delete", "restore", "history", "rollback", "import", "export",
}

func TestHelp(t *testing.T) {
	t.Parallel()
	c := &cli{t: t, env: baseEnv(t)}
	out := c.ok("help")
	listed := map[string]bool{}
	for _, l := range lines(out) {
		if strings.HasPrefix(l, "  ") {
			listed[strings.Fields(l)[0]] = true
		}
	}
	for _, name := range allCommands {
		if !listed[name] {
			t.Errorf("help does not list %q:\n%s", name, out)
		}
	}
	if got := c.ok("--help"); got != out {
		t.Errorf("--help differs from help")
	}
	if stderr := c.fail(2); !strings.Contains(stderr, "Commands:") || !strings.Contains(stderr, "engram: no command given") {
		t.Errorf("engram without a command: stderr %q", stderr)
	}
	if stderr := c.fail(2, "frobnicate"); !strings.Contains(stderr, `engram: unknown command "frobnicate"`) {
		t.Errorf("unknown command: stderr %q", stderr)
	}
	c.fail(2, "help", "frobnicate")

	for _, name := range allCommands {
		usage := c.ok("help", name)
		if !strings.HasPrefix(usage, "Usage: engram "+name) {
			t.Errorf("help %s does not start with its usage line:\n%s", name, usage)
		}
		if name != "help" {
			if got := c.ok(name, "-h"); got != usage {
				t.Errorf("%s -h differs from help %s", name, name)
			}
		}
	}
	for _, name := range dataCommands {
		usage := c.ok("help", name)
		for _, flag := range []string{"-data", "-server", "-org", "-project", "-user", "-agent", "-session", "-shared", "-actor"} {
			if !strings.Contains(usage, "  "+flag+" ") && !strings.Contains(usage, "  "+flag+"\n") {
				t.Errorf("help %s does not list %s", name, flag)
			}
		}
	}
	if usage := c.ok("help", "serve"); !strings.Contains(usage, "-addr") || !strings.Contains(usage, "ENGRAM_ADDR") {
		t.Errorf("help serve lacks --addr:\n%s", usage)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	c := &cli{t: t, env: baseEnv(t)}
	if out := c.ok("version"); !strings.HasPrefix(out, "engram ") || !strings.Contains(out, "go1.") {
		t.Errorf("version = %q", out)
	}
	var v struct {
		Version, Revision, Go string
		Modified              bool
	}
	c.json(&v, "version")
	if v.Version == "" || !strings.HasPrefix(v.Go, "go1.") {
		t.Errorf("version --json = %+v", v)
	}
}

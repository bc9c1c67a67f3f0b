package main_test

import (
	"strings"
	"testing"
)

// A tenant name the Mem0-compatible API could not use stops serve with a
// usage error naming the flag.
func TestServeBadMem0Tenant(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  string
		args []string
	}{
		{"", []string{"--mem0-org", "a/b"}},
		{"ENGRAM_MEM0_PROJECT= padded", nil},
	} {
		env := baseEnv(t)
		if tc.env != "" {
			env = append(env, tc.env)
		}
		c := &cli{t: t, env: env}
		stderr := c.fail(2, append([]string{"serve", "--addr", "127.0.0.1:0", "--no-auth", "--data", t.TempDir()}, tc.args...)...)
		if !strings.Contains(stderr, "--mem0-org/--mem0-project") {
			t.Errorf("%s %v: stderr = %q, want it to name --mem0-org/--mem0-project", tc.env, tc.args, stderr)
		}
	}
}

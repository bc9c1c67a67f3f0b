package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is the release version, set at build time with
// -ldflags "-X main.Version=v1.2.3". Without it the module version from the
// build information is used.
var Version = ""

var versionCommand = &Command{
	Name:     "version",
	Synopsis: "print the version",
	Usage: `
Usage: engram version [--json]

Prints the version, the source revision it was built from, if known, and
the Go version.`,
	Run: runVersion,
}

type versionInfo struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
}

func buildVersion() versionInfo {
	v := versionInfo{Version: Version, Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v.Version == "" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	return v
}

func runVersion(ctx context.Context, m *Main, cmd *Command, args []string) error {
	fs := m.flagSet(cmd)
	asJSON := fs.Bool("json", false, "print the version as JSON")
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cmdUsageErrorf(cmd, "version takes no arguments")
	}
	v := buildVersion()
	if *asJSON {
		return writeJSON(m.Stdout, v)
	}
	s := "engram " + v.Version
	if v.Revision != "" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if v.Modified {
			rev += "+modified"
		}
		s += " (" + rev + ")"
	}
	fmt.Fprintf(m.Stdout, "%s %s\n", s, v.Go)
	return nil
}

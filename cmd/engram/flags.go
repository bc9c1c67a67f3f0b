package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// flagSet returns an empty FlagSet for cmd. It prints nothing by itself:
// parse reports errors and usage, so that they go to the right stream.
func (m *Main) flagSet(cmd *Command) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args into fs and returns the positional arguments. Flags may
// come after positional arguments ("engram search QUERY -k 5") until a "--",
// after which everything is positional. On -h it prints the usage to stdout
// and returns errHelpShown; a bad flag is a *usageError.
func (m *Main) parse(cmd *Command, fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			printUsage(m.Stdout, cmd, fs)
			return nil, errHelpShown
		} else if err != nil {
			return nil, &usageError{cmd: cmd.Name, msg: err.Error()}
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

func printUsage(w io.Writer, cmd *Command, fs *flag.FlagSet) {
	fmt.Fprintln(w, strings.TrimSpace(cmd.Usage))
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	if buf.Len() > 0 {
		fmt.Fprintf(w, "\nFlags:\n%s", buf.String())
	}
}

// cmdUsageErrorf returns a usage error that points at cmd's help.
func cmdUsageErrorf(cmd *Command, format string, args ...any) error {
	return &usageError{cmd: cmd.Name, msg: fmt.Sprintf(format, args...)}
}

// flagWasSet reports whether name was given on the command line.
func flagWasSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// metaFlag is a repeatable key=value flag building a metadata map. A value
// that parses as JSON (3, true, null, "quoted", {...}) is stored as that
// JSON value, so numbers match numbers; anything else is a string.
type metaFlag map[string]any

func (m *metaFlag) String() string {
	if *m == nil {
		return ""
	}
	b, _ := json.Marshal(*m)
	return string(b)
}

func (m *metaFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not key=value", s)
	}
	if *m == nil {
		*m = map[string]any{}
	}
	(*m)[k] = parseMetaValue(v)
	return nil
}

func parseMetaValue(v string) any {
	// Unmarshal gives numbers as float64, the type they have after any
	// other JSON trip (HTTP bodies, stores), so filters compare alike.
	var x any
	if err := json.Unmarshal([]byte(v), &x); err != nil {
		return v
	}
	return x
}

// timeFlag is an optional RFC 3339 time (a bare date means midnight UTC).
type timeFlag struct{ t *time.Time }

func (f *timeFlag) String() string {
	if f == nil || f.t == nil {
		return ""
	}
	return f.t.Format(time.RFC3339Nano)
}

func (f *timeFlag) Set(s string) error {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		var derr error
		if t, derr = time.Parse(time.DateOnly, s); derr != nil {
			return fmt.Errorf("%q is not an RFC 3339 time like 2024-05-01T12:00:00Z", s)
		}
	}
	f.t = &t
	return nil
}

// parseID parses args for a command that takes exactly one id.
func (m *Main) parseID(cmd *Command, fs *flag.FlagSet, args []string) (string, error) {
	pos, err := m.parse(cmd, fs, args)
	if err != nil {
		return "", err
	}
	switch len(pos) {
	case 0:
		return "", cmdUsageErrorf(cmd, "%s needs an ID", cmd.Name)
	case 1:
		return pos[0], nil
	}
	return "", cmdUsageErrorf(cmd, "%s takes one ID, got %d arguments", cmd.Name, len(pos))
}

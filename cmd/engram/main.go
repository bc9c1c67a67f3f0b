package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/engramhq/engram"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	m := NewMain()
	err := m.Run(ctx, os.Args[1:])
	stop()
	os.Exit(m.Exit(err))
}

// Main holds the process environment a command runs in, so that the
// program's behaviour is a function of it.
type Main struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// StderrIsTerminal turns on progress bars.
	StderrIsTerminal bool
}

// NewMain returns a Main wired to the process's standard streams and
// environment.
func NewMain() *Main {
	return &Main{
		Stdin:            os.Stdin,
		Stdout:           os.Stdout,
		Stderr:           os.Stderr,
		Getenv:           os.Getenv,
		StderrIsTerminal: term.IsTerminal(int(os.Stderr.Fd())),
	}
}

// Command is one subcommand. Run parses its own flags from args (everything
// after the command name) with a FlagSet made by Main.flagSet.
type Command struct {
	Name     string
	Synopsis string // one line for the command list
	// Usage is the synopsis line(s) and a description; "engram help NAME"
	// prints it followed by the flags.
	Usage string
	// Run gets its own Command so that it can refer to it without an
	// initialization cycle.
	Run func(ctx context.Context, m *Main, cmd *Command, args []string) error
}

// commands is the command table, in the order "engram help" lists them.
// A new subcommand is one file with its Command and one line here.
var commands []*Command

func init() {
	// Assigned in init because help refers back to the table.
	commands = []*Command{
		serveCommand,
		mcpCommand,
		addCommand,
		searchCommand,
		profileCommand,
		getCommand,
		listCommand,
		updateCommand,
		deleteCommand,
		restoreCommand,
		backupCommand,
		conflictsCommand,
		historyCommand,
		rollbackCommand,
		importCommand,
		exportCommand,
		reembedCommand,
		migrateCommand,
		migrateStoreCommand,
		scrubCommand,
		fulltextCommand,
		keysCommand,
		jobsCommand,
		entitiesCommand,
		communitiesCommand,
		vaultCommand,
		sensitiveCommand,
		scanCommand,
		resourcesCommand,
		identitiesCommand,
		evalCommand,
		versionCommand,
		helpCommand,
	}
}

func lookupCommand(name string) *Command {
	for _, c := range commands {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Run runs the command named by args[0]. It returns nil after "-h", a
// *usageError for bad command lines, and the command's error otherwise.
func (m *Main) Run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		m.printCommandList(m.Stderr)
		return usageErrorf("no command given")
	}
	name, args := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help":
		m.printCommandList(m.Stdout)
		return nil
	case "-v", "-version", "--version":
		name = "version"
	}
	cmd := lookupCommand(name)
	if cmd == nil {
		return usageErrorf("unknown command %q; run 'engram help' for the list", name)
	}
	err := cmd.Run(ctx, m, cmd, args)
	if errors.Is(err, errHelpShown) {
		return nil
	}
	return err
}

// Exit prints err, if any, as "engram: <sentence>" on stderr and returns the
// process exit code: 0 for nil, 2 for a usage error, 1 for anything else.
func (m *Main) Exit(err error) int {
	if err == nil {
		return 0
	}
	var code exitCode
	if errors.As(err, &code) {
		return int(code) // the command has said why
	}
	fmt.Fprintf(m.Stderr, "engram: %s\n", errorSentence(err))
	var uerr *usageError
	if errors.As(err, &uerr) {
		if uerr.cmd != "" {
			fmt.Fprintf(m.Stderr, "Run 'engram help %s' for usage.\n", uerr.cmd)
		}
		return 2
	}
	return 1
}

// errorSentence is what the user sees for err. A coded *engram.Error shows
// its message, which is the same sentence the HTTP API answers with; any
// other error comes from this process (a file that cannot be read, a store
// that cannot be opened) and is shown in full because there is no remote
// party whose internals it could leak.
func errorSentence(err error) string {
	var e *engram.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// usageError is a bad command line: exit code 2.
type usageError struct {
	cmd string // the command whose help to point at, or ""
	msg string
}

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errHelpShown reports that a command printed its usage because of -h.
var errHelpShown = errors.New("help shown")

// exitCode ends the program with that status and no further message: the
// command has already explained itself.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

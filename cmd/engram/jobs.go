package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/engramhq/engram"
)

var jobsCommand = &Command{
	Name:     "jobs",
	Synopsis: "list and show the background jobs of asynchronous adds",
	Usage: `
Usage: engram jobs list [flags]
       engram jobs get [flags] ID

An asynchronous add (engram add --async, or POST /v1/episodes with
"async": true) stores the episodes at once with a job that forms their
memories in the background; engram serve runs the jobs (--workers).

list prints the jobs of the scope, newest first, one per line (id, state,
attempts, episodes, last error); --state keeps jobs in that state (queued,
running, retrying, done, failed; repeatable). get prints one job. Both work on the
data directory, --store or, with --server, a running server.`,
	Run: runJobs,
}

func runJobs(ctx context.Context, m *Main, cmd *Command, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		if len(args) > 0 {
			fmt.Fprintln(m.Stdout, cmd.Usage[1:])
			return nil
		}
		return cmdUsageErrorf(cmd, "jobs needs a subcommand: list or get")
	}
	switch args[0] {
	case "list":
		return runJobsList(ctx, m, cmd, args[1:])
	case "get":
		return runJobsGet(ctx, m, cmd, args[1:])
	}
	return cmdUsageErrorf(cmd, "unknown jobs subcommand %q; it is one of list, get", args[0])
}

// jobLine is the one-line form of a job: ID KIND STATE ATTEMPTS, the
// count of its episodes or memories, ERROR.
func jobLine(j *engram.Job) string {
	line := fmt.Sprintf("%s  %-5s %-8s attempts %d  %s", j.ID, jobKind(j), j.State, j.Attempts, jobItems(j))
	if j.LastError != "" {
		line += "  error: " + oneLine(j.LastError, summaryLen)
	}
	return line
}

// printJob prints a job field by field.
func printJob(m *Main, j *engram.Job) {
	fmt.Fprintf(m.Stdout, "id          %s\n", j.ID)
	fmt.Fprintf(m.Stdout, "state       %s\n", j.State)
	fmt.Fprintf(m.Stdout, "attempts    %d\n", j.Attempts)
	fmt.Fprintf(m.Stdout, "kind        %s\n", jobKind(j))
	if j.Kind == engram.JobEmbed {
		fmt.Fprintf(m.Stdout, "memories    %s\n", strings.Join(j.Memories, " "))
	} else {
		fmt.Fprintf(m.Stdout, "episodes    %s\n", strings.Join(j.Episodes, " "))
	}
	if j.LastError != "" {
		fmt.Fprintf(m.Stdout, "last error  %s\n", j.LastError)
	}
	if j.State == engram.JobRetrying {
		fmt.Fprintf(m.Stdout, "retry at    %s\n", formatTime(j.RunAfter))
	}
	if j.LeaseUntil != nil {
		fmt.Fprintf(m.Stdout, "lease       %s until %s\n", j.LeaseOwner, formatTime(*j.LeaseUntil))
	}
	fmt.Fprintf(m.Stdout, "created     %s\n", formatTime(j.CreatedAt))
	fmt.Fprintf(m.Stdout, "updated     %s\n", formatTime(j.UpdatedAt))
}

// jobKind is j's kind, form when a store too old to know kinds left it
// empty.
func jobKind(j *engram.Job) engram.JobKind {
	if j.Kind == "" {
		return engram.JobForm
	}
	return j.Kind
}

// jobItems counts what j works on: "episodes N" or "memories N".
func jobItems(j *engram.Job) string {
	if j.Kind == engram.JobEmbed {
		return fmt.Sprintf("memories %d", len(j.Memories))
	}
	return fmt.Sprintf("episodes %d", len(j.Episodes))
}

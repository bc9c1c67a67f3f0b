// Command engram is the command-line interface of the engram memory engine.
//
// "engram serve" serves the HTTP API over a data directory. Every other data
// command works either on a local data directory, opening the engine in
// this process (--data, ENGRAM_DATA), or on a server through the HTTP
// client (--server, ENGRAM_SERVER); both are an engram.Service, so the
// output is the same either way. Flags beat ENGRAM_* variables, which beat
// the built-in defaults.
//
// Errors are printed as "engram: <sentence>" on stderr, where the sentence
// of a coded engram.Error is its message, the same the HTTP API answers
// with. The exit code is 2 for a bad command line and 1 for any other
// failure.
//
// Each subcommand is one file holding a Command with its own FlagSet; the
// table in main.go lists them. To add a subcommand, write its file and add
// its Command to the table.
package main

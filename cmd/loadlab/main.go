// Command loadlab is a load generator and a reverse-proxy lab in one binary.
//
// Subcommands map to packages: gen (gen/), serve (lab/backend), lab and
// report (lab/), certs (certs/), pin (pin/), merge (gen/result), compare
// (lab/compare), k8s (k8s/ and image/), and two hidden ones the lab starts
// itself (the exec wrapper of lab/proc, the reaper of lab/cleanup). Each
// subcommand lives in its own file as a constructor (newGenCmd, ...);
// newRootCmd builds the whole tree, so every run (and every test) starts
// from fresh flags.
//
// It owns the command line: the subcommands, their flags and help, exit
// statuses and the words of usage errors. Imports run cmd -> lab -> gen ->
// pin (certs, k8s, image and internal/ beside them): this package is at the
// top, may import every library package, and no package may import it.
// Of the lab it imports package lab (the lab's entry point), lab/backend
// (serve) and lab/compare (compare) only.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/loadlab/loadlab/lab"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes the CLI with args on the process's standard output and
// error and returns the exit status.
func run(args []string) int { return execute(args, os.Stdout, os.Stderr) }

// execute runs a fresh command tree with args, writing to stdout and
// stderr, and returns the process exit status.
func execute(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "loadlab:", genWords(ee.err))
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "loadlab:", genWords(err))
	var ue usageError
	var le lab.UsageError
	if errors.As(err, &ue) || errors.As(err, &le) || isCobraUsage(err) {
		return exitUsage
	}
	return exitRunError
}

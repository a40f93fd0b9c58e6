package main

import (
	"bytes"
	"github.com/loadlab/loadlab/internal/testutil"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// asCLI, set in the environment of a re-executed test binary, makes it run
// the loadlab CLI with its arguments instead of the tests: the tests get a
// real loadlab process (signals, exit status, its own memory) without a
// separate build step.
const asCLI = "LOADLAB_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) == "1" || startedByLab() {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// startedByLab reports whether the lab started this test binary as its
// own loadlab (Options.Self, /proc/self/exe): the exec wrapper, the
// reaper or `serve` as the backend, in the minimal environment the lab
// gives what it starts (no asCLI there). go test passes -test.* flags
// first; the lab passes a subcommand.
func startedByLab() bool {
	return len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-test.")
}

// cliCommand returns a command that runs loadlab with args in a child
// process (this test binary, re-executed).
func cliCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), asCLI+"=1")
	return cmd
}

// captureRun runs the CLI in this process (a fresh command tree) with sub
// and args and returns the exit status and what it wrote to standard
// error.
func captureRun(t *testing.T, sub string, args ...string) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	code := execute(append([]string{sub}, args...), io.Discard, &stderr)
	return code, stderr.String()
}

// freePort returns a loopback TCP port where nothing listens for the rest
// of the test (testutil.RefusedPort).
func freePort(t *testing.T) int {
	t.Helper()
	return testutil.RefusedPort(t)
}

// startHTTPServer starts a keep-alive HTTP/1.1 server on 127.0.0.1 that
// answers every GET with the same bytes (internal/testutil: one goroutine
// and a 512-byte buffer per connection, so it holds 10,000 connections
// cheaply).
func startHTTPServer(t *testing.T, resp string) *testutil.Server {
	t.Helper()
	return testutil.StartServer(t, testutil.Reply(resp))
}

package main

import (
	"bytes"
	"io"
	"testing"
)

// pincertsRun runs the CLI (a fresh command tree) with sub and args and
// returns the exit status and standard output; standard error is dropped.
func pincertsRun(t *testing.T, sub string, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := execute(append([]string{sub}, args...), &out, io.Discard)
	return code, out.String()
}

package main

import (
	"bytes"
	"testing"
)

// pincertsRun runs the CLI with args after resetting every flag of the
// named subcommand (cobra keeps flag values between runs in one process)
// and returns the exit status and standard output.
func pincertsRun(t *testing.T, sub string, args ...string) (int, string) {
	t.Helper()
	cmd, _, err := rootCmd.Find([]string{sub})
	if err != nil || cmd == rootCmd {
		t.Fatalf("no %q subcommand: %v", sub, err)
	}
	resetFlags(cmd)
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	defer rootCmd.SetOut(nil)
	code := run(append([]string{sub}, args...))
	return code, out.String()
}

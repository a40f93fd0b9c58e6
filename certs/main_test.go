package certs

import (
	"fmt"
	"os"
	"testing"
)

// shared is one directory with every key type, generated once per test
// binary because RSA 4096 keys take seconds. Tests must not modify it;
// tests that change files work on a copy or a fresh P-256-only directory.
var (
	sharedDir    string
	sharedResult *Result
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "loadlab-certs-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedDir = dir + "/certs" // not yet existing: Ensure must create it 0700
	sharedResult, err = EnsureResult(Options{Dir: sharedDir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

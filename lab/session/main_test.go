package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"

	"github.com/loadlab/loadlab/certs"
)

// testRoot is a world-traversable temporary directory for the whole test
// binary: the proxy user must reach run directories under it (t.TempDir's
// parents are 0700). The certificates live in testRoot/certs, made once
// (RSA-4096 included) and reused by every Session.
var testRoot string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		root, err := os.MkdirTemp("", "labenv-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(root)
		if err := os.Chmod(root, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		testRoot = root
		return m.Run()
	}())
}

// loadlabBinary is cmd/loadlab built once into testRoot: the backend
// (`loadlab serve`) and the exec wrapper must be the real CLI.
func loadlabBinary(t *testing.T) string {
	t.Helper()
	return testutil.BuildLoadlab(t, testRoot)
}

// needRoot skips tests that need root (cgroups, namespaces, users).
var needRoot = testutil.NeedRoot

// realLab skips under -short and without root: these tests start real
// processes.
func realLab(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the backend and real proxies (skipped with -short)")
	}
	needRoot(t)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// openSession opens a Session for the test in testRoot, with the shared
// certificates and the built loadlab, and closes it at the end, failing
// the test if Close fails.
func openSession(t *testing.T, o Options) *Session {
	t.Helper()
	if o.Dir == "" {
		o.Dir = filepath.Join(testRoot, unsafeName.ReplaceAllString(t.Name(), "_"))
	}
	if o.CertDir == "" {
		o.CertDir = filepath.Join(testRoot, "certs")
	}
	if o.Self == "" {
		o.Self = loadlabBinary(t)
	}
	if len(o.Keys) == 0 {
		o.Keys = []certs.KeyType{certs.P256}
	}
	if o.Log == nil {
		o.Log = testutil.LogWriter{T: t}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := Open(ctx, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

package env

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
)

// testRoot is a world-traversable temporary directory for the whole test
// binary: the proxy user must reach run directories under it (t.TempDir's
// parents are 0700). The certificates live in testRoot/certs, made once
// (RSA-4096 included) and reused by every Env.
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

var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
)

// loadlabBinary builds cmd/loadlab once per test binary: the backend
// (`loadlab serve`) and the exec wrapper must be the real CLI, and
// /proc/self/exe is this test binary.
func loadlabBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		bin := filepath.Join(testRoot, "loadlab")
		cmd := exec.Command(goTool, "build", "-o", bin, "./cmd/loadlab")
		cmd.Dir = moduleRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/loadlab: %v\n%s", err, out)
			return
		}
		buildBin = bin
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

// moduleRoot is the directory of go.mod above this package.
func moduleRoot() string {
	wd, _ := os.Getwd()
	for d := wd; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return wd
}

// needRoot skips tests that need root (cgroups, namespaces, users).
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (cgroups, network namespaces, the proxy user)")
	}
}

// realLab skips under -short and without root: these tests start real
// processes.
func realLab(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the backend and real proxies (skipped with -short)")
	}
	needRoot(t)
}

// logWriter sends an Env's progress lines to t.Log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// openEnv opens an Env for the test in testRoot, with the shared
// certificates and the built loadlab, and closes it at the end, failing
// the test if Close fails.
func openEnv(t *testing.T, o Options) *Env {
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
		o.Log = logWriter{t}
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

package findbin

import (
	"errors"
	"github.com/loadlab/loadlab/internal/testutil"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var writeExe = testutil.WriteExe

func TestFindBinaryPrefersEnvDirs(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	writeExe(t, filepath.Join(b, "loadlab-test-proxy"), "#!/bin/sh\n")
	os.WriteFile(filepath.Join(a, "loadlab-test-proxy"), []byte("not executable"), 0o644)
	t.Setenv(BinEnv, a+string(os.PathListSeparator)+b)
	got, err := FindBinary("loadlab-test-proxy")
	if err != nil || got != filepath.Join(b, "loadlab-test-proxy") {
		t.Fatalf("FindBinary = %q, %v; want the executable in %s", got, err, b)
	}
}

func TestFindBinaryNotFound(t *testing.T) {
	t.Setenv(BinEnv, t.TempDir())
	_, err := FindBinary("loadlab-no-such-proxy")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "install-proxies.sh") {
		t.Fatalf("err = %v, want ErrNotFound with an install hint", err)
	}
}

func TestProjectRootAndCacheBin(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module "+ModulePath+"\n\ngo 1.26\n"), 0o644)
	deep := filepath.Join(root, "lab", "proxy")
	os.MkdirAll(deep, 0o755)
	if got := projectRoot(deep); got != root {
		t.Fatalf("projectRoot(%s) = %q, want %s", deep, got, root)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644)
	if got := projectRoot(other); got != "" {
		t.Fatalf("projectRoot accepted a go.mod of another module")
	}

	writeExe(t, filepath.Join(root, ".cache", "bin", "loadlab-test-proxy"), "#!/bin/sh\n")
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(deep); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinEnv, "")
	got, err := FindBinary("loadlab-test-proxy")
	if err != nil || got != filepath.Join(root, ".cache", "bin", "loadlab-test-proxy") {
		t.Fatalf("FindBinary from %s = %q, %v; want the project's .cache/bin", deep, got, err)
	}
}

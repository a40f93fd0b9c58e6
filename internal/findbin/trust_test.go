package findbin

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// needRoot skips a test that hands files to another uid.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test chowns files to another uid")
	}
}

// TestFindBinaryRefusesUntrustedCacheBin plants the project's .cache/bin
// binary three ways: root-owned and closed (found), owned by another uid,
// and group-writable (both refused, naming the file and the reason).
func TestFindBinaryRefusesUntrustedCacheBin(t *testing.T) {
	needRoot(t)
	t.Setenv("SUDO_UID", "")
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "go.mod"), []byte("module "+ModulePath+"\n"), 0o644)
	exe := filepath.Join(root, ".cache", "bin", "loadlab-test-proxy")
	writeExe(t, exe, "#!/bin/sh\n")
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(root); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinEnv, "")

	if got, err := FindBinary("loadlab-test-proxy"); err != nil || got != exe {
		t.Fatalf("root-owned 0755: FindBinary = %q, %v; want %s", got, err, exe)
	}

	if err := os.Chown(exe, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	_, err := FindBinary("loadlab-test-proxy")
	if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), exe) || !strings.Contains(err.Error(), "uid 4242") {
		t.Fatalf("owned by uid 4242: err = %v, want ErrUntrusted naming %s and the uid", err, exe)
	}

	os.Chown(exe, 0, 0)
	os.Chmod(exe, 0o775)
	_, err = FindBinary("loadlab-test-proxy")
	if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "writable by its group") {
		t.Fatalf("group-writable: err = %v, want ErrUntrusted saying why", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("error is not one line: %q", err)
	}
}

// TestTrusted covers the directory, the invoking user and links.
func TestTrusted(t *testing.T) {
	needRoot(t)
	dir := filepath.Join(t.TempDir(), "bin")
	exe := filepath.Join(dir, "prog")
	writeExe(t, exe, "#!/bin/sh\n")
	if err := Trusted(exe); err != nil {
		t.Fatalf("root-owned: %v", err)
	}

	// Owned by the user sudo ran us for: trusted.
	os.Chown(exe, 4243, 4243)
	t.Setenv("SUDO_UID", "4243")
	if err := Trusted(exe); err != nil {
		t.Fatalf("owned by $SUDO_UID: %v", err)
	}
	t.Setenv("SUDO_UID", "")
	if err := Trusted(exe); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("owned by uid 4243 without sudo: err = %v, want ErrUntrusted", err)
	}
	os.Chown(exe, 0, 0)

	// A world-writable directory lets anyone replace the file.
	os.Chmod(dir, 0o777)
	if err := Trusted(exe); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "its directory") {
		t.Fatalf("world-writable directory: err = %v, want ErrUntrusted naming the directory", err)
	}
	os.Chmod(dir, 0o755)

	// A link is judged by its target.
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(exe, link)
	if err := Trusted(link); err != nil {
		t.Fatalf("link to a trusted file: %v", err)
	}
	os.Chown(exe, 4244, 4244)
	if err := Trusted(link); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), exe) {
		t.Fatalf("link to uid 4244's file: err = %v, want ErrUntrusted naming the target", err)
	}
}

// SystemTool finds a name in the system directories only: a program of
// the same name in PATH's first directory or the working directory is
// not run.
func TestSystemToolIgnoresPath(t *testing.T) {
	planted := t.TempDir()
	writeExe(t, filepath.Join(planted, "sh"), "#!/bin/sh\n")
	t.Setenv("PATH", planted+string(os.PathListSeparator)+os.Getenv("PATH"))
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(planted); err != nil {
		t.Fatal(err)
	}
	got, err := SystemTool("sh")
	if err != nil || strings.HasPrefix(got, planted) || !slices.Contains(systemDirs, filepath.Dir(got)) {
		t.Fatalf("SystemTool(sh) = %q, %v; want the system's sh", got, err)
	}
	for _, bad := range []string{"no-such-tool-ll", "./sh", ""} {
		if _, err := SystemTool(bad); !errors.Is(err, ErrNotFound) {
			t.Errorf("SystemTool(%q): err = %v, want ErrNotFound", bad, err)
		}
	}
}

// Environ passes PATH, HOME and LANG and what extra names, nothing else.
func TestEnviron(t *testing.T) {
	t.Setenv("LOADLAB_CANARY", "x")
	got := Environ("", []string{"HOME=/srv/p", "XDG_DATA_HOME=/srv/p/data"})
	want := []string{"PATH=" + SystemPath, "LANG=C", "HOME=/srv/p", "XDG_DATA_HOME=/srv/p/data"}
	if !slices.Equal(got, want) {
		t.Fatalf("Environ = %q, want %q", got, want)
	}
	if got := Environ("/run/x", nil); !slices.Contains(got, "HOME=/run/x") || len(got) != 3 {
		t.Fatalf("Environ(/run/x) = %q", got)
	}
}

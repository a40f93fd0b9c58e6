package findbin

import (
	"errors"
	"os"
	"path/filepath"
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

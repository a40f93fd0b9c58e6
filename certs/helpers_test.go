package certs

import (
	"crypto/x509"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fileState is what a file looked like: bytes, mode and mtime.
type fileState struct {
	data  string
	mode  fs.FileMode
	mtime time.Time
}

// snapshot records every regular file and directory under dir.
func snapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		fsd := fileState{mode: st.Mode(), mtime: st.ModTime()}
		if !d.IsDir() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			fsd.data = string(b)
		}
		out[path] = fsd
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mustCert parses the first certificate of a PEM file.
func mustCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	c, _, err := readCert(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mustEnsure runs EnsureResult or fails the test.
func mustEnsure(t *testing.T, o Options) *Result {
	t.Helper()
	r, err := EnsureResult(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// at returns a clock fixed at now+d.
func at(d time.Duration) func() time.Time {
	now := time.Now().Add(d)
	return func() time.Time { return now }
}

// copyDir copies the regular files of src (recursively) into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(target, st.Mode().Perm())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, st.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

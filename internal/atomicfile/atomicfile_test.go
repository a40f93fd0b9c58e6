package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile replaces the content whole, with the permissions asked for;
// an aborted write, or one whose bytes failed, leaves the old content and
// no temporary file.
func TestWriteFileAndAbort(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := WriteFile(p, []byte("one"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Fatalf("content %q", b)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	a, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("three"))
	a.Abort()
	b, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	b.f.Close() // the next write fails
	if _, err := b.Write([]byte("four")); err == nil {
		t.Fatal("a write to a closed file succeeded")
	}
	if err := b.Commit(); err == nil {
		t.Fatal("Commit after a failed write succeeded")
	}
	if got, _ := os.ReadFile(p); string(got) != "two" {
		t.Fatalf("after an abort and a failed write: %q, want two", got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".f.*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// WriteFile syncs the directory after the rename, once: the new name is
// what a crash leaves on disk (results.json, the lab's reports, gen's
// --json).
func TestWriteFileSyncsDirectoryAfterRename(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "results.json")
	var synced []string
	old := syncDir
	t.Cleanup(func() { syncDir = old })
	syncDir = func(d string) error {
		if b, err := os.ReadFile(p); err != nil || string(b) != "new" {
			t.Errorf("directory synced before the rename: %q, %v", b, err)
		}
		synced = append(synced, d)
		return old(d)
	}
	if err := WriteFile(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 1 || synced[0] != dir {
		t.Fatalf("directories synced: %q, want [%s]", synced, dir)
	}
}

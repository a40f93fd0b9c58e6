package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"
)

// needRoot skips a test that hands files to another uid.
var needRoot = testutil.NeedRoot

// owner returns path's uid (not following a link).
func owner(t *testing.T, path string) uint32 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Uid
}

// OpenAppend appends to a regular file and creates a missing one, and
// refuses a symbolic link, a second hard link and a FIFO (without
// blocking on it), leaving what they point at unchanged.
func TestOpenAppend(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "shadow")
	if err := os.WriteFile(target, []byte("root's secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "proxy.log")
	f, err := OpenAppend(log, 0o644)
	if err != nil {
		t.Fatalf("a missing log: %v", err)
	}
	f.WriteString("one\n")
	f.Close()
	if f, err = OpenAppend(log, 0o644); err != nil {
		t.Fatalf("an existing log: %v", err)
	}
	f.WriteString("two\n")
	f.Close()
	if b, _ := os.ReadFile(log); string(b) != "one\ntwo\n" {
		t.Fatalf("log holds %q", b)
	}

	link := filepath.Join(dir, "link.log")
	os.Symlink(target, link)
	hard := filepath.Join(dir, "hard.log")
	if err := os.Link(target, hard); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.log")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{{link, "symbolic link"}, {hard, "2 links"}, {fifo, "not a regular file"}} {
		done := make(chan error, 1)
		go func() {
			f, err := OpenAppend(c.path, 0o644)
			if err == nil {
				f.WriteString("appended by root\n")
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
				t.Errorf("%s: err = %v, want ErrUnsafe naming it and %q", c.path, err, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: OpenAppend blocked", c.path)
		}
		if _, err := OpenRead(c.path); !errors.Is(err, ErrUnsafe) {
			t.Errorf("OpenRead(%s) = %v, want ErrUnsafe", c.path, err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "root's secret\n" {
		t.Fatalf("the target was changed: %q", b)
	}
}

// OwnDir refuses a directory another uid owns and a link in its place,
// and sets its own directory's group and mode.
func TestOwnDir(t *testing.T) {
	needRoot(t)
	base := t.TempDir()
	dir := filepath.Join(base, "run")
	if err := OwnDir(dir, 4250, 0o710); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(dir)
	if st := fi.Sys().(*syscall.Stat_t); fi.Mode().Perm() != 0o710 || st.Gid != 4250 || st.Uid != 0 {
		t.Fatalf("run dir: mode %04o owner %d:%d", fi.Mode().Perm(), st.Uid, st.Gid)
	}

	theirs := filepath.Join(base, "theirs")
	os.Mkdir(theirs, 0o777)
	os.Chmod(theirs, 0o777)
	os.Chown(theirs, 4251, 4251)
	err := OwnDir(theirs, 4250, 0o710)
	if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "uid 4251") {
		t.Fatalf("another uid's directory: err = %v", err)
	}
	if fi, _ := os.Stat(theirs); fi.Mode().Perm() != 0o777 || fi.Sys().(*syscall.Stat_t).Gid != 4251 {
		t.Fatalf("refused directory changed: %04o", fi.Mode().Perm())
	}

	victim := filepath.Join(base, "victim")
	os.Mkdir(victim, 0o755)
	link := filepath.Join(base, "link")
	os.Symlink(victim, link)
	if err := OwnDir(link, 4250, 0o710); !errors.Is(err, ErrUnsafe) {
		t.Fatalf("a link: err = %v", err)
	}
	if fi, _ := os.Stat(victim); fi.Mode().Perm() != 0o755 || fi.Sys().(*syscall.Stat_t).Gid != 0 {
		t.Fatalf("the link's target changed: %04o", fi.Mode().Perm())
	}
}

// ChownTree gives a tree away children first and follows no link in it:
// a root-owned file a link in the tree points at stays root's.
func TestChownTree(t *testing.T) {
	needRoot(t)
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	os.WriteFile(outside, []byte("x"), 0o600)
	outDir := filepath.Join(base, "outdir")
	os.Mkdir(outDir, 0o700)
	tree := filepath.Join(base, "tree")
	os.MkdirAll(filepath.Join(tree, "docroot", "deep"), 0o700)
	os.WriteFile(filepath.Join(tree, "docroot", "deep", "1k"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(tree, "key.pem"), []byte("x"), 0o600)
	os.Symlink(outside, filepath.Join(tree, "docroot", "to-file"))
	os.Symlink(outDir, filepath.Join(tree, "to-dir"))
	if err := ChownTree(tree, 4252, 4252); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{tree, filepath.Join(tree, "docroot"), filepath.Join(tree, "docroot", "deep", "1k"), filepath.Join(tree, "key.pem"), filepath.Join(tree, "to-dir")} {
		if u := owner(t, p); u != 4252 {
			t.Errorf("%s owned by %d, want 4252", p, u)
		}
	}
	if owner(t, outside) != 0 || owner(t, outDir) != 0 {
		t.Fatalf("ChownTree followed a link out of the tree: %d %d", owner(t, outside), owner(t, outDir))
	}
	if err := ChownTree(filepath.Join(tree, "to-dir"), 4252, 4252); err == nil {
		t.Fatal("ChownTree of a link to a directory went through it")
	}
}

// CheckDirs accepts root's directories and sticky /tmp-like ones, and
// refuses a path through another uid's directory, a group-writable one
// or another uid's link.
func TestCheckDirs(t *testing.T) {
	needRoot(t)
	t.Setenv("SUDO_UID", "")
	base := t.TempDir()
	if err := CheckDirs(filepath.Join(base, "a", "b")); err != nil {
		t.Fatalf("under root's temporary directory: %v", err)
	}
	sticky := filepath.Join(base, "sticky")
	os.Mkdir(sticky, 0o777)
	os.Chmod(sticky, 0o777|os.ModeSticky)
	if err := CheckDirs(filepath.Join(sticky, "run")); err != nil {
		t.Fatalf("under a sticky root directory: %v", err)
	}
	theirs := filepath.Join(sticky, "theirs")
	os.Mkdir(theirs, 0o755)
	os.Chown(theirs, 4253, 4253)
	if err := CheckDirs(filepath.Join(theirs, "results", "lab")); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), theirs+" is owned by uid 4253") {
		t.Fatalf("under uid 4253's directory: %v", err)
	}
	grp := filepath.Join(base, "grp")
	os.Mkdir(grp, 0o775)
	os.Chmod(grp, 0o775)
	if err := CheckDirs(filepath.Join(grp, "run")); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "writable by its group") {
		t.Fatalf("under a group-writable directory: %v", err)
	}
	own := filepath.Join(base, "own")
	os.Mkdir(own, 0o755)
	link := filepath.Join(sticky, "link")
	os.Symlink(own, link)
	if err := CheckDirs(filepath.Join(link, "run")); err != nil {
		t.Fatalf("through root's link: %v", err)
	}
	if err := os.Lchown(link, 4253, 4253); err != nil {
		t.Fatal(err)
	}
	if err := CheckDirs(filepath.Join(link, "run")); !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), "link owned by uid 4253") {
		t.Fatalf("through uid 4253's link: %v", err)
	}
}

package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/internal/findbin"
	"github.com/loadlab/loadlab/internal/safefs"
	"github.com/loadlab/loadlab/internal/testutil"
)

// A log that is a symbolic link (the proxy's user planted it in the
// directory it owns) is refused before anything starts, and the file it
// points at, root's, is not appended to.
func TestStartRefusesLinkedLog(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "root-owned")
	if err := os.WriteFile(target, []byte("root's file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "proxy.log")
	if err := os.Symlink(target, log); err != nil {
		t.Fatal(err)
	}
	p, err := Start(Spec{Path: os.Args[0], Env: []string{"LOADLAB_TEST_HELPER=sleep"}, Stdout: log, Stderr: log})
	if err == nil {
		p.Stop(0)
		t.Fatal("started with its log a symbolic link to root's file")
	}
	if !errors.Is(err, safefs.ErrUnsafe) || !strings.Contains(err.Error(), log) || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("err = %v, want ErrUnsafe naming %s as a link", err, log)
	}
	if b, _ := os.ReadFile(target); string(b) != "root's file\n" {
		t.Fatalf("the link's target was written: %q", b)
	}
}

// A started program has no_new_privs set and sees only the minimal
// environment and what its Spec adds: nothing else of ours.
func TestStartNoNewPrivsMinimalEnv(t *testing.T) {
	t.Setenv("LOADLAB_CANARY", "root's environment")
	dir := t.TempDir()
	log := filepath.Join(dir, "out.log")
	p := startT(t, Spec{Path: os.Args[0], Dir: dir, Env: []string{"LOADLAB_TEST_HELPER=sleep"}, Stdout: log, Stderr: log})
	waitLine(t, log, "ready")
	if got := statusField(t, p.PID(), "NoNewPrivs"); got != "1" {
		t.Errorf("NoNewPrivs = %q, want 1", got)
	}
	env := testutil.ProcEnviron(t, p.PID())
	slices.Sort(env)
	want := []string{"HOME=" + dir, "LANG=C", "LOADLAB_TEST_HELPER=sleep", "PATH=" + findbin.SystemPath}
	if !slices.Equal(env, want) {
		t.Fatalf("environ = %q, want %q", env, want)
	}
}

// A program name is looked up in the system directories, not PATH or
// the working directory; a program another uid owns is refused.
func TestStartRunsOnlyTrustedPrograms(t *testing.T) {
	testutil.NeedRoot(t)
	t.Setenv("SUDO_UID", "")
	planted := t.TempDir()
	testutil.WriteExe(t, filepath.Join(planted, "sleep"), "#!/bin/sh\nexec /bin/sleep 60\n")
	t.Setenv("PATH", planted+string(os.PathListSeparator)+os.Getenv("PATH"))
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(planted); err != nil {
		t.Fatal(err)
	}
	p := startT(t, Spec{Path: "sleep", Args: []string{"30"}})
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.PID()))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(exe, planted) || !strings.HasSuffix(exe, "/sleep") {
		t.Fatalf("Start(\"sleep\") ran %s, want the system's sleep", exe)
	}

	theirs := filepath.Join(t.TempDir(), "proxy")
	testutil.WriteExe(t, theirs, "#!/bin/sh\nsleep 60\n")
	if err := os.Chown(theirs, 4260, 4260); err != nil {
		t.Fatal(err)
	}
	if p, err := Start(Spec{Path: theirs}); !errors.Is(err, findbin.ErrUntrusted) || !strings.Contains(err.Error(), "uid 4260") {
		if err == nil {
			p.Stop(0)
		}
		t.Fatalf("uid 4260's program: err = %v, want ErrUntrusted", err)
	}
	if p, err := Start(Spec{Path: os.Args[0], Env: []string{"LOADLAB_TEST_HELPER=sleep"}, Wrapper: theirs}); !errors.Is(err, findbin.ErrUntrusted) {
		if err == nil {
			p.Stop(0)
		}
		t.Fatalf("uid 4260's wrapper: err = %v, want ErrUntrusted", err)
	}
}

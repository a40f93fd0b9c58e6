package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// oldResult is what an earlier run left at the output paths.
const oldResult = "the result of an earlier run\n"

// plant writes oldResult to dir/name and returns the path.
func plant(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(oldResult), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A --json write that fails (the file size limit, RLIMIT_FSIZE, is 1 KiB:
// the result is larger) ends gen with a one-line error and leaves the
// earlier result whole, with no temporary file beside it. The old writer
// truncated the file first and left 1 KiB of the new result in it.
func TestGenJSONFailedWriteKeepsOld(t *testing.T) {
	srv := startBackend(t)
	dir := t.TempDir()
	out := plant(t, dir, "r.json")
	args := []string{"-c", `ulimit -f 2 && exec "$0" "$@"`}
	args = append(args, cliCommand(t).Path, "gen", "-q", "-c", "2", "-d", "300ms", "--json", out, "http://"+srv.Addr()+"/1k")
	cmd := cliCommand(t)
	cmd.Path, cmd.Args = "/bin/sh", append([]string{"sh"}, args...)
	b, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("gen with a 1 KiB file size limit succeeded: %s", b)
	}
	if got, _ := os.ReadFile(out); string(got) != oldResult {
		t.Fatalf("after a failed write %s holds %q..., want the earlier result", out, firstBytes(got))
	}
	t.Logf("gen: %s", b)
	if msg := strings.TrimSpace(string(b)); strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "r.json") {
		t.Errorf("gen said %q, want one line naming the file", msg)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".r.json.*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// gen killed (SIGKILL) while its --hdr-log is being written leaves the
// earlier log whole: the old writer had already truncated it and written
// the seconds so far.
func TestGenHdrLogInterruptedKeepsOld(t *testing.T) {
	srv := startBackend(t)
	dir := t.TempDir()
	out := plant(t, dir, "r.hlog")
	cmd := cliCommand(t, "gen", "-q", "-c", "2", "-d", "20s", "--hdr-log", out, "http://"+srv.Addr()+"/1k")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until a few seconds of the log were written, wherever they go.
	deadline := time.Now().Add(15 * time.Second)
	for {
		tmps, _ := filepath.Glob(filepath.Join(dir, ".r.hlog.*"))
		written := 0
		for _, p := range append(tmps, out) {
			if st, err := os.Stat(p); err == nil && p != out {
				written += int(st.Size())
			}
		}
		if got, _ := os.ReadFile(out); string(got) != oldResult {
			written += len(got)
		}
		if written > 200 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("gen wrote no log in 15 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if got, _ := os.ReadFile(out); string(got) != oldResult {
		t.Fatalf("gen killed mid-run: %s holds %q..., want the earlier log", out, firstBytes(got))
	}
}

func firstBytes(b []byte) []byte { return b[:min(len(b), 60)] }

package main

import (
	"github.com/loadlab/loadlab/internal/testutil"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/lab/proc"
)

// The built loadlab binary works as lab/proc's wrapper.
func TestExecWrapperSubcommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := testutil.BuildLoadlab(t, dir)
	log := filepath.Join(dir, "out.log")
	p, err := proc.Start(proc.Spec{Path: "sh", Args: []string{"-c", "echo pinned $(grep Cpus_allowed_list /proc/self/status)"}, CPUs: "0", Stdout: log, Wrapper: bin})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	_ = p.Stop(time.Second)
	b, _ := os.ReadFile(log)
	if got := strings.TrimSpace(string(b)); got != "pinned Cpus_allowed_list: 0" {
		t.Errorf("program printed %q", got)
	}
	// A failure before exec comes back as Start's error.
	_, err = proc.Start(proc.Spec{Path: "/nonexistent/prog", Wrapper: bin})
	if err == nil || !strings.Contains(err.Error(), "cannot execute /nonexistent/prog") {
		t.Errorf("Start of a missing program: %v", err)
	}
	// The subcommand stays out of help.
	out, _ := exec.Command(bin, "--help").CombinedOutput()
	if strings.Contains(string(out), proc.ExecSubcommand) {
		t.Errorf("help lists the hidden subcommand:\n%s", out)
	}
}

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Memory bound of the generator with 10,000 keep-alive connections.
const (
	memConns = 10_000
	// memLimitKB is the bound on the generator's peak RSS (VmHWM).
	memLimitKB = 100 << 10
	// memGrowthKB is how much RSS may grow from the early sample to the
	// last one (GC pacing moves the heap by a few MB).
	memGrowthKB = 8 << 10
)

// TestGenMemory10k runs `loadlab gen -c 10000` as its own process against
// a server in this test process (each side holds 10,000 sockets, within
// ulimit -n) and samples the generator's RSS from /proc every 250 ms. It
// asserts the peak (VmHWM) stays within 100 MB and that RSS does not grow
// from the early sample (at 10 s, or half the run if shorter) to the end.
// LOADLAB_MEM_DURATION sets the run length (default 8s; scripts/
// bench-memory.sh runs 60s).
func TestGenMemory10k(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 connections for 8 s: skipped with -short")
	}
	dur := 8 * time.Second
	if v := os.Getenv("LOADLAB_MEM_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 2*time.Second {
			t.Fatalf("LOADLAB_MEM_DURATION=%q: give a duration of at least 2s", v)
		}
		dur = d
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < memConns+200 {
		t.Skipf("ulimit -n is %d; %d connections need at least %d in each process", lim.Cur, memConns, memConns+200)
	}
	srv := startHTTPServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 1024\r\n\r\n"+strings.Repeat("x", 1024))
	out := filepath.Join(t.TempDir(), "r.json")
	cmd := cliCommand(t, "gen", "-q", "-c", strconv.Itoa(memConns), "-d", dur.String(), "--json", out, srv.URL("http"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()

	early := min(10*time.Second, dur/2)
	var earlyRSS, lastRSS, peak int64
	var lastAt time.Duration
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(dur + 30*time.Second)
loop:
	for {
		select {
		case <-done:
			break loop
		case <-timeout:
			cmd.Process.Kill()
			<-done
			t.Fatalf("gen did not finish within %v", dur+30*time.Second)
		case <-tick.C:
			rss, hwm, err := procMemKB(cmd.Process.Pid)
			if err != nil {
				continue // exiting
			}
			at := time.Since(start)
			peak = max(peak, hwm)
			if earlyRSS == 0 && at >= early {
				earlyRSS = rss
			}
			if at < dur { // still running, not draining or exiting
				lastRSS, lastAt = rss, at
			}
		}
	}
	t.Logf("gen exited after %v", time.Since(start).Round(time.Millisecond))
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("gen exited %d:\n%s", code, stderr.String())
	}
	res := readResult(t, out)
	t.Logf("%d connections for %v: %d ok (%.0f/s), errors %v; generator RSS at %v %d KB, at %v %d KB, peak (VmHWM) %d KB",
		memConns, dur, res.OK, res.AchievedRate, res.Errors, early, earlyRSS, lastAt.Round(time.Second), lastRSS, peak)
	if res.OK < memConns {
		t.Errorf("ok %d: fewer responses than connections, so not every connection was exercised", res.OK)
	}
	if peak == 0 || earlyRSS == 0 {
		t.Fatal("no RSS samples of the generator")
	}
	if peak > memLimitKB {
		t.Errorf("generator peak RSS %d KB is above the %d KB bound", peak, memLimitKB)
	}
	if lastRSS > earlyRSS+memGrowthKB {
		t.Errorf("generator RSS grew from %d KB (at %v) to %d KB (at %v)", earlyRSS, early, lastRSS, lastAt.Round(time.Second))
	}
}

// procMemKB reads VmRSS and VmHWM (KB) of a process.
func procMemKB(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "VmRSS:":
			rss, _ = strconv.ParseInt(fields[1], 10, 64)
		case "VmHWM:":
			hwm, _ = strconv.ParseInt(fields[1], 10, 64)
		}
	}
	if rss == 0 {
		return 0, 0, fmt.Errorf("process %d has no VmRSS (exited)", pid)
	}
	return rss, hwm, nil
}

// genResult is the part of the JSON result the process-level tests read.
type genResult struct {
	OK           uint64            `json:"ok"`
	AchievedRate float64           `json:"achieved_rate"`
	Errors       map[string]uint64 `json:"errors"`
}

func readResult(t *testing.T, path string) genResult {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r genResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("result JSON: %v", err)
	}
	return r
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestGenInterrupted runs `loadlab gen -d 30s` as a real process, signals
// it after 1.5 s and checks that it stops sending, writes the partial
// result marked interrupted (JSON and HdrHistogram log) and exits 128+sig
// within 3 s of the signal.
func TestGenInterrupted(t *testing.T) {
	cases := []struct {
		name string
		sig  syscall.Signal
		code int
		args []string
		hang bool // the server never answers: in-flight requests at the stop
	}{
		{"SIGINT closed loop", syscall.SIGINT, 130, nil, false},
		{"SIGTERM open loop", syscall.SIGTERM, 143, []string{"--rate", "2000"}, false},
		// With --timeout 20s the drain would wait 20 s for the hung
		// requests; after an interrupt it waits at most 1 s.
		{"SIGINT server never answers", syscall.SIGINT, 130, []string{"--timeout", "20s"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := ""
			if tc.hang {
				url = startHangServer(t)
			} else {
				url = startHTTPServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").URL("http")
			}
			dir := t.TempDir()
			jsonPath, hdrPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.hlog")
			args := append([]string{"gen", "-q", "-c", "4", "-d", "30s", "--json", jsonPath, "--hdr-log", hdrPath}, tc.args...)
			cmd := cliCommand(t, append(args, url)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			// Signal half a second after the run's first second is in the
			// HdrHistogram log (still in its temporary file): the run has
			// been going for about 1.5 s however long the process took to
			// start.
			for deadline := time.Now().Add(15 * time.Second); !hasInterval(hdrPath); time.Sleep(20 * time.Millisecond) {
				select {
				case <-done:
					t.Fatalf("loadlab exited before the signal: %v\n%s", cmd.ProcessState, stderr.String())
				default:
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("no interval in %s within 15 s\n%s", hdrPath, stderr.String())
				}
			}
			time.Sleep(500 * time.Millisecond)
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			select {
			case <-done:
			case <-time.After(3 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("loadlab did not exit within 3 s of %v", tc.sig)
			}
			t.Logf("exited %v after the signal", time.Since(sent).Round(time.Millisecond))
			if got := cmd.ProcessState.ExitCode(); got != tc.code {
				t.Errorf("exit status %d, want %d; stderr:\n%s", got, tc.code, stderr.String())
			}
			checkPartialResult(t, jsonPath, hdrPath, tc.hang)
		})
	}
}

// intervalLine matches an interval of an HdrHistogram log:
// start,length,max,compressed histogram.
var intervalLine = regexp.MustCompile(`^\d+\.\d+,\d+\.\d+,\d+\.\d+,[A-Za-z0-9+/=]+$`)

// hasInterval reports whether the HdrHistogram log at path holds an
// interval line yet.
func hasInterval(path string) bool {
	// While the run goes the log is written to a hidden temporary file
	// beside path (outfile.go), renamed over path at the end.
	tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp"))
	for _, p := range append(tmps, path) {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if intervalLine.MatchString(line) {
				return true
			}
		}
	}
	return false
}

func checkPartialResult(t *testing.T, jsonPath, hdrPath string, hang bool) {
	t.Helper()
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatalf("no JSON result after the interrupt: %v", err)
	}
	var res struct {
		Interrupted bool    `json:"interrupted"`
		OK          uint64  `json:"ok"`
		DurationS   float64 `json:"duration_s"`
		PerSecond   []any   `json:"per_second"`
		Generator   struct {
			Unfinished int64 `json:"unfinished"`
		} `json:"generator"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("JSON result does not parse: %v", err)
	}
	if !res.Interrupted {
		t.Error(`"interrupted" is false`)
	}
	switch {
	case hang && (res.OK != 0 || res.Generator.Unfinished != 4):
		t.Errorf("ok %d, unfinished %d: want 0 and the 4 requests in flight at the stop", res.OK, res.Generator.Unfinished)
	case !hang && res.OK == 0:
		t.Error("ok 0: the responses before the interrupt were lost")
	}
	// Measured until the stop, not the planned 30 s.
	if res.DurationS < 1 || res.DurationS > 5 {
		t.Errorf("duration_s %.3f, want about 1.5 (the time until the signal)", res.DurationS)
	}
	if len(res.PerSecond) < 1 || len(res.PerSecond) > 5 {
		t.Errorf("%d per-second entries for a 1.5 s run", len(res.PerSecond))
	}
	f, err := os.Open(hdrPath)
	if err != nil {
		t.Fatalf("no HdrHistogram log after the interrupt: %v", err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if intervalLine.MatchString(sc.Text()) {
			n++
		}
	}
	if n == 0 {
		t.Error("the HdrHistogram log has no interval lines")
	}
}

// startHangServer accepts connections and never answers; it returns the URL.
func startHangServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return "http://" + ln.Addr().String() + "/x"
}

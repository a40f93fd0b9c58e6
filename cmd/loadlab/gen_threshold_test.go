package main

import (
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"
)

// TestGenThresholdExit: thresholds are checked at the end and recorded in
// the result; one that fails exits 3 (the result is still written), all
// passing exit 0. The servers' answers make each verdict certain: one
// answers 502 to everything (errors 100%), one waits 30 ms before each
// answer (p99 at least 30 ms, and far below 5 s).
func TestGenThresholdExit(t *testing.T) {
	bad := startHTTPServer(t, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 2\r\n\r\nno")
	slow := testutil.StartServer(t, testutil.EachRequest(func(c net.Conn) bool {
		time.Sleep(30 * time.Millisecond)
		_, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		return err == nil
	}))
	for _, tc := range []struct {
		name       string
		url        string
		thresholds []string
		code       int
		pass       []bool
	}{
		{"errors fail", bad.URL("http"), []string{"p99<5s", "errors<1%"}, exitThreshold, []bool{true, false}},
		{"latency fails", slow.URL("http"), []string{"p99<20ms", "errors<1%", "rate>=50%"}, exitThreshold, []bool{false, true, true}},
		{"all pass", slow.URL("http"), []string{"p99<5s", "p50>=30ms", "errors<=0", "rate>=50%"}, exitOK, []bool{true, true, true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			args := []string{"-q", "-c", "4", "-r", "40", "-d", "1s", "--json", out}
			for _, th := range tc.thresholds {
				args = append(args, "--threshold", th)
			}
			code, stderr := captureRun(t, "gen", append(args, tc.url)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if tc.code == exitThreshold {
				checkOneLine(t, stderr, "threshold failed:")
			}
			res := loadResult(t, out)
			if len(res.Thresholds) != len(tc.thresholds) {
				t.Fatalf("result thresholds %+v, want %d", res.Thresholds, len(tc.thresholds))
			}
			for i, th := range res.Thresholds {
				if th.Pass != tc.pass[i] {
					t.Errorf("%s: pass %v (value %v, %s), want %v", th.Threshold, th.Pass, th.Value, th.Reason, tc.pass[i])
				}
				if !th.Pass && !strings.Contains(stderr, th.Threshold) {
					t.Errorf("stderr does not name the failed %s: %s", th.Threshold, stderr)
				}
			}
		})
	}
}

// TestGenThresholdUsage: a threshold that cannot be parsed, or judged, is
// refused before the run (exit 2).
func TestGenThresholdUsage(t *testing.T) {
	url := fmt.Sprintf("http://127.0.0.1:%d/x", freePort(t))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--threshold", "p98<5ms", url}, `--threshold: bad threshold "p98<5ms": unknown metric`},
		{[]string{"--threshold", "p99<5", url}, "p99 needs a duration"},
		{[]string{"--threshold", "rate>=97%", url}, "a closed-loop run has none: give --rate"},
	} {
		code, stderr := captureRun(t, "gen", append([]string{"-q", "-d", "1s"}, tc.args...)...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want 2; stderr:\n%s", tc.args, code, stderr)
		}
		checkOneLine(t, stderr, tc.want)
	}
}

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/internal/testutil"
)

// TestGenInputValidation runs `loadlab gen` with one bad input per case.
// Every case must exit 2 with exactly one line on stderr that names the
// problem, before any work starts: the target port has nothing listening,
// so a run that got as far as connecting would exit 1 instead, and no
// --json file may appear.
func TestGenInputValidation(t *testing.T) {
	dir := t.TempDir()
	url := fmt.Sprintf("http://127.0.0.1:%d/x", freePort(t))
	tlsURL := strings.Replace(url, "http:", "https:", 1)
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("no certificate here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	tooMany := fmt.Sprint(lim.Cur) // +64 for the generator's own files is over the limit
	missing := filepath.Join(dir, "missing")

	cases := []struct {
		name string
		args []string
		want []string // substrings of the one stderr line
	}{
		{"unknown scheme", []string{"ftp://127.0.0.1/x"}, []string{`unsupported URL scheme "ftp"`, "use http:// or https://"}},
		{"no scheme", []string{"localhost/x"}, []string{"has no scheme", "use http://localhost/x"}},
		{"missing host", []string{"http://:8080/x"}, []string{"has no host"}},
		{"port out of range", []string{"http://127.0.0.1:99999/x"}, []string{`bad port "99999"`, "1-65535"}},
		{"port not a number", []string{"http://127.0.0.1:http/x"}, []string{"bad URL", "invalid port"}},
		{"no URL", nil, []string{"exactly one URL"}},
		{"two URLs", []string{url, url}, []string{"exactly one URL (got 2"}},
		{"negative rate", []string{"-r", "-1", url}, []string{"--rate: must be >= 0"}},
		{"NaN rate", []string{"-r", "NaN", url}, []string{"--rate: must be >= 0"}},
		{"rate not a number", []string{"-r", "fast", url}, []string{`invalid argument "fast"`}},
		{"zero duration", []string{"-d", "0", url}, []string{"--duration: must be > 0"}},
		{"negative duration", []string{"-d", "-5s", url}, []string{"--duration: must be > 0"}},
		{"warmup as long as duration", []string{"-d", "5s", "--warmup", "5s", url}, []string{"--warmup: 5s", "shorter than the duration 5s"}},
		{"negative warmup", []string{"--warmup", "-1s", url}, []string{"--warmup: -1s must be >= 0"}},
		{"zero timeout", []string{"--timeout", "0", url}, []string{"--timeout: must be > 0"}},
		{"negative timeout", []string{"--timeout", "-1s", url}, []string{"--timeout: must be > 0"}},
		{"zero connections", []string{"-c", "0", url}, []string{"--connections: must be at least 1"}},
		{"cpus unparsable", []string{"--cpus", "one", url}, []string{"--cpus"}},
		{"cpus not allowed", []string{"--cpus", "4095", url}, []string{"cpu 4095 is outside the CPUs this process may use"}},
		{"connections over the open-file limit", []string{"-c", tooMany, url},
			[]string{fmt.Sprintf("ulimit -n is %d", lim.Cur), fmt.Sprintf("need about %d open files", lim.Cur+64)}},
		{"negative max-pending", []string{"-r", "100", "--max-pending", "-1", url}, []string{"--max-pending: must be between 0"}},
		{"huge max-pending", []string{"-r", "100", "--max-pending", "1000000000000", url}, []string{"--max-pending: must be between 0"}},
		{"unreadable body file", []string{"--body-file", missing, url}, []string{"cannot read --body-file", "no such file"}},
		{"body file is a directory", []string{"--body-file", dir, url}, []string{"cannot read --body-file", "is a directory"}},
		{"unreadable CA", []string{"--ca", missing, tlsURL}, []string{"--ca: cannot read", "no such file"}},
		{"CA without certificates", []string{"--ca", notPEM, tlsURL}, []string{"holds no PEM certificate"}},
		{"bad close", []string{"--close", "reset", url}, []string{`bad --close "reset"`, "use fin or rst"}},
		{"verify-sha256 not hex", []string{"--verify-sha256", "xyz", url}, []string{"bad --verify-sha256", "64 hex digits"}},
		{"verify-sha256 too short", []string{"--verify-sha256", "abcd", url}, []string{"bad --verify-sha256"}},
		{"bad tls version", []string{"--tls", "1.1", tlsURL}, []string{`--tls: bad version "1.1"`, "use 1.2 or 1.3"}},
		{"unknown curve", []string{"--curves", "x448", tlsURL}, []string{`unknown curve "x448"`}},
		{"unknown client hello", []string{"--client-hello", "safari", tlsURL}, []string{`--client-hello: unknown "safari"`}},
		{"src-addrs not an address", []string{"--src-addrs", "127.0.0", url}, []string{`--src-addrs: bad entry "127.0.0"`}},
		{"src-addrs backwards range", []string{"--src-addrs", "127.0.0.9-127.0.0.2", url}, []string{"--src-addrs: bad range"}},
		{"header without colon", []string{"-H", "NoColon", url}, []string{`bad header "NoColon"`, `use "Name: value"`}},
		{"header name with space", []string{"-H", "Bad Name: x", url}, []string{`bad header "Bad Name: x"`}},
		{"header empty name", []string{"-H", ": x", url}, []string{`bad header ": x"`}},
		{"bad method", []string{"-m", "GET X", url}, []string{`bad method "GET X"`}},
		{"http3 on http", []string{"--http3", url}, []string{"--http3: needs an https:// URL"}},
		{"h2 and http3", []string{"--h2", "--http3", tlsURL}, []string{"--h2: and --http3 exclude each other"}},
		{"streams without h2", []string{"--streams", "4", url}, []string{"--streams: is HTTP/2's streams per connection: add --h2"}},
		{"zero streams", []string{"--h2", "--streams", "0", url}, []string{"--streams must be at least 1"}},
		{"negative streams", []string{"--h2", "--streams", "-3", url}, []string{"--streams: must be between 1 and 65536"}},
		{"too many streams", []string{"--h2", "--streams", "70000", url}, []string{"--streams: must be between 1 and 65536"}},
		{"streams with new-conn", []string{"--h2", "--new-conn", "--streams", "4", url}, []string{"--streams: 4 with --new-conn", "drop --streams or --new-conn"}},
		{"h2 header value", []string{"--h2", "-H", "X-A: a\x01b", url}, []string{"HTTP/2 cannot carry the request", "invalid value"}},
		{"json in a missing directory", []string{"--json", filepath.Join(missing, "r.json"), url}, []string{"--json"}},
		{"hdr-log in a missing directory", []string{"--hdr-log", filepath.Join(missing, "h.log"), url}, []string{"--hdr-log"}},
		{"unknown flag", []string{"--connection", "5", url}, []string{"unknown flag: --connection"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "result.json")
			args := append([]string{"-q"}, tc.args...)
			if tc.name != "json in a missing directory" {
				args = append([]string{"--json", out}, args...)
			}
			code, stderr := captureRun(t, "gen", args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr)
			}
			checkOneLine(t, stderr, tc.want...)
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a usage error still created the --json file")
			}
		})
	}
}

// checkOneLine asserts that stderr is one "loadlab: ..." line holding
// every one of want.
func checkOneLine(t *testing.T, stderr string, want ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "loadlab: ") {
		t.Errorf("stderr is not one \"loadlab: ...\" line:\n%s", stderr)
		return
	}
	for _, w := range want {
		if !strings.Contains(lines[0], w) {
			t.Errorf("stderr %q lacks %q", lines[0], w)
		}
	}
}

// TestGenNothingListening: a target with nothing listening is a run error
// (exit 1) with one line saying so and what to do.
func TestGenNothingListening(t *testing.T) {
	port := freePort(t)
	code, stderr := captureRun(t, "gen", "-q", "-d", "1s", fmt.Sprintf("http://127.0.0.1:%d/x", port))
	if code != exitRunError {
		t.Errorf("exit %d, want %d", code, exitRunError)
	}
	checkOneLine(t, stderr, fmt.Sprintf("nothing is listening on 127.0.0.1:%d", port), "start the server or check the URL")
}

// TestGen502ExitsZero: a server answering 502 to everything is measured,
// not an error: status {"502": n}, ok 0, no errors, exit 0.
func TestGen502ExitsZero(t *testing.T) {
	srv := startHTTPServer(t, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 11\r\n\r\nbad gateway")
	out := filepath.Join(t.TempDir(), "r.json")
	code, stderr := captureRun(t, "gen", "-q", "-c", "4", "-d", "1s", "--json", out, srv.URL("http"))
	if code != exitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
	var res struct {
		OK     uint64            `json:"ok"`
		Status map[string]uint64 `json:"status"`
		Errors map[string]uint64 `json:"errors"`
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("result JSON: %v", err)
	}
	if res.OK != 0 || len(res.Status) != 1 || res.Status["502"] == 0 {
		t.Errorf("ok %d, status %v: want only 502s", res.OK, res.Status)
	}
	for class, n := range res.Errors {
		if n != 0 {
			t.Errorf("errors.%s = %d, want 0", class, n)
		}
	}
}

// TestGenHeadersEnv: --headers-env VAR sends the "Name: value" lines of
// the variable as headers (how the Kubernetes Job passes a Secret's
// headers); an unset variable or a line that is no header is a one-line
// usage error that does not quote the value.
func TestGenHeadersEnv(t *testing.T) {
	got := make(chan http.Header, 100)
	srv := testutil.StartServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			select {
			case got <- req.Header:
			default:
			}
			if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"); err != nil {
				return
			}
		}
	})
	t.Setenv("LOADLAB_TEST_HEADERS", "Authorization: Bearer s3cret\n\nX-Api-Key: k3y\n")
	code, stderr := captureRun(t, "gen", "-q", "-c", "1", "-n", "1", "-d", "5s", "--headers-env", "LOADLAB_TEST_HEADERS", srv.URL("http"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	h := <-got
	if h.Get("Authorization") != "Bearer s3cret" || h.Get("X-Api-Key") != "k3y" {
		t.Fatalf("the server got headers %v", h)
	}
	t.Setenv("LOADLAB_TEST_HEADERS", "Authorization Bearer s3cret")
	for _, env := range []string{"LOADLAB_TEST_HEADERS", "LOADLAB_TEST_UNSET"} {
		code, stderr = captureRun(t, "gen", "-q", "-d", "1s", "--headers-env", env, srv.URL("http"))
		if code != 2 || strings.Contains(stderr, "s3cret") || !strings.Contains(stderr, env) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("--headers-env %s: exit %d, stderr %q: want 2 and one line naming the variable, not its value", env, code, stderr)
		}
	}
}

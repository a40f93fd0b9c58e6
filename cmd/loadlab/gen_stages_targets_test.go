package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestGenStagesTargetsUsage: --stages and --targets refuse what they
// cannot mean, before any work (exit 2, one line).
func TestGenStagesTargetsUsage(t *testing.T) {
	dir := t.TempDir()
	url := fmt.Sprintf("http://127.0.0.1:%d/x", freePort(t))
	file := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := file("good", "GET "+url+"\n\nGET "+url+"?b\n")
	other := file("other", "GET "+url+"\n\nGET http://127.0.0.2:9/y\n")
	badHeader := file("bad", "GET "+url+"\nNoColon\n")
	noBody := file("nobody", "POST "+url+"\n@"+filepath.Join(dir, "missing.json")+"\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--stages", "10s:100", "-d", "5s", url}, "--stages sets the rate and the run time: drop --duration and --rate"},
		{[]string{"--stages", "10s:100", "-r", "100", url}, "drop --duration and --rate"},
		{[]string{"--stages", "10s", url}, `--stages: bad stages "10s": stage "10s" is not DURATION:RATE`},
		{[]string{"--stages", "10s:0", url}, "--stages: the stages offer less than one request"},
		{[]string{"--targets", good, url}, "drop the URL argument"},
		{[]string{"--targets", other}, "--targets: target 2 (http://127.0.0.2:9/y) is not on http://127.0.0.1:"},
		{[]string{"--targets", badHeader}, `--targets: line 2: bad header "NoColon"`},
		{[]string{"--targets", noBody}, "--targets: line 2: body file"},
		{[]string{"--targets", filepath.Join(dir, "none")}, "cannot read --targets"},
		{[]string{"--targets", good, "--targets-weight", "1"}, "--targets-weight: 1 weights for 2 targets"},
		{[]string{"--targets", good, "--targets-weight", "1,0"}, "--targets-weight: bad weight"},
		{[]string{"--targets-weight", "1", url}, "--targets-weight needs --targets"},
		{[]string{"--targets", good, "-m", "POST"}, "--method does not apply with --targets"},
		{[]string{"--targets", file("tls", "GET https://127.0.0.1:9/\n"), "--http3"}, "--targets: work over HTTP/1.1 and HTTP/2, not yet --http3"},
	} {
		code, stderr := captureRun(t, "gen", append([]string{"-q"}, tc.args...)...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want 2; stderr:\n%s", tc.args, code, stderr)
		}
		checkOneLine(t, stderr, tc.want)
	}
}

// TestGenTargetsCLI: `gen --targets FILE --targets-weight` reads the file
// (headers, an @body file), sends 60 requests as 3:1:2, each as its target
// says, and writes the targets array in file order.
func TestGenTargetsCLI(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[r.Method+" "+r.URL.Path+" "+r.Host+" "+r.Header.Get("X-A")+" "+string(b)]++
		mu.Unlock()
		w.Write([]byte("ok"))
	}))
	defer hs.Close()
	dir := t.TempDir()
	body := filepath.Join(dir, "body.json")
	if err := os.WriteFile(body, []byte(`{"x":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(hs.URL, "http://")
	file := filepath.Join(dir, "targets.txt")
	src := "# app\nGET " + hs.URL + "/a\nHost: one.example\nX-A: 1\n\nPOST " + hs.URL + "/b\n@" + body + "\nGET " + hs.URL + "/c\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	code, stderr := captureRun(t, "gen", "-q", "-c", "3", "-n", "60", "-d", "20s", "--targets", file, "--targets-weight", "3,1,2", "--json", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := map[string]int{"GET /a one.example 1 ": 30, "POST /b " + host + `  {"x":1}`: 10, "GET /c " + host + "  ": 20}
	mu.Lock()
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("server saw %v, want %v", seen, want)
	}
	mu.Unlock()
	res := loadResult(t, out)
	if len(res.Targets) != 3 || res.Targets[0].URL != hs.URL+"/a" || res.Targets[0].Requests != 30 || res.Targets[1].Method != "POST" ||
		res.Targets[1].OK != 10 || res.Targets[2].Requests != 20 || res.Targets[2].Weight != 2 {
		t.Errorf("targets %+v", res.Targets)
	}
}

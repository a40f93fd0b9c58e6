package main

import (
	"fmt"
	"os"
	"path/filepath"
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

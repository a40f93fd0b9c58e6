package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab"
)

// lab profile show prints a built-in's file and template as shipped; with
// --out it writes a copy, renamed, that loads beside the original.
func TestLabProfileShowAndCopy(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if code := execute([]string{"lab", "profile", "show", "nginx-keepalive"}, &out, io.Discard); code != exitOK {
		t.Fatalf("show: exit %d", code)
	}
	for _, want := range []string{"==> nginx-keepalive.yaml <==", "name: nginx-keepalive\n", "nginx.conf: nginx-keepalive.conf.tmpl", "==> nginx-keepalive.conf.tmpl <== (rendered as nginx.conf)", "keepalive 32;"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, out.String())
		}
	}
	dir := filepath.Join(t.TempDir(), "my")
	if code, stderr := captureRun(t, "lab", "profile", "show", "nginx-keepalive", "--out", dir, "--name", "nginx-keepalive2"); code != exitOK {
		t.Fatalf("show --out: exit %d: %s", code, stderr)
	}
	tmpl := filepath.Join(dir, "nginx-keepalive.conf.tmpl")
	b, err := os.ReadFile(tmpl)
	if err != nil || !strings.Contains(string(b), "keepalive 32;") {
		t.Fatalf("copied template: %v", err)
	}
	os.WriteFile(tmpl, bytes.Replace(b, []byte("keepalive 32;"), []byte("keepalive 2;"), 1), 0o644)
	out.Reset()
	if code := execute([]string{"lab", "proxies", "--json", "--profiles", "nginx-keepalive," + filepath.Join(dir, "nginx-keepalive2.yaml")}, &out, io.Discard); code != exitOK {
		t.Fatalf("proxies with the copy: exit %d", code)
	}
	var rows []lab.ProxyRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("rows %v, %v", rows, err)
	}
	if rows[1].Name != "nginx-keepalive2" || rows[1].Proxy != "nginx" || rows[1].File != filepath.Join(dir, "nginx-keepalive2.yaml") || !strings.HasPrefix(rows[1].Description, "copy of nginx-keepalive: ") {
		t.Errorf("the copy's row: %+v", rows[1])
	}
	// A second copy into the same directory overwrites nothing.
	if code, stderr := captureRun(t, "lab", "profile", "show", "nginx-keepalive", "--out", dir, "--name", "nginx-keepalive2"); code != exitUsage || !strings.Contains(stderr, "exists already") {
		t.Errorf("a second copy: exit %d, %s", code, stderr)
	}
}

// A bad profile file named on the command line: exit 2 and one line that
// names the file, the line and the field, before anything runs.
func TestLabBadProfileFileUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\nbinary: /bin/true\nversion: x\ncommand: [\"{{.Binary}}\"]\nworkers: 4\n"), 0o644)
	tmpl := filepath.Join(dir, "tmpl.yaml")
	os.WriteFile(tmpl, []byte("name: tmpl\nbinary: /bin/true\nversion: x\ncommand: [\"{{.Binary}}\"]\nfiles:\n  a.conf: a.tmpl\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.tmpl"), []byte("listen {{.HTTPSAddr}}\nthreads {{.Threads}}\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"lab", "proxies", "--profiles", bad}, bad + ":5: unknown field workers"},
		{[]string{"lab", "check", "--profiles", bad}, bad + ":5: unknown field workers"},
		{[]string{"lab", "run", "--plan", "quick", "--profiles", bad, "--dry-run"}, bad + ":5: unknown field workers"},
		{[]string{"lab", "run", "--plan", "quick", "--profiles", tmpl, "--dry-run"}, filepath.Join(dir, "a.tmpl") + ":2:10: unknown parameter .Threads"},
		{[]string{"lab", "run", "--plan", "quick", "--bin", "nginx-stock=" + filepath.Join(dir, "no-nginx"), "--dry-run"}, "--bin nginx-stock=" + filepath.Join(dir, "no-nginx") + ": proxy binary not found"},
	} {
		var stderr bytes.Buffer
		code := execute(c.args, io.Discard, &stderr)
		msg := strings.TrimSpace(stderr.String())
		if code != exitUsage || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, c.want) {
			t.Errorf("%s: exit %d, %q; want exit 2 and one line with %q", strings.Join(c.args, " "), code, msg, c.want)
		}
	}
}

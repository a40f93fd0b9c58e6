package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab"
	"github.com/loadlab/loadlab/lab/proxy"
)

// runLabProxies runs the CLI with args and returns its exit status and
// stdout.
func runLabProxies(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := execute(args, &out, io.Discard)
	return code, out.String()
}

func TestLabProxiesJSON(t *testing.T) {
	code, out := runLabProxies(t, "lab", "proxies", "--json")
	if code != exitOK {
		t.Fatalf("exit %d, output %s", code, out)
	}
	var rows []lab.ProxyRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("output is not a JSON array of rows: %v\n%s", err, out)
	}
	all := proxy.All()
	if len(rows) != len(all) {
		t.Fatalf("%d rows, want one per profile (%d)", len(rows), len(all))
	}
	for i, r := range rows {
		p := all[i]
		if r.Name != p.Name || r.Proxy != p.Proxy || r.Role != p.Role || r.Features != p.Features || r.Description != p.Description {
			t.Errorf("row %d = %+v, want profile %s", i, r, p.Name)
		}
		found, path, version, _ := proxy.Status(p)
		if r.Found != found || r.Path != path || r.Version != version {
			t.Errorf("%s: row says found=%v %q %q, Status says %v %q %q", r.Name, r.Found, r.Path, r.Version, found, path, version)
		}
	}
	if strings.Contains(out, `\u003e`) {
		t.Errorf("JSON escapes '>' in descriptions: %s", out)
	}
}

func TestLabProxiesTable(t *testing.T) {
	code, out := runLabProxies(t, "lab", "proxies")
	if code != exitOK {
		t.Fatalf("exit %d, output %s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(proxy.All())+1 || !strings.HasPrefix(lines[0], "PROFILE") {
		t.Fatalf("want a header and one line per profile, got:\n%s", out)
	}
	for i, p := range proxy.All() {
		line := lines[i+1]
		if f := strings.Fields(line); !strings.HasPrefix(line, p.Name+" ") || len(f) < 3 || f[2] != p.Role || !strings.Contains(line, p.Features.String()) {
			t.Errorf("line %q does not describe %s", line, p.Name)
		}
		found, path, _, _ := proxy.Status(p)
		ok := strings.Contains(line, "not found")
		if found {
			ok = strings.Contains(line, "found "+path) && !ok
		}
		if !ok {
			t.Errorf("line %q: want found=%v at %q", line, found, path)
		}
	}
}

func TestLabProxiesRejectsArgs(t *testing.T) {
	if code, _ := runLabProxies(t, "lab", "proxies", "nginx"); code != exitUsage {
		t.Errorf("lab proxies nginx: exit %d, want %d", code, exitUsage)
	}
}

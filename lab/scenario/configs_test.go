package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/proxy"
)

// The five-host config of every built-in proxy profile, its lines that are
// neither blank nor a comment counted by hand from the rendered files
// (configs-5-hosts/<profile>/ of a run) and written down here: Caddy's
// globals (6), its two snippets (5 and 4) and 3 lines a site, two sites a
// host; HAProxy's global and defaults (10), two frontends (2 + 5 each) and
// 2 lines a backend; nginx's globals and http block (16), 18 lines a
// server (nginx-stock-1.22 16, the keepalive ones 22 with their upstream)
// and the default server (8); nginx-npm's globals, log format, maps and
// fallback (37) and 25 lines a host as NPM's generator writes them, and
// NPM's include/proxy.conf (7); h2o's globals (16), the default host (4)
// and 7 lines a host; Traefik's static file (21) and dynamic file (2 + 9
// a host for the routers, 1 + 4 a host for the services, 7 of TLS);
// Apache's globals, modules, MPM, TLS and <Directory> (36), 2 Listen
// lines, the default hosts (6 + 10) and 14 lines a host (two virtual
// hosts, 5 and 9); lighttpd's globals (7), its TLS socket (5), its upgrade
// header (1) and 3 lines a host.
func TestConfigLines5Hosts(t *testing.T) {
	want := map[string]map[string]int{
		"caddy-stock":        {"Caddyfile": 45},
		"caddy-pool128":      {"Caddyfile": 53},
		"haproxy":            {"haproxy.cfg": 34},
		"nginx-stock":        {"nginx.conf": 114},
		"nginx-stock-1.22":   {"nginx.conf": 104},
		"nginx-keepalive":    {"nginx.conf": 134},
		"nginx-keepalive128": {"nginx.conf": 134},
		"nginx-npm":          {"nginx.conf": 162, "conf.d/include/proxy.conf": 7},
		"h2o":                {"h2o.conf": 55},
		"traefik":            {"traefik.yml": 21, "traefik-dynamic.yml": 75},
		"apache2":            {"httpd.conf": 124},
		"lighttpd":           {"lighttpd.conf": 28},
	}
	dir := t.TempDir()
	seen := 0
	for _, prof := range proxy.All() {
		if prof.IsOrigin() {
			continue
		}
		w, ok := want[prof.Name]
		if !ok {
			t.Errorf("%s: no count by hand for this built-in proxy profile: render it (configs-5-hosts of a run), count its lines and add it here", prof.Name)
			continue
		}
		seen++
		c := configSize(dir, prof)
		if c.Error != "" {
			t.Errorf("%s: %s", prof.Name, c.Error)
			continue
		}
		total := 0
		for _, f := range c.Files {
			total += w[f.Name]
			if f.Lines != w[f.Name] {
				t.Errorf("%s %s: %d lines counted, %d by hand", prof.Name, f.Name, f.Lines, w[f.Name])
			}
			b, err := os.ReadFile(filepath.Join(dir, c.Dir, f.Name))
			if err != nil {
				t.Errorf("%s: the rendered file is not kept: %v", prof.Name, err)
				continue
			}
			// The routes reached the file: five hosts, each once at least.
			for _, h := range []string{"app01.lab.test", "app05.lab.test"} {
				if !strings.Contains(string(b), h) && f.Name != "traefik.yml" && f.Name != "conf.d/include/proxy.conf" {
					t.Errorf("%s %s names no %s", prof.Name, f.Name, h)
				}
			}
		}
		if len(c.Files) != len(w) || c.Lines != total {
			t.Errorf("%s: files %v, %d lines in all; want %v", prof.Name, c.Files, c.Lines, w)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the %d profiles counted by hand are built in", seen, len(want))
	}
}

// A run directory given relative to the working directory (make lab's
// --out results/quick) renders as well as an absolute one.
func TestConfigLines5HostsRelativeRunDir(t *testing.T) {
	t.Chdir(t.TempDir())
	prof, err := proxy.Get("nginx-stock")
	if err != nil {
		t.Fatal(err)
	}
	c := configSize(filepath.Join("results", "quick"), prof)
	if c.Error != "" || c.Lines != 114 {
		t.Fatalf("%d lines, error %q: want 114 and none", c.Lines, c.Error)
	}
	if _, err := os.Stat(filepath.Join("results", "quick", c.Dir, "nginx.conf")); err != nil {
		t.Errorf("the rendering is not under the run directory: %v", err)
	}
}

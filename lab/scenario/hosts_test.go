package scenario

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/results"
)

const hostsPlanYAML = `
name: hosts-test
profiles: [nginx-npm, caddy-stock]
keys: [p256]
cpus: {server: "1"}
idle_memory: {quiet: 1ms, samples: 3, every: 1ms}
scenarios:
  - kind: keepalive-1k
    profiles: [caddy-stock]
    search: {start: 1000, max: 4000, step: 2s, discard: 1s, confirm_runs: 1, confirm_step: 2s, cooldown_cap: 1s}
  - kind: hosts
    backends: 4
    runs: 3
    duration: 2s
  - name: hosts-spread
    kind: hosts
    backends: 4
    spread: true
    runs: 1
    duration: 2s
`

// A hosts scenario opens its sessions with its named backends, sends
// every request with the first app's Host (or, with spread, round-robin
// over a targets file naming every app, kept in the run directory),
// records each app's requests per step, and measures idle memory with its
// routes apart from the same profile's one-site idle memory.
func TestRunHostsScenario(t *testing.T) {
	h := newHarness(t, hostsPlanYAML)
	h.lab.capacity["caddy-stock"] = 3000
	h.lab.capacity["app01.lab.test"] = 1000
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	var backends []int
	for _, o := range h.lab.opens {
		backends = append(backends, o.Backends)
	}
	// keepalive-1k (one site), hosts and hosts-spread on two profiles
	// each, with 4 named backends.
	slices.Sort(backends)
	if !slices.Equal(backends, []int{0, 4, 4, 4, 4}) {
		t.Fatalf("sessions opened with backends %v, want [0 4 4 4 4]", backends)
	}
	u := f.Unit("hosts/nginx-npm/p256/1cpu")
	if u == nil || u.Status != results.StatusDone || len(u.Steps) != 3 {
		t.Fatalf("hosts unit %+v", u)
	}
	for _, st := range u.Steps {
		if !slices.Equal(st.Backend.Apps, []uint64{2000, 0, 0, 0}) || st.Result.OK != 2000 {
			t.Fatalf("hosts step %d: apps %v of %d 2xx, want all on app01", st.Seq, st.Backend.Apps, st.Result.OK)
		}
	}
	sp := f.Unit("hosts-spread/caddy-stock/p256/1cpu")
	if sp == nil || len(sp.Steps) != 1 || !slices.Equal(sp.Steps[0].Backend.Apps, []uint64{500, 500, 500, 500}) {
		t.Fatalf("spread unit: %+v", sp)
	}
	text, err := os.ReadFile(filepath.Join(h.dir, "targets", "hosts-spread_caddy-stock_p256_1cpu.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for i, host := range []string{"app01", "app02", "app03", "app04"} {
		if !strings.Contains(string(text), "Host: "+host+".lab.test\n") {
			t.Errorf("targets file lacks target %d (%s):\n%s", i+1, host, text)
		}
	}
	var spreadCfg, hostCfg int
	for _, c := range h.lab.genConfig {
		switch {
		case len(c.Targets) == 4:
			spreadCfg++
		case slices.Contains(c.Headers, "Host: app01.lab.test") && c.URL == "http://127.0.0.1:2/1k":
			hostCfg++
		}
	}
	if spreadCfg != 2 || hostCfg != 6 {
		t.Errorf("%d spread runs (want 2), %d runs to app01.lab.test over plain HTTP (want 6)", spreadCfg, hostCfg)
	}
	// Every proxy profile of the run rendered with five host routes, once,
	// its files kept in the run directory.
	for _, name := range []string{"caddy-stock", "nginx-npm"} {
		c := f.ConfigSize(name)
		if c == nil || c.Error != "" || c.Lines == 0 || len(f.Configs5Hosts) != 2 {
			t.Fatalf("configs_5_hosts %+v: want caddy-stock and nginx-npm rendered", f.Configs5Hosts)
		}
		if _, err := os.Stat(filepath.Join(h.dir, c.Dir, c.Files[0].Name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// caddy-stock: idle memory with the one site and with 4 routes.
	if f.ProxyInfo("1cpu", "caddy-stock", "p256") == nil || f.ProxyInfoRoutes("1cpu", "caddy-stock", "p256", 4) == nil || f.ProxyInfo("1cpu", "nginx-npm", "p256") != nil || len(f.Proxies) != 3 {
		t.Errorf("proxies %+v: want caddy-stock with 0 and 4 routes, nginx-npm with 4", f.Proxies)
	}
}

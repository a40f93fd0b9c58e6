package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/pin"
)

// narrowPlan is the plan the narrowing tests narrow: three profiles, two
// key types (the plan's first for every scenario but the handshake, which
// names its own), a scaling copy on two server CPUs, and a fixed-rate
// scenario whose rate comes from the first one's search.
const narrowPlan = `
name: narrow
profiles: [nginx-stock, caddy-stock, haproxy]
keys: [p256, rsa2048]
cpus: {server: "1"}
scenarios:
  - kind: keepalive-1k
  - name: keepalive-1k-2cpu
    kind: keepalive-1k
    profiles: [nginx-stock]
    server_cpus: "2"
  - name: handshake-rsa4096
    kind: handshake
    keys: [rsa4096]
    profiles: [nginx-stock, caddy-stock]
  - name: capped
    kind: fixed-rate
    rate_from: {scenario: keepalive-1k, share: 0.9}
    duration: 3s
    profiles: [caddy-stock, haproxy]
`

// writeNarrowPlan writes narrowPlan into a new directory and returns both.
func writeNarrowPlan(t *testing.T) (dir, planFile string) {
	t.Helper()
	dir = t.TempDir()
	planFile = filepath.Join(dir, "narrow.yaml")
	if err := os.WriteFile(planFile, []byte(narrowPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, planFile
}

// fourCPUs is a machine of four CPUs, one per core, all usable: every
// layout the plan asks for fits.
func fourCPUs() (*pin.Topology, pin.CPUSet) {
	t := &pin.Topology{}
	for i := range 4 {
		t.CPUs = append(t.CPUs, pin.CPU{ID: i, Core: i, Siblings: pin.NewCPUSet(i)})
	}
	return t, pin.NewCPUSet(0, 1, 2, 3)
}

// installedOnly finds the binaries of the named profiles and of no other;
// refused maps a profile to the error its binary gives (not "not found").
func installedOnly(refused map[string]string, names ...string) func(proxy.Profile) error {
	return func(p proxy.Profile) error {
		if why, ok := refused[p.Name]; ok {
			return errors.New(why)
		}
		if slices.Contains(names, p.Name) {
			return nil
		}
		return fmt.Errorf("%w: %s (test)", proxy.ErrNotFound, p.Name)
	}
}

// narrowed is what lab run makes of o before any work: the plan after the
// overrides and its units on fourCPUs, find saying what is installed.
func narrowed(o RunOptions, find func(proxy.Profile) error) (*plan.Plan, []string, []string, error) {
	p, err := preparePlan(o)
	if err != nil {
		return nil, nil, nil, err
	}
	topo, allowed := fourCPUs()
	_, units, _, err := planUnits(p, o.Profiles, topo, allowed, find)
	if err != nil {
		return p, nil, nil, err
	}
	var run, skipped []string
	for _, u := range units {
		if u.Skip != "" {
			skipped = append(skipped, u.ID+": "+u.Skip)
			continue
		}
		run = append(run, u.ID)
	}
	return p, run, skipped, nil
}

// lab run's --scenarios, --profiles, --keys, --bin and --server-cpus
// narrow the plan to the units they name, in the plan's order, and say in
// a note what they dropped or kept besides; a profile file joins the plan
// wherever a profile of its role runs; a profile not installed is a
// skipped unit.
func TestRunNarrowsThePlan(t *testing.T) {
	dir, planFile := writeNarrowPlan(t)
	mine := filepath.Join(dir, "my.yaml")
	if err := os.WriteFile(mine, []byte("name: my-nginx\nextends: nginx-stock\ndescription: mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	all := installedOnly(nil, "nginx-stock", "caddy-stock", "haproxy", "my-nginx")
	for _, c := range []struct {
		name    string
		o       RunOptions
		find    func(proxy.Profile) error
		run     []string
		skipped []string
		notes   []string
	}{
		{name: "the whole plan", o: RunOptions{}, find: all, run: []string{
			"keepalive-1k/nginx-stock/p256/1cpu", "handshake-rsa4096/nginx-stock/rsa4096/1cpu",
			"keepalive-1k/caddy-stock/p256/1cpu", "handshake-rsa4096/caddy-stock/rsa4096/1cpu", "capped/caddy-stock/p256/1cpu",
			"keepalive-1k/haproxy/p256/1cpu", "capped/haproxy/p256/1cpu",
			"keepalive-1k-2cpu/nginx-stock/p256/2cpu",
		}},
		{name: "--scenarios by kind", o: RunOptions{Scenarios: []string{"handshake"}}, find: all, run: []string{
			"handshake-rsa4096/nginx-stock/rsa4096/1cpu", "handshake-rsa4096/caddy-stock/rsa4096/1cpu",
		}},
		{name: "--scenarios keeps the search a rate comes from", o: RunOptions{Scenarios: []string{"capped"}}, find: all, run: []string{
			"keepalive-1k/nginx-stock/p256/1cpu", "keepalive-1k/caddy-stock/p256/1cpu", "capped/caddy-stock/p256/1cpu",
			"keepalive-1k/haproxy/p256/1cpu", "capped/haproxy/p256/1cpu",
		}, notes: []string{"scenario keepalive-1k kept: capped's rate comes from its search (rate_from)"}},
		{name: "--profiles", o: RunOptions{Profiles: []string{"haproxy"}}, find: all, run: []string{
			"keepalive-1k/haproxy/p256/1cpu", "capped/haproxy/p256/1cpu",
		}, notes: []string{
			"scenario keepalive-1k-2cpu dropped: it runs on none of the selected profiles haproxy",
			"scenario handshake-rsa4096 dropped: it runs on none of the selected profiles haproxy",
		}},
		{name: "--keys", o: RunOptions{Keys: "rsa4096"}, find: all, run: []string{
			"handshake-rsa4096/nginx-stock/rsa4096/1cpu", "handshake-rsa4096/caddy-stock/rsa4096/1cpu",
		}, notes: []string{
			"scenario keepalive-1k dropped: the selected keys rsa4096 leave it no key type",
			"scenario keepalive-1k-2cpu dropped: the selected keys rsa4096 leave it no key type",
			"scenario capped dropped: the selected keys rsa4096 leave it no key type",
		}},
		{name: "--scenarios, --profiles and --keys together", o: RunOptions{Scenarios: []string{"keepalive-1k", "handshake-rsa4096"}, Profiles: []string{"nginx-stock"}, Keys: "p256,rsa4096"}, find: all, run: []string{
			// keepalive-1k names a scenario and the kind of another
			"keepalive-1k/nginx-stock/p256/1cpu", "handshake-rsa4096/nginx-stock/rsa4096/1cpu", "keepalive-1k-2cpu/nginx-stock/p256/2cpu",
		}, notes: []string{"scenario capped dropped: it runs on none of the selected profiles nginx-stock"}},
		{name: "--server-cpus overrides a scenario's", o: RunOptions{Scenarios: []string{"keepalive-1k-2cpu"}, ServerCPUs: "1"}, find: all, run: []string{
			"keepalive-1k-2cpu/nginx-stock/p256/1cpu",
		}, notes: []string{"scenario keepalive-1k-2cpu: server CPUs 1 from --server-cpus instead of 2"}},
		{name: "a profile file joins the plan", o: RunOptions{Profiles: []string{mine, "haproxy"}}, find: all, run: []string{
			"keepalive-1k/haproxy/p256/1cpu", "capped/haproxy/p256/1cpu",
			"keepalive-1k/my-nginx/p256/1cpu", "handshake-rsa4096/my-nginx/rsa4096/1cpu", "capped/my-nginx/p256/1cpu",
			"keepalive-1k-2cpu/my-nginx/p256/2cpu",
		}},
		{name: "a built-in not installed is skipped", o: RunOptions{Scenarios: []string{"capped"}}, find: installedOnly(nil, "nginx-stock", "caddy-stock"), run: []string{
			"keepalive-1k/nginx-stock/p256/1cpu", "keepalive-1k/caddy-stock/p256/1cpu", "capped/caddy-stock/p256/1cpu",
		}, skipped: []string{
			"keepalive-1k/haproxy/p256/1cpu: not installed: proxy binary not found: haproxy (test)",
			"capped/haproxy/p256/1cpu: not installed: proxy binary not found: haproxy (test)",
		}, notes: []string{"scenario keepalive-1k kept: capped's rate comes from its search (rate_from)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.Plan, o.StepScale = planFile, 1
			p, run, skipped, err := narrowed(o, c.find)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(run, c.run) || !slices.Equal(skipped, c.skipped) {
				t.Errorf("units:\n%s\nskipped:\n%s\nwant\n%s\nskipped:\n%s", strings.Join(run, "\n"), strings.Join(skipped, "\n"), strings.Join(c.run, "\n"), strings.Join(c.skipped, "\n"))
			}
			if !slices.Equal(p.Notes, c.notes) {
				t.Errorf("notes %q, want %q", p.Notes, c.notes)
			}
		})
	}
}

// The overrides that do not narrow set the plan's fields: --net, --memory,
// --step-scale (every duration, with a note), and --bin the binary of the
// profile it names, in every unit of it.
func TestRunOverridesThePlan(t *testing.T) {
	_, planFile := writeNarrowPlan(t)
	bin, err := os.Executable() // a file that is there and runs: the test binary
	if err != nil {
		t.Fatal(err)
	}
	o := RunOptions{Plan: planFile, StepScale: 0.5, Net: plan.NetNetns, Memory: "512MiB", Bins: []string{"haproxy=" + bin}, Scenarios: []string{"capped"}}
	p, err := preparePlan(o)
	if err != nil {
		t.Fatal(err)
	}
	if p.Net != plan.NetNetns || p.MemoryLimit != 512<<20 {
		t.Errorf("net %q, memory %d: want netns, 512 MiB", p.Net, p.MemoryLimit)
	}
	for _, s := range p.Scenarios {
		if s.Name == "capped" && s.Duration.D() != 1500*time.Millisecond {
			t.Errorf("capped runs %s at --step-scale 0.5, want 1.5s", s.Duration.D())
		}
	}
	if !slices.Contains(p.Notes, "every duration scaled by 0.5 (--step-scale)") {
		t.Errorf("notes %q: no word of the scale", p.Notes)
	}
	topo, allowed := fourCPUs()
	_, units, _, err := planUnits(p, nil, topo, allowed, installedOnly(nil, "nginx-stock", "caddy-stock", "haproxy"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, u := range units {
		if u.Profile.Name == "haproxy" {
			n++
			if u.Profile.Binary != bin {
				t.Errorf("%s runs %s, want --bin's %s", u.ID, u.Profile.Binary, bin)
			}
		} else if u.Profile.Binary == bin {
			t.Errorf("%s runs --bin's binary, given for haproxy only", u.ID)
		}
	}
	if n != 2 {
		t.Errorf("%d haproxy units, want 2", n)
	}
}

// What lab run refuses before any work: one line each, naming the flag and
// what to give instead; bad input is a UsageError (exit 2), a plan none of
// whose proxies is installed is not.
func TestRunRefusesBeforeWork(t *testing.T) {
	dir, planFile := writeNarrowPlan(t)
	mine := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(mine, []byte("name: mine\nextends: haproxy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	all := installedOnly(nil, "nginx-stock", "caddy-stock", "haproxy")
	for _, c := range []struct {
		name  string
		o     RunOptions
		find  func(proxy.Profile) error
		want  string
		usage bool
	}{
		{"unknown scenario", RunOptions{Scenarios: []string{"warp"}}, all, "Selection.Scenarios: warp is not in plan narrow (it has keepalive-1k, keepalive-1k-2cpu, handshake-rsa4096, capped)", true},
		{"a scenario --profiles dropped", RunOptions{Profiles: []string{"nginx-stock"}, Scenarios: []string{"capped"}}, all, "capped is not in plan narrow", true},
		{"unknown profile", RunOptions{Profiles: []string{"h2o"}}, all, "Selection.Profiles: h2o is not in plan narrow (it has nginx-stock, caddy-stock, haproxy)", true},
		{"a key type no scenario keeps", RunOptions{Keys: "rsa2048"}, all, "Selection.Keys rsa2048 leaves no scenario of plan narrow", true},
		{"an unknown key type", RunOptions{Keys: "rsa4096,ed25519"}, all, `--keys: unknown key type "ed25519"`, true},
		{"--bin without a path", RunOptions{Bins: []string{"haproxy"}}, all, `--bin "haproxy": give NAME=PATH`, true},
		{"--bin of an unknown profile", RunOptions{Bins: []string{"envoy=/bin/sh"}}, all, `--bin envoy=/bin/sh: unknown proxy profile "envoy"`, true},
		{"--bin of a missing binary", RunOptions{Bins: []string{"haproxy=" + filepath.Join(dir, "nope")}}, all, "--bin haproxy=" + filepath.Join(dir, "nope") + ": ", true},
		{"--net", RunOptions{Net: "bridge"}, all, `--net "bridge": use loopback or netns`, true},
		{"--server-cpus", RunOptions{ServerCPUs: "x-y"}, all, "--server-cpus: ", true},
		{"--memory", RunOptions{Memory: "lots"}, all, "--memory: ", true},
		{"--step-scale", RunOptions{StepScale: -1}, all, "StepScale must be > 0", true},
		{"a profile named on the command line not installed", RunOptions{Profiles: []string{"haproxy"}}, installedOnly(nil, "nginx-stock"), "profile haproxy is not installed: install the proxies with scripts/install-proxies.sh (make deps), or set LOADLAB_PROXY_BIN", true},
		{"a profile file's binary refused", RunOptions{Profiles: []string{mine}}, installedOnly(map[string]string{"mine": "/x/haproxy: its directory /x is writable by its group or others"}), "profile mine (" + mine + "): cannot use the binary: /x/haproxy: its directory /x is writable by its group or others", true},
		{"nothing installed", RunOptions{}, installedOnly(nil), "none of the plan's proxies is installed ([nginx-stock caddy-stock haproxy])", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.Plan = planFile
			if o.StepScale == 0 {
				o.StepScale = 1
			}
			_, _, _, err := narrowed(o, c.find)
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Errorf("%q, want one line with %q", msg, c.want)
			}
			if ue := (UsageError{}); errors.As(err, &ue) != c.usage {
				t.Errorf("%q: UsageError %v, want %v", msg, !c.usage, c.usage)
			}
		})
	}
}

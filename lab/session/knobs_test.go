package session

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/pin"
)

// Options refuse sysctls in loopback mode and keys a namespace has no
// copy of, naming the key, before anything starts.
func TestSysctlOptionsRefused(t *testing.T) {
	self, _ := os.Executable()
	for o, want := range map[*Options]string{
		{Net: NetLoopback, Sysctls: map[string]string{"net.ipv4.tcp_tw_reuse": "1"}}: "sysctl net.ipv4.tcp_tw_reuse needs the netns network mode",
		{Net: NetNS, Sysctls: map[string]string{"vm.swappiness": "1"}}:               "sysctl vm.swappiness is not one",
		{Net: NetNS, Sysctls: map[string]string{"net.ipv4.no_such": "1"}}:            "sysctl net.ipv4.no_such does not exist",
		{Net: NetNS, ServerQuota: 1, NoCgroups: true}:                                "needs cgroups",
	} {
		o.Dir, o.Self = t.TempDir(), self
		if _, err := Open(context.Background(), *o); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", o, err, want)
		}
	}
}

// tcp_tw_reuse=1 in the proxy's namespace removes nginx-stock's cliff: with
// the range narrowed to 5,000 ports (also a sysctl of the session),
// 8,000 requests at 1,000/s run out of ports by default (at most about
// 5,000 succeed, then 502s, as in seed 003 after 28,231) and pass with
// tw_reuse=1, where a
// port in TIME_WAIT for over a second is reused for the next outgoing
// connection (TcpExt TWRecycled counts them). Both settings read back
// from the namespace.
func TestTwReuseRemovesTheCliff(t *testing.T) {
	realLab(t)
	installedProfile(t, "nginx-stock")
	const ports, requests = 5000, 8000
	run := func(reuse string) (*result.Result, map[string]uint64, map[string]string) {
		e := openSession(t, Options{Net: NetNS, Sysctls: map[string]string{
			"net.ipv4.ip_local_port_range": "40000 44999",
			"net.ipv4.tcp_tw_reuse":        reuse,
		}})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p, err := e.StartProxy(ctx, "nginx-stock", certs.P256)
		if err != nil {
			t.Fatal(err)
		}
		back, err := e.Sysctls()
		if err != nil {
			t.Fatal(err)
		}
		before, err := e.TCPExt()
		if err != nil {
			t.Fatal(err)
		}
		// 8 s at 1,000/s on a quiet machine; up to 20 s on a busy one.
		res := runGen(t, e, p, gen.Config{URL: "/1k", Connections: 20, Rate: 1000, Duration: 20 * time.Second, Requests: requests})
		after, err := e.TCPExt()
		if err != nil {
			t.Fatal(err)
		}
		d := map[string]uint64{}
		for _, k := range []string{"TW", "TWRecycled", "TCPTimeWaitOverflow"} {
			d[k] = after[k] - before[k]
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		return res, d, back
	}
	def, dDef, backDef := run("2")
	t.Logf("tcp_tw_reuse=2: %d ok, status %v, TcpExt %v", def.OK, def.Status, dDef)
	if backDef["net.ipv4.ip_local_port_range"] != "40000 44999" || backDef["net.ipv4.tcp_tw_reuse"] != "2" {
		t.Fatalf("read back %v", backDef)
	}
	// The default never serves more than the range holds (then 502s, or
	// on a busy machine connect() slows down near the range's end first).
	if def.OK > ports+50 {
		t.Errorf("default: %d ok, %d 502s: want the cliff after about %d", def.OK, def.Status["502"], ports)
	}
	reuse, dReuse, backReuse := run("1")
	t.Logf("tcp_tw_reuse=1: %d ok, status %v, TcpExt %v", reuse.OK, reuse.Status, dReuse)
	if backReuse["net.ipv4.tcp_tw_reuse"] != "1" {
		t.Fatalf("read back %v", backReuse)
	}
	// No 502, and more requests served than the range holds (a busy
	// machine may time some out: those are not the cliff).
	if reuse.OK <= ports+ports/10 || reuse.Status["502"] != 0 {
		t.Errorf("tw_reuse=1: %d ok of %d, %d 502s: want no cliff", reuse.OK, requests, reuse.Status["502"])
	}
	if dReuse["TWRecycled"] == 0 || dDef["TWRecycled"] != 0 {
		t.Errorf("TWRecycled %d with reuse, %d without", dReuse["TWRecycled"], dDef["TWRecycled"])
	}
}

// A CPU quota throttles a busy proxy: nginx (two workers, one per online
// CPU) under 0.2 CPU of quota over both CPUs, driven closed-loop, is
// throttled in some 100 ms periods (cpu.stat nr_throttled > 0, the quota
// read back as 0.2); on a 1-CPU cpuset alone it is never throttled. Caddy
// under 1 CPU of quota sets GOMAXPROCS=1 from it (seed 001's log line).
func TestQuotaThrottlesCpusetDoesNot(t *testing.T) {
	realLab(t)
	installedProfile(t, "nginx-keepalive")
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs")
	}
	all, one := pin.NewCPUSet(0, 1), pin.NewCPUSet(0)
	other := pin.NewCPUSet(1)
	open := func(o Options) *Session {
		o.BackendCPUs, o.GenCPUs = other, other
		return openSession(t, o)
	}
	run := func(o Options) (periods, throttled uint64, quota float64) {
		e := open(o)
		defer func() {
			if err := e.Close(); err != nil {
				t.Error(err)
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p, err := e.StartProxy(ctx, "nginx-keepalive", certs.P256)
		if err != nil {
			t.Fatal(err)
		}
		w := p.Watch(200 * time.Millisecond)
		res := runGen(t, e, p, gen.Config{URL: "/1k", Connections: 50, Duration: 3 * time.Second, Requests: 200_000})
		if res.OK == 0 {
			t.Fatalf("no 2xx: %v", res.Errors)
		}
		for _, s := range w.Stop() {
			periods, throttled, quota = periods+s.NrPeriods, throttled+s.NrThrottled, max(quota, s.CPUQuota)
		}
		return
	}
	periods, throttled, quota := run(Options{ServerCPUs: all, ServerQuota: 0.2})
	t.Logf("quota 0.2 over CPUs 0-1: %d periods, %d throttled", periods, throttled)
	if quota != 0.2 || periods == 0 || throttled == 0 {
		t.Errorf("quota %g read back, %d periods, %d throttled: want 0.2 and throttling", quota, periods, throttled)
	}
	periods, throttled, quota = run(Options{ServerCPUs: one})
	t.Logf("1-CPU cpuset: %d periods, %d throttled", periods, throttled)
	if quota != 0 || throttled != 0 {
		t.Errorf("cpuset alone: quota %g, %d throttled of %d periods", quota, throttled, periods)
	}

	if _, err := os.Stat(caddyBinary()); err != nil {
		t.Logf("caddy not installed: GOMAXPROCS check skipped")
		return
	}
	e := open(Options{ServerCPUs: all, ServerQuota: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := e.StartProxy(ctx, "caddy-stock", certs.P256)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p.logFile); !strings.Contains(string(b), "GOMAXPROCS=1: determined from CPU quota") {
		t.Errorf("caddy under 1 CPU of quota did not set GOMAXPROCS=1 from it:\n%s", b)
	}
}

// caddyBinary is where caddy-stock's binary is, "" if nowhere.
func caddyBinary() string {
	prof, err := proxy.Get("caddy-stock")
	if err != nil {
		return ""
	}
	path, _ := prof.Find()
	return path
}

package session

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/pin"
)

func TestScanLogCauses(t *testing.T) {
	log := strings.Join([]string{
		`2026/01/01 10:00:00 [notice] 12#12: start worker processes`,
		`2026/01/01 10:00:01 [crit] 13#13: *5 connect() to 127.0.0.1:8080 failed (99: Cannot assign requested address) while connecting to upstream`,
		`2026/01/01 10:00:01 [crit] 13#13: *6 connect() to 127.0.0.1:8080 failed (99: Cannot assign requested address) while connecting to upstream`,
		`2026/01/01 10:00:02 [error] 13#13: *7 upstream timed out (110: Connection timed out) while reading response header`,
		`{"level":"error","msg":"dial tcp 127.0.0.1:8080: connect: connection refused"}`,
		`{"level":"info","msg":"server running"}`,
		`2026/01/01 10:00:03 [error] 13#13: *8 no live upstreams while connecting to upstream`,
		`[WARNING]  (1) : Server be_app/app is DOWN`,
		``,
	}, "\n")
	lines, causes := scanLog(splitLines([]byte(log)))
	if lines != 5 {
		t.Errorf("%d error lines, want 5", lines)
	}
	got := map[string]int{}
	for _, c := range causes {
		got[c.Key] = c.Count
		if c.Sample == "" || !strings.Contains(strings.ToLower(c.Sample), strings.ToLower(c.What)) {
			t.Errorf("cause %s: sample %q does not contain %q", c.Key, c.Sample, c.What)
		}
	}
	want := map[string]int{"addr_not_avail": 2, "timed_out": 1, "conn_refused": 1, "no_live_upstreams": 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("causes %v, want %v", got, want)
	}
	if causes[0].Key != "addr_not_avail" {
		t.Errorf("causes not in known order: %+v", causes)
	}
}

func TestErrorLogReadsBothFiles(t *testing.T) {
	dir := t.TempDir()
	p := &Proxy{params: proxy.Params{Dir: dir}, logFile: filepath.Join(dir, "proxy.log")}
	if lines, causes, err := p.ErrorLog(); err != nil || lines != 0 || len(causes) != 0 {
		t.Fatalf("no logs: %d %v %v", lines, causes, err)
	}
	os.WriteFile(filepath.Join(dir, "error.log"), []byte("[crit] connect() failed (99: Cannot assign requested address)\n"), 0o600)
	os.WriteFile(p.logFile, []byte(`{"level":"error","msg":"dial tcp: connect: cannot assign requested address"}`+"\n"), 0o600)
	lines, causes, err := p.ErrorLog()
	if err != nil || lines != 2 || causes["addr_not_avail"] != 2 {
		t.Errorf("ErrorLog = %d, %v, %v; want 2 lines, addr_not_avail 2", lines, causes, err)
	}
}

// fakeSession is a Session with just what Aim and TimeWait read.
func fakeSession() (*Session, *Proxy) {
	e := &Session{o: Options{ServerName: "bench.lab"}, ca: "/run/ca.pem", plan: pin.Plan{Gen: pin.NewCPUSet(1)}, running: map[*Proxy]bool{}}
	p := &Proxy{e: e, params: proxy.Params{HTTPPort: 21000, HTTPSPort: 21001}, addr: netip.MustParseAddrPort("127.0.0.1:21001")}
	return e, p
}

// TestProxyAim: a proxy of a loopback session aims at its own addresses,
// with the session's name, CA and generator CPUs, and no namespace.
func TestProxyAim(t *testing.T) {
	_, p := fakeSession()
	a := p.Aim()
	want := Aim{HTTPS: netip.MustParseAddrPort("127.0.0.1:21001"), HTTP: netip.MustParseAddrPort("127.0.0.1:21000"),
		ServerName: "bench.lab", CAFile: "/run/ca.pem", CPUs: pin.NewCPUSet(1)}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("Aim = %+v, want %+v", a, want)
	}
}

func TestProxyURL(t *testing.T) {
	_, p := fakeSession()
	if got := p.URL("/1k"); got != "https://127.0.0.1:21001/1k" {
		t.Errorf("URL = %q", got)
	}
	if got := p.URL("1m"); got != "https://127.0.0.1:21001/1m" {
		t.Errorf("URL without slash = %q", got)
	}
}

func TestTimeWaitRoles(t *testing.T) {
	e, _ := fakeSession()
	if _, err := e.TimeWait("client"); err == nil || !strings.Contains(err.Error(), "proxy, backend or gen") {
		t.Errorf("unknown role error = %v", err)
	}
	if n, err := e.TimeWait(RoleGen); err != nil || n != 0 {
		t.Errorf("gen TIME_WAIT without proxies = %d, %v; want 0", n, err)
	}
}

func TestFreePorts(t *testing.T) {
	lo := netip.MustParseAddr("127.0.0.1")
	ports, err := freePorts(net.Listen, net.ListenPacket, lo, 3, true)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p < portLow || p >= portHigh || seen[p] {
			t.Fatalf("ports %v: out of range or repeated", ports)
		}
		seen[p] = true
		ln, err := net.Listen("tcp", hostPort(lo, p))
		if err != nil {
			t.Fatalf("port %d not free after freePorts: %v", p, err)
		}
		ln.Close()
	}
	busy := func(string, string) (net.Listener, error) { return nil, os.ErrExist }
	if _, err := freePorts(busy, net.ListenPacket, lo, 1, false); err == nil || !strings.Contains(err.Error(), "no 1 free ports") {
		t.Errorf("all ports busy: %v", err)
	}
}

func TestTraversable(t *testing.T) {
	dir := t.TempDir()
	u := runAs{name: "someone", uid: 4242, gid: 4343}
	for _, c := range []struct {
		mode os.FileMode
		want bool
	}{{0o700, false}, {0o755, true}, {0o711, true}, {0o710, false}} {
		os.Chmod(dir, c.mode)
		fi, _ := os.Stat(dir)
		if got := traversable(fi, u); got != c.want {
			t.Errorf("mode %04o: traversable %v, want %v", c.mode, got, c.want)
		}
	}
	os.Chmod(dir, 0o755)
	private := filepath.Join(dir, "private")
	os.Mkdir(private, 0o700)
	if err := reachable(filepath.Join(private, "run"), u); err == nil || !strings.Contains(err.Error(), "cannot reach") {
		t.Errorf("reachable under a 0700 directory: %v", err)
	}
	if err := reachable(filepath.Join(dir, "run"), u); err != nil && !strings.Contains(err.Error(), "cannot reach") {
		t.Errorf("reachable: %v", err)
	}
}

func TestOptionsDefaults(t *testing.T) {
	self, _ := os.Executable()
	o, err := Options{Dir: "rel/dir", Self: self}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(o.Dir) || o.Net != NetLoopback || len(o.Keys) != 3 || o.ServerName != DefaultServerName ||
		o.CertDir != filepath.Join(o.Dir, "certs") || o.ExtraGenAddrs != DefaultExtraGenAddrs || o.ReadyTimeout != DefaultReadyTimeout || o.Log == nil {
		t.Errorf("defaults: %+v", o)
	}
	if o, _ := (Options{Dir: "d", Self: self, ExtraGenAddrs: -1}).withDefaults(); o.ExtraGenAddrs != 0 {
		t.Errorf("ExtraGenAddrs -1 -> %d, want 0", o.ExtraGenAddrs)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{}, "no run directory"},
		{Options{Dir: "d", Net: "bridge", Self: self}, "unknown network mode"},
		{Options{Dir: "d", MemoryLimit: -1, Self: self}, "bad memory limit"},
		{Options{Dir: "d", Keys: []certs.KeyType{"ed25519"}, Self: self}, "unknown key type"},
		{Options{Dir: "d", Self: "/nonexistent/loadlab"}, "Options.Self"},
	} {
		if _, err := c.o.withDefaults(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.o, err, c.want)
		}
	}
}

func TestBodyCheckKey(t *testing.T) {
	for _, c := range []struct{ proto, want string }{{protoH1, "/1k"}, {protoH2, "h2 /1k"}, {protoH3, "h3 /1k"}} {
		if got := (BodyCheck{Proto: c.proto, Path: "/1k"}).Key(); got != c.want {
			t.Errorf("Key(%s) = %q, want %q", c.proto, got, c.want)
		}
	}
}

// AdvertisesH3 reads the Alt-Svc of the HTTPS responses only.
func TestAdvertisesH3(t *testing.T) {
	for _, c := range []struct {
		checks []BodyCheck
		want   bool
	}{
		{[]BodyCheck{{Proto: protoH1, AltSvc: `h3=":443"; ma=2592000`}}, true},
		{[]BodyCheck{{Proto: protoH2, AltSvc: `h3-29=":443", h3=":8443"; ma=86400`}}, true},
		{[]BodyCheck{{Proto: protoH1, AltSvc: `h3-29=":443"`}}, false},
		{[]BodyCheck{{Proto: protoH3, AltSvc: `h3=":443"`}}, false},
		{[]BodyCheck{{Proto: protoH1}}, false},
	} {
		if got := AdvertisesH3(c.checks); got != c.want {
			t.Errorf("%+v: %v, want %v", c.checks, got, c.want)
		}
	}
}

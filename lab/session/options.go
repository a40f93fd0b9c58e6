package session

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/lab/backend"
	"github.com/loadlab/loadlab/lab/cleanup"
	"github.com/loadlab/loadlab/lab/netns"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/pin"
)

// Network modes for Options.Net.
const (
	NetLoopback = "loopback" // everything on 127.0.0.1 in the host namespace
	NetNS       = "netns"    // backend, proxy and generator in their own namespaces, joined by veth through a bridge
)

// DefaultServerName is the one DNS name every proxy serves; the
// certificates carry it, 127.0.0.1 and the netns addresses as SANs.
const DefaultServerName = "bench.lab"

// DefaultProxyUser is the system user proxies run as when loadlab runs as
// root and Options.ProxyUser is empty; Open creates it if missing.
const DefaultProxyUser = "loadlab"

// DefaultExtraGenAddrs is how many source addresses beyond its own the
// generator's namespace gets in netns mode when Options.ExtraGenAddrs is 0.
const DefaultExtraGenAddrs = 15

// DefaultReadyTimeout bounds how long a child may take to answer.
const DefaultReadyTimeout = 10 * time.Second

// netPrefix starts the name of every namespace, bridge and veth the lab
// makes (see lab/netns): "ll<pid>-<n>-<role>".
const netPrefix = "ll"

// Roles of the network namespaces, in address order (.1, .2, .3).
const (
	RoleBackend = "backend"
	RoleProxy   = "proxy"
	RoleGen     = "gen"
)

// Schemes for Options.Scheme.
const (
	SchemeHTTPS = "https" // TLS on the server's HTTPS port (the default)
	SchemeHTTP  = "http"  // plain HTTP on its HTTP port
)

// ServeProfile is the name of the generator's reference target.
const ServeProfile = "loadlab-serve"

// Options configure a Session (one lab session on this machine).
type Options struct {
	Dir       string // run directory; created 0700 (0710 with the proxy user's group when proxies run as another user); subdirs per proxy run
	Net       string // "loopback" (default) | "netns"
	NoCgroups bool   // pin with affinity only, watch via /proc
	// CPUs is a CPU plan made already (a lab run's layout): used as is,
	// and ServerCPUs, BackendCPUs and GenCPUs are ignored. Nil: the
	// session makes one (pin.MakePlan) from those three.
	CPUs        *pin.Plan
	ServerCPUs  pin.CPUSet // proxy cpuset; empty = from pin.MakePlan
	BackendCPUs pin.CPUSet // backend cpuset; empty = from pin.MakePlan
	GenCPUs     pin.CPUSet // generator CPUs (Aim.Config); empty = from pin.MakePlan
	MemoryLimit int64      // proxy cgroup memory limit in bytes (0 = none); seed 001 used 2 GiB
	// ServerQuota and BackendQuota are CFS quotas in cores on the proxy's
	// and the backend's groups, on top of their cpusets (0 = none; needs
	// cgroups with the cpu controller).
	ServerQuota  float64
	BackendQuota float64
	// Sysctls are set in the proxy's network namespace (the listen-queue
	// ones, ListenSysctls, in the backend's too) each time the namespaces
	// are made, before anything starts in them: netns mode only, keys
	// netns.CheckSysctl allows.
	Sysctls map[string]string
	Keys    []certs.KeyType // certificates to prepare (all three by default)
	Log     io.Writer       // progress lines ("starting nginx-stock (p256) on cpus 0 ..."); nil = none
	Self    string          // path of the loadlab binary for `serve` and the exec wrapper (default /proc/self/exe)

	// CertDir holds the certificates (certs.Ensure reuses valid ones);
	// "" = Dir/certs.
	CertDir string
	// ServerName is the Host and SNI every proxy answers; "" =
	// DefaultServerName.
	ServerName string
	// Profiles are the profiles StartProxy names: the built-ins and the
	// profile files of the run; nil = the built-ins.
	Profiles *proxy.Set
	// ProxyUser is the user proxies serve as: the profiles with user: root
	// (nginx, HAProxy, h2o) switch to it through their config (master
	// stays root), the others (Caddy, Traefik) are started as it. "" = DefaultProxyUser (created if missing) when running
	// as root, else the current user. "root" keeps everything as root.
	ProxyUser string
	// ExtraGenAddrs is the number of extra source addresses of the
	// generator's namespace in netns mode (Aim.Config spreads new
	// connections over them); 0 = DefaultExtraGenAddrs, negative = none.
	ExtraGenAddrs int
	// ReadyTimeout bounds the wait for the backend and each proxy to
	// answer; 0 = DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// Scheme is what the lab's own clients speak to the servers under
	// test: the readiness request, the idle-memory request and the
	// restart probes use it, and StartServe listens with it (plain HTTP
	// on the HTTP port, or TLS). "" = SchemeHTTPS. Every profile listens
	// on both ports whatever it is; it is for scenarios over plain HTTP.
	Scheme string
	// Backends is how many backends sit behind every proxy. 0 is the lab's
	// one backend, served as the site ServerName. N >= 1 is N named
	// backends app01..appNN in one loadlab serve (backend.Config.Apps),
	// each routed by host name (appNN.lab.test to backend NN, Routes):
	// the lab's own requests (readiness, idle memory, checks) then use the
	// first app's host, app01.lab.test.
	Backends int
	// Janitor, if set, gets the Session's Close as an undo step, so a signal
	// handler installed with Janitor.OnSignal cleans up the lab too.
	Janitor *cleanup.Janitor
}

// withDefaults fills unset fields and checks the rest.
func (o Options) withDefaults() (Options, error) {
	if strings.TrimSpace(o.Dir) == "" {
		return o, fmt.Errorf("no run directory given: set Options.Dir (e.g. results/lab)")
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return o, fmt.Errorf("run directory %s: %v", o.Dir, err)
	}
	o.Dir = abs
	switch o.Net {
	case "":
		o.Net = NetLoopback
	case NetLoopback, NetNS:
	default:
		return o, fmt.Errorf("unknown network mode %q: use loopback or netns", o.Net)
	}
	switch o.Scheme {
	case "":
		o.Scheme = SchemeHTTPS
	case SchemeHTTP, SchemeHTTPS:
	default:
		return o, fmt.Errorf("unknown scheme %q: use http or https", o.Scheme)
	}
	if o.MemoryLimit < 0 {
		return o, fmt.Errorf("bad memory limit %d: want bytes > 0, or 0 for none", o.MemoryLimit)
	}
	for k, v := range o.Sysctls {
		if o.Net != NetNS {
			return o, fmt.Errorf("sysctl %s needs the netns network mode: in loopback mode it would change the host's setting", k)
		}
		if err := netns.CheckSysctl(k); err != nil {
			return o, err
		}
		if err := netns.CheckSysctlValue(k, v); err != nil {
			return o, err
		}
	}
	for _, q := range []struct {
		name string
		v    float64
	}{{"server", o.ServerQuota}, {"backend", o.BackendQuota}} {
		if q.v < 0 || q.v != q.v {
			return o, fmt.Errorf("bad %s CPU quota %g: want cores > 0, or 0 for none", q.name, q.v)
		}
		if q.v > 0 && o.NoCgroups {
			return o, fmt.Errorf("a %s CPU quota needs cgroups: drop --no-cgroups or the quota", q.name)
		}
	}
	if len(o.Keys) == 0 {
		o.Keys = certs.AllKeyTypes()
	}
	for _, k := range o.Keys {
		if !k.Valid() {
			return o, fmt.Errorf("unknown key type %q: use p256, rsa2048 or rsa4096", k)
		}
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Self == "" {
		o.Self = "/proc/self/exe"
	}
	if _, err := os.Stat(o.Self); err != nil {
		return o, fmt.Errorf("loadlab binary %s: %v; set Options.Self to the loadlab executable", o.Self, err)
	}
	if o.CertDir == "" {
		o.CertDir = filepath.Join(o.Dir, "certs")
	}
	if o.ServerName == "" {
		o.ServerName = DefaultServerName
	}
	if o.ExtraGenAddrs == 0 {
		o.ExtraGenAddrs = DefaultExtraGenAddrs
	}
	if o.ExtraGenAddrs < 0 {
		o.ExtraGenAddrs = 0
	}
	if o.Backends < 0 || o.Backends > backend.MaxApps {
		return o, fmt.Errorf("bad backend count %d: want 0 (the lab's one site) to %d named backends", o.Backends, backend.MaxApps)
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	return o, nil
}

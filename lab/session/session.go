package session

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/lab/cgroup"
	"github.com/loadlab/loadlab/lab/cleanup"
	"github.com/loadlab/loadlab/lab/netns"
	"github.com/loadlab/loadlab/pin"
)

// Session is one lab session: backend, certificates, CPU plan, cgroups and
// namespaces. Create it with Open; Close undoes everything.
type Session struct {
	o     Options
	plan  pin.Plan
	user  runAs
	cg    *cgroup.Manager // nil with NoCgroups
	certs map[certs.KeyType]certs.Paths
	ca    string // CA certificate file clients trust
	pool  *x509.CertPool

	backend *backendChild
	reaper  *cleanup.Reaper // nil when it could not start

	j cleanup.Janitor

	mu       sync.Mutex
	lab      *netns.Lab // nil in loopback mode; replaced by Renew
	renewals int        // namespaces made after the first (Renew)
	seq      int
	running  map[*Proxy]bool
	closed   bool
}

// Open prepares the lab: removes what crashed runs left, makes the CPU
// plan, the run directory and the certificates, the cgroup manager (a clear
// one-line error when cgroups are not writable: use --no-cgroups), the
// network namespaces in netns mode, and starts the backend under its own
// cgroup on the backend CPUs, waiting until it answers. On error everything
// made so far is undone.
func Open(ctx context.Context, o Options) (*Session, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Session{o: o, running: map[*Proxy]bool{}}
	if o.Janitor != nil {
		o.Janitor.Add("close the lab", e.Close)
	}
	if err := e.open(ctx); err != nil {
		if cerr := e.Close(); cerr != nil {
			err = fmt.Errorf("%w (cleanup: %v)", err, cerr)
		}
		return nil, err
	}
	return e, nil
}

func (e *Session) open(ctx context.Context) error {
	o := e.o
	if removed, err := RemoveLeftovers(!o.NoCgroups); len(removed) > 0 || err != nil {
		if len(removed) > 0 {
			fmt.Fprintf(o.Log, "removed leftovers of crashed runs: %s\n", strings.Join(removed, ", "))
		}
		if err != nil {
			fmt.Fprintf(o.Log, "note: leftovers not all removed: %v\n", oneLine(err))
		}
	}
	// Registered first, so that it runs last: the reaper stays until
	// everything else is undone.
	e.j.Add("stop the reaper", e.stopReaper)
	if err := e.makePlan(); err != nil {
		return err
	}
	var err error
	if e.user, err = resolveProxyUser(o.ProxyUser, o.Log); err != nil {
		return err
	}
	// Namespaces before cgroups: the janitor runs last-added first, so it
	// removes the cgroups (killing whatever is left in them) before it
	// unpins the namespaces those processes sat in.
	if o.Net == NetNS {
		if err := e.newLab(); err != nil {
			return err
		}
		e.j.Add("remove network namespaces", e.closeLab)
	}
	if !o.NoCgroups {
		m, err := cgroup.NewManager("")
		if err != nil {
			return errors.New(oneLine(err))
		}
		e.cg = m
		e.j.Add("remove cgroups", m.Cleanup)
		if (o.ServerQuota > 0 || o.BackendQuota > 0) && !m.CanQuota() {
			return fmt.Errorf("a CPU quota needs the cgroup cpu controller, which this process cannot use (cgroup %s): mount or delegate it, or drop the quota", m.Version())
		}
	}
	// After the cgroups: on v2 the manager may move this process into a
	// leaf of its own, which it can only do while it is alone in its
	// cgroup.
	e.startReaper()
	e.logPlan()
	if err := makeRunDir(o.Dir, e.user); err != nil {
		return err
	}
	if err := e.ensureCerts(); err != nil {
		return err
	}
	return e.startBackend(ctx)
}

// newLab makes the network namespaces (backend, proxy, generator) joined by
// a bridge.
func (e *Session) newLab() error {
	l, err := netns.NewLab(netPrefix, []string{RoleBackend, RoleProxy, RoleGen}, e.o.ExtraGenAddrs)
	if err != nil {
		return err
	}
	if err := e.applySysctls(l); err != nil {
		return errors.Join(err, l.Close())
	}
	e.mu.Lock()
	e.lab = l
	e.mu.Unlock()
	return nil
}

// closeLab removes the current network namespaces (idempotent).
func (e *Session) closeLab() error {
	if l := e.netLab(); l != nil {
		return l.Close()
	}
	return nil
}

// netLab is the current network lab (nil in loopback mode).
func (e *Session) netLab() *netns.Lab {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lab
}

// makePlan splits the CPUs between proxy, backend and generator.
func (e *Session) makePlan() error {
	topo, err := pin.ReadTopology()
	if err != nil {
		return err
	}
	allowed, err := pin.Allowed()
	if err != nil {
		return err
	}
	p, err := pin.MakePlan(topo, allowed, pin.PlanRequest{ServerCPUs: e.o.ServerCPUs, BackendCPUs: e.o.BackendCPUs, LoadgenCPUs: e.o.LoadgenCPUs})
	if err != nil {
		return err
	}
	e.plan = p
	return nil
}

// logPlan prints the CPU plan and its notes.
func (e *Session) logPlan() {
	p := e.plan
	fmt.Fprintf(e.o.Log, "cpus: proxy %s, backend %s, generator %s\n", p.Server, p.Backend, p.Loadgen)
	for _, n := range p.Notes {
		fmt.Fprintf(e.o.Log, "  %s\n", n)
	}
}

// ensureCerts creates or reuses a certificate per key type with the lab's
// server name, 127.0.0.1 and the netns addresses as SANs.
func (e *Session) ensureCerts() error {
	names := []string{e.o.ServerName, "127.0.0.1"}
	for _, a := range roleAddrs() {
		names = append(names, a.String())
	}
	r, err := certs.EnsureResult(certs.Options{Dir: e.o.CertDir, Keys: e.o.Keys, Names: names})
	if err != nil {
		return fmt.Errorf("certificates in %s: %v", e.o.CertDir, err)
	}
	e.certs = map[certs.KeyType]certs.Paths{}
	for _, k := range r.Keys {
		l := r.Leaves[k]
		e.certs[k] = l.Paths
		if l.Action != certs.Reused {
			fmt.Fprintf(e.o.Log, "certificate %s %s (%s)\n", k, l.Action, l.Reason)
		}
	}
	e.ca = r.CA.Cert
	if e.pool, err = certs.LoadCertPool(e.ca); err != nil {
		return err
	}
	return nil
}

// Close stops every proxy and the backend, removes the cgroups and the
// network namespaces. It is idempotent and safe from a signal handler's
// janitor while other calls run.
func (e *Session) Close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	return e.j.Run()
}

// Plan returns the CPU groups in use; Notes say which groups share a core
// and which hyperthread siblings stay idle.
func (e *Session) Plan() pin.Plan { return e.plan }

// Net returns the network mode: "loopback" or "netns".
func (e *Session) Net() string { return e.o.Net }

// Keys returns the certificate key types this session serves.
func (e *Session) Keys() []certs.KeyType { return e.o.Keys }

// ServerName returns the DNS name every proxy serves.
func (e *Session) ServerName() string { return e.o.ServerName }

// Dir returns the run directory.
func (e *Session) Dir() string { return e.o.Dir }

// CAFile returns the PEM file of the CA that signed every proxy
// certificate.
func (e *Session) CAFile() string { return e.ca }

// Cgroups reports whether children run in cgroups (false with NoCgroups)
// and, if so, the run directories that hold them (loadlab-<pid>).
func (e *Session) Cgroups() (on bool, runDirs []string) {
	if e.cg == nil {
		return false, nil
	}
	return true, e.cg.RunDirs()
}

// ProxyUser returns the user proxies serve as.
func (e *Session) ProxyUser() string { return e.user.String() }

// NSPath returns the namespace file of a role in netns mode ("" in
// loopback mode).
func (e *Session) NSPath(role string) string {
	if l := e.netLab(); l != nil {
		return l.NSPath(role)
	}
	return ""
}

// checkOpen returns an error once Close has begun.
func (e *Session) checkOpen() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errors.New("lab already closed")
	}
	return nil
}

// oneLine joins a multi-line error into one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}

package session

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/lab/backend"
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

func (s *Session) open(ctx context.Context) error {
	o := s.o
	if removed, err := RemoveLeftovers(!o.NoCgroups); len(removed) > 0 || err != nil {
		if len(removed) > 0 {
			fmt.Fprintf(o.Log, "removed leftovers of crashed runs: %s\n", strings.Join(removed, ", "))
		}
		if err != nil {
			fmt.Fprintf(o.Log, "note: leftovers not all removed: %v; as root, loadlab lab cleanup removes them\n", oneLine(err))
		}
	}
	// Registered first, so that it runs last: the reaper stays until
	// everything else is undone.
	s.j.Add("stop the reaper", s.stopReaper)
	if err := s.makePlan(); err != nil {
		return err
	}
	var err error
	if s.user, err = resolveProxyUser(o.ProxyUser, o.Log); err != nil {
		return err
	}
	// Namespaces before cgroups: the janitor runs last-added first, so it
	// removes the cgroups (killing whatever is left in them) before it
	// unpins the namespaces those processes sat in.
	if o.Net == NetNS {
		if err := s.newLab(); err != nil {
			return err
		}
		s.j.Add("remove network namespaces", s.closeLab)
	}
	if !o.NoCgroups {
		m, err := cgroup.NewManager("")
		if err != nil {
			return errors.New(oneLine(err))
		}
		s.cg = m
		s.j.Add("remove cgroups", m.Cleanup)
		if (o.ServerQuota > 0 || o.BackendQuota > 0) && !m.CanQuota() {
			return fmt.Errorf("a CPU quota needs the cgroup cpu controller, which this process cannot use (cgroup %s): mount or delegate it, or drop the quota", m.Version())
		}
	}
	// After the cgroups: on v2 the manager may move this process into a
	// leaf of its own, which it can only do while it is alone in its
	// cgroup.
	s.startReaper()
	s.logPlan()
	if err := makeRunDir(o.Dir, s.user); err != nil {
		return err
	}
	if err := s.ensureCerts(); err != nil {
		return err
	}
	return s.startBackend(ctx)
}

// newLab makes the network namespaces (backend, proxy, generator) joined by
// a bridge.
func (s *Session) newLab() error {
	l, err := netns.NewLab(netPrefix, []string{RoleBackend, RoleProxy, RoleGen}, s.o.ExtraGenAddrs)
	if err != nil {
		return err
	}
	if err := s.applySysctls(l); err != nil {
		return errors.Join(err, l.Close())
	}
	s.mu.Lock()
	s.lab = l
	s.mu.Unlock()
	return nil
}

// closeLab removes the current network namespaces (idempotent).
func (s *Session) closeLab() error {
	if l := s.netLab(); l != nil {
		return l.Close()
	}
	return nil
}

// netLab is the current network lab (nil in loopback mode).
func (s *Session) netLab() *netns.Lab {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lab
}

// makePlan splits the CPUs between proxy, backend and generator (or takes
// the plan given).
func (s *Session) makePlan() error {
	if s.o.CPUs != nil {
		s.plan = *s.o.CPUs
		s.plan.Notes = slices.Clone(s.plan.Notes)
		return nil
	}
	topo, err := pin.ReadTopology()
	if err != nil {
		return err
	}
	allowed, err := pin.Allowed()
	if err != nil {
		return err
	}
	p, err := pin.MakePlan(topo, allowed, pin.PlanRequest{ServerCPUs: s.o.ServerCPUs, BackendCPUs: s.o.BackendCPUs, GenCPUs: s.o.GenCPUs})
	if err != nil {
		return err
	}
	s.plan = p
	return nil
}

// logPlan prints the CPU plan and its notes.
func (s *Session) logPlan() {
	p := s.plan
	fmt.Fprintf(s.o.Log, "cpus: proxy %s, backend %s, generator %s\n", p.Server, p.Backend, p.Gen)
	for _, n := range p.Notes {
		fmt.Fprintf(s.o.Log, "  %s\n", n)
	}
}

// ensureCerts creates or reuses a certificate per key type with the lab's
// server name, 127.0.0.1 and the netns addresses as SANs.
func (s *Session) ensureCerts() error {
	// *.lab.test: the named backends' hosts (Options.Backends), in every
	// session, so that one set of certificates serves all of a run.
	names := []string{s.o.ServerName, "*." + backend.AppDomain, "127.0.0.1"}
	for _, a := range roleAddrs() {
		names = append(names, a.String())
	}
	r, err := certs.EnsureResult(certs.Options{Dir: s.o.CertDir, Keys: s.o.Keys, Names: names})
	if err != nil {
		return fmt.Errorf("certificates in %s: %v", s.o.CertDir, err)
	}
	s.certs = map[certs.KeyType]certs.Paths{}
	for _, k := range r.Keys {
		l := r.Leaves[k]
		s.certs[k] = l.Paths
		if l.Action != certs.Reused {
			fmt.Fprintf(s.o.Log, "certificate %s %s (%s)\n", k, l.Action, l.Reason)
		}
	}
	s.ca = r.CA.Cert
	if s.pool, err = certs.LoadCertPool(s.ca); err != nil {
		return err
	}
	return nil
}

// Close stops every proxy and the backend, removes the cgroups and the
// network namespaces. It is idempotent and safe from a signal handler's
// janitor while other calls run.
func (s *Session) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return s.j.Run()
}

// Plan returns the CPU groups in use; Notes say which groups share a core
// and which hyperthread siblings stay idle.
func (s *Session) Plan() pin.Plan { return s.plan }

// Net returns the network mode: "loopback" or "netns".
func (s *Session) Net() string { return s.o.Net }

// Keys returns the certificate key types this session serves.
func (s *Session) Keys() []certs.KeyType { return s.o.Keys }

// ServerName returns the DNS name every proxy serves as the lab's one
// site (Options.Backends 0).
func (s *Session) ServerName() string { return s.o.ServerName }

// Host is the Host header and SNI of the lab's own requests through a
// proxy (readiness, idle memory, checks) and the generator's default: the
// server name, or with named backends the first app's host.
func (s *Session) Host() string {
	if s.o.Backends > 0 {
		return backend.AppHost(1)
	}
	return s.o.ServerName
}

// Dir returns the run directory.
func (s *Session) Dir() string { return s.o.Dir }

// CAFile returns the PEM file of the CA that signed every proxy
// certificate.
func (s *Session) CAFile() string { return s.ca }

// Cgroups reports whether children run in cgroups (false with NoCgroups)
// and, if so, the run directories that hold them (loadlab-<pid>).
func (s *Session) Cgroups() (on bool, runDirs []string) {
	if s.cg == nil {
		return false, nil
	}
	return true, s.cg.RunDirs()
}

// ProxyUser returns the user proxies serve as.
func (s *Session) ProxyUser() string { return s.user.String() }

// NSPath returns the namespace file of a role in netns mode ("" in
// loopback mode).
func (s *Session) NSPath(role string) string {
	if l := s.netLab(); l != nil {
		return l.NSPath(role)
	}
	return ""
}

// checkOpen returns an error once Close has begun.
func (s *Session) checkOpen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("lab already closed")
	}
	return nil
}

// oneLine joins a multi-line error into one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}

// roleAddrs are the addresses lab/netns gives the roles, in the order Open
// creates them (RoleBackend, RoleProxy, RoleGen get .1, .2, .3 of
// netns.Subnet). They go into the certificates' SANs in every mode, so one
// set of certificates serves loopback and netns runs.
func roleAddrs() []netip.Addr {
	a := netns.Subnet.Addr()
	var out []netip.Addr
	for range []string{RoleBackend, RoleProxy, RoleGen} {
		a = a.Next()
		out = append(out, a)
	}
	return out
}

package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/fields"
	"github.com/loadlab/loadlab/internal/safefs"
	"github.com/loadlab/loadlab/lab/cgroup"
	"github.com/loadlab/loadlab/lab/proc"
	"github.com/loadlab/loadlab/lab/proxy"
)

// errPortInUse marks a start that failed because a port was taken.
var errPortInUse = errors.New("a listening port is already in use")

// pickPorts chooses the proxy's ports (a variable for the retry test).
var pickPorts = freePorts

// startAttempts bounds StartProxy's tries when a picked port was taken
// before the proxy could bind it.
const startAttempts = 3

// stopGrace is how long a proxy may take to exit after its stop signal
// before the rest of its group is killed.
const stopGrace = 5 * time.Second

// switchedWrites are the files a user: root server writes in its
// directory after it switched to the proxy user (h2o's pid file), by
// server software: that directory stays root's (giveProxyDir), so they
// are made beforehand, the proxy user's.
var switchedWrites = map[string][]string{"h2o": {"h2o.pid"}}

// docRoot is the directory, in a server's own run directory, that the lab
// fills with proxy.FilePaths for an origin profile.
const docRoot = "www"

// Proxy is one running proxy profile with one certificate key type.
type Proxy struct {
	e        *Session
	prof     proxy.Profile
	key      certs.KeyType
	path     string
	version  string
	name     string // <profile>-<key>-<n>: directory and cgroup name
	params   proxy.Params
	addr     netip.AddrPort // HTTPS (TCP, and UDP for h3)
	httpAddr netip.AddrPort // plain HTTP
	specUser string         // user the wrapper switches to ("" = none)
	logFile  string         // the proxy's stdout and stderr
	errlog   logScan        // what ErrorLog read of its logs so far

	mu       sync.Mutex
	proc     *proc.Process
	group    cgroup.Group
	launches int
	stopped  bool
}

// StartProxy renders profile for the key type into Dir/<profile>-<key>-<n>/
// (0700, owned by the proxy user), starts it under a fresh cgroup
// (ServerCPUs, MemoryLimit) in the proxy namespace, as the unprivileged
// proxy user where the proxy supports it, and waits until it answers. A
// missing binary gives an error wrapping proxy.ErrNotFound that says how to
// install it.
func (s *Session) StartProxy(ctx context.Context, profile string, key certs.KeyType) (*Proxy, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	prof, err := s.o.Profiles.Get(profile)
	if err != nil {
		return nil, err
	}
	return s.start(ctx, prof, key)
}

// start prepares and launches one instance of prof with key's certificate.
func (s *Session) start(ctx context.Context, prof proxy.Profile, key certs.KeyType) (*Proxy, error) {
	profile := prof.Name
	paths, ok := s.certs[key]
	if !ok {
		return nil, fields.Errorf("no %s certificate in this lab: add %s to {Options.Keys}", key, key)
	}
	path, err := prof.Find()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", profile, err)
	}
	version, err := prof.Version(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", profile, err)
	}
	for attempt := 1; ; attempt++ {
		s.mu.Lock()
		s.seq++
		n := s.seq
		s.mu.Unlock()
		p := &Proxy{e: s, prof: prof, key: key, path: path, version: version, name: fmt.Sprintf("%s-%s-%d", profile, key, n)}
		if err := p.prepare(paths); err != nil {
			return nil, err
		}
		s.j.Add("stop "+p.name, p.Stop)
		err := p.launch(ctx, readyRequest)
		if err == nil {
			s.mu.Lock()
			s.running[p] = true
			s.mu.Unlock()
			return p, nil
		}
		_ = p.Stop()
		// The ports were free when picked; another program may have
		// taken one before the proxy bound it.
		if attempt < startAttempts && errors.Is(err, errPortInUse) {
			fmt.Fprintf(s.o.Log, "%s: a port was taken meanwhile; trying other ports\n", profile)
			continue
		}
		return nil, err
	}
}

// prepare makes the proxy's directory with its own copies of the
// certificate files (readable by the proxy user, who cannot read the
// lab's certificate directory), picks ports and renders the config, all
// while the directory is root's, then gives it to the proxy
// (giveProxyDir).
func (p *Proxy) prepare(paths certs.Paths) error {
	e := p.e
	dir := filepath.Join(e.o.Dir, p.name)
	if err := makeProxyDir(dir); err != nil {
		return err
	}
	prm := proxy.Params{
		Binary:      p.path,
		Dir:         dir,
		CertFile:    filepath.Join(dir, "fullchain.pem"),
		KeyFile:     filepath.Join(dir, "key.pem"),
		CombinedPEM: filepath.Join(dir, "combined.pem"),
		CAFile:      filepath.Join(dir, "ca.pem"),
		KeyType:     string(p.key),
		ServerName:  e.o.ServerName,
		Workers:     len(e.plan.Server),
		BackendHost: e.backend.addr.Addr().String(),
		BackendPort: int(e.backend.addr.Port()),
		Routes:      e.routes(),
	}
	for src, dst := range map[string]string{paths.FullChain: prm.CertFile, paths.Key: prm.KeyFile, paths.Combined: prm.CombinedPEM, paths.CA: prm.CAFile} {
		if err := copyPrivate(src, dst); err != nil {
			return err
		}
	}
	host, err := e.hostFor(RoleProxy)
	if err != nil {
		return err
	}
	listen, listenPacket := e.listenIn(RoleProxy)
	ports, err := pickPorts(listen, listenPacket, host, 2, true)
	if err != nil {
		return err
	}
	prm.ListenHost, prm.HTTPPort, prm.HTTPSPort = host.String(), ports[0], ports[1]
	if p.prof.IsOrigin() {
		// Readable by the proxy user: world-readable files (WriteFiles)
		// in a directory given to it or to its group (giveProxyDir).
		prm.Root = filepath.Join(dir, docRoot)
		if err := proxy.WriteFiles(prm.Root); err != nil {
			return fmt.Errorf("%s: %v", p.prof.Name, err)
		}
	}
	// The user it serves as: a user: root profile's config hands it to
	// the server (its master keeps root); the others are started as it.
	switch {
	case e.user.switches():
		prm.User = e.user.name
		if p.prof.User != proxy.UserRoot {
			p.specUser = e.user.name
		}
	case os.Geteuid() == 0:
		prm.User = "root"
	}
	if _, err := proxy.WriteConfig(p.prof, prm); err != nil {
		return fmt.Errorf("%s: %v", p.prof.Name, err)
	}
	if err := giveProxyDir(dir, e.user, p.prof.User == proxy.UserRoot, switchedWrites[p.prof.Proxy]); err != nil {
		return err
	}
	p.params = prm
	p.addr = netip.AddrPortFrom(host, uint16(prm.HTTPSPort))
	p.httpAddr = netip.AddrPortFrom(host, uint16(prm.HTTPPort))
	p.logFile = filepath.Join(dir, "proxy.log")
	return nil
}

// How launch waits for a proxy.
const (
	// readyRequest: GET /1k through the proxy answers the backend's bytes.
	readyRequest = iota
	// readyHandshake: a TLS handshake with the lab's certificate succeeds,
	// and the connection is reset: nothing reaches the backend and no
	// socket is left in TIME_WAIT (Renew's restarts).
	readyHandshake
)

// launch starts one instance of the proxy in a fresh cgroup and waits until
// it is ready (ready: readyRequest or readyHandshake).
func (p *Proxy) launch(ctx context.Context, ready int) error {
	e := p.e
	p.mu.Lock()
	p.launches++
	group := p.name
	if p.launches > 1 {
		group = fmt.Sprintf("%s-r%d", p.name, p.launches-1)
	}
	p.stopped = false
	p.mu.Unlock()
	cpus := e.plan.Server.String()
	var g cgroup.Group
	if e.cg != nil {
		var err error
		lim := cgroup.Limits{CPUs: cpus, MemoryBytes: e.o.MemoryLimit}
		if p.prof.Name != ServeProfile {
			// The generator's ceiling (loadlab serve in the proxy's
			// place) measures the generator: no quota holds it back.
			lim.CPUQuota = e.o.ServerQuota
		}
		if g, err = e.cg.Create(group, lim); err != nil {
			return err
		}
	}
	argv, err := p.prof.Command(p.params)
	if err != nil {
		if g != nil {
			_ = g.Remove()
		}
		return err
	}
	if ready == readyRequest {
		fmt.Fprintf(e.o.Log, "starting %s (%s) on cpus %s%s as %s: %s\n", p.prof.Name, p.key, cpus, quotaWords(e.o.ServerQuota, p.prof.Name), p.runsAs(), p.version)
	}
	pr, err := proc.Start(proc.Spec{
		Name:       p.prof.Name,
		Path:       argv[0],
		Args:       argv[1:],
		Env:        p.environ(),
		Dir:        p.params.Dir,
		Group:      g,
		CPUs:       cpus,
		NetNS:      e.NSPath(RoleProxy),
		User:       p.specUser,
		Stdout:     p.logFile,
		Stderr:     p.logFile,
		StopSignal: proxy.StopSignal,
		Wrapper:    e.o.Self,
	})
	if err != nil {
		if g != nil {
			_ = g.Remove()
		}
		return err
	}
	e.track(pr.PID())
	if g == nil {
		g = cgroup.ProcessTree(group, pr.PID())
	}
	p.mu.Lock()
	p.proc, p.group = pr, g
	p.mu.Unlock()
	return p.waitReady(ctx, pr, ready)
}

// runsAs says whom the server is started as: root for a user: root
// profile, whose config switches to the proxy user itself.
func (p *Proxy) runsAs() string {
	if p.prof.User == proxy.UserRoot && p.e.user.switches() {
		return "root (its config switches to " + p.e.user.name + ")"
	}
	return p.e.user.String()
}

// environ is what the proxy's environment adds to lab/proc's minimal one
// (PATH of the system directories, HOME, LANG=C; nothing else of ours):
// HOME and the XDG directories inside the proxy's own directory, where
// Caddy and Traefik, started as the proxy user, may write.
func (p *Proxy) environ() []string {
	d := p.params.Dir
	return []string{"HOME=" + d, "XDG_CONFIG_HOME=" + filepath.Join(d, "config"), "XDG_DATA_HOME=" + filepath.Join(d, "data")}
}

// waitReady polls GET /1k through the proxy (Host and SNI = server name,
// chain verified against the lab CA) until it answers 200 with the
// backend's bytes (readyHandshake: until a TLS handshake succeeds), the
// process exits, or the ready timeout passes.
func (p *Proxy) waitReady(ctx context.Context, pr *proc.Process, ready int) error {
	probe := p.probe
	if ready == readyHandshake {
		probe = p.probeHandshake
	}
	ctx, cancel := context.WithTimeout(ctx, p.e.o.ReadyTimeout)
	defer cancel()
	var last error
	for {
		if pr.Exited() {
			return p.startExited(pr)
		}
		if last = probe(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return p.startTimedOut(last)
			}
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// probe makes one request of /1k on a new connection, over the session's
// scheme (probeScheme).
func (p *Proxy) probe(ctx context.Context) error { return p.probeScheme(ctx, p.e.o.Scheme) }

// probeHandshake makes one TLS handshake with the proxy (the lab's CA and
// server name) and resets the connection; over plain HTTP, a TCP connect
// that is reset.
func (p *Proxy) probeHandshake(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if p.e.o.Scheme == SchemeHTTP {
		c, err := p.e.dialContext(ctx, "tcp", p.httpAddr.String())
		if err != nil {
			return err
		}
		resetOnClose(c)
		return c.Close()
	}
	_, err := p.e.servedLeaf(ctx, p.addr.String())
	return err
}

// Stop stops the proxy (its stop signal, then SIGKILL to its whole cgroup
// after a grace period) and removes its cgroup. It is idempotent.
func (p *Proxy) Stop() error {
	p.mu.Lock()
	pr, g := p.proc, p.group
	already := p.stopped
	p.stopped = true
	p.mu.Unlock()
	p.e.mu.Lock()
	delete(p.e.running, p)
	p.e.mu.Unlock()
	if already || pr == nil {
		return nil
	}
	fmt.Fprintf(p.e.o.Log, "stopping %s (%s)\n", p.prof.Name, p.key)
	return p.stopInstance(pr, g)
}

// stopInstance stops one launched instance and removes its group.
func (p *Proxy) stopInstance(pr *proc.Process, g cgroup.Group) error {
	err := pr.Stop(stopGrace)
	p.e.untrack(pr.PID())
	if g != nil {
		if rerr := g.Remove(); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// Profile returns the proxy's profile.
func (p *Proxy) Profile() proxy.Profile { return p.prof }

// Key returns the certificate key type it serves.
func (p *Proxy) Key() certs.KeyType { return p.key }

// Version returns the binary's version, e.g. "nginx 1.22.1".
func (p *Proxy) Version() string { return p.version }

// ServerName returns the Host and SNI the lab's own requests through the
// proxy use (Session.Host).
func (p *Proxy) ServerName() string { return p.e.Host() }

// Name returns the run's name for this proxy, <profile>-<key>-<n>, which is
// also its directory under the run directory.
func (p *Proxy) Name() string { return p.name }

// Dir returns the proxy's directory (config, certificate copies, logs).
func (p *Proxy) Dir() string { return p.params.Dir }

// Params returns the parameters its config was rendered with.
func (p *Proxy) Params() proxy.Params { return p.params }

// Addr returns the proxy's HTTPS address (TCP; UDP for HTTP/3).
func (p *Proxy) Addr() string { return p.addr.String() }

// URL returns https://ADDRESS:PORT/path as the generator must dial it: the
// address literal in the URL; Aim.Config sets Host and SNI to the server
// name.
func (p *Proxy) URL(path string) string {
	if path == "" || path[0] != '/' {
		path = "/" + path
	}
	return "https://" + p.addr.String() + path
}

// PID returns the process id of the running instance (the proxy's master).
func (p *Proxy) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc == nil {
		return 0
	}
	return p.proc.PID()
}

// Exited reports whether the running instance has exited by itself or
// been stopped.
func (p *Proxy) Exited() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.proc == nil || p.proc.Exited()
}

// Group returns the running instance's group: its cgroup, or a /proc
// process tree with NoCgroups.
func (p *Proxy) Group() cgroup.Group {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.group
}

// Stats reads the running instance's group counters (CPU, memory,
// processes, threads).
func (p *Proxy) Stats() (cgroup.Stats, error) {
	g := p.Group()
	if g == nil {
		return cgroup.Stats{}, fmt.Errorf("%s is not running", p.name)
	}
	return g.Stats()
}

// logFiles are the files a proxy logs to: its error log where the config
// names one (nginx, h2o), and its stdout and stderr (the rest).
func (p *Proxy) logFiles() []string {
	return []string{filepath.Join(p.params.Dir, "error.log"), p.logFile}
}

// ErrorLog reads the proxy's error log (and its output, where Caddy,
// Traefik and HAProxy write errors) over its whole life, restarts
// included: lines is the number of lines reporting an error, causes
// counts the lines matching known causes by key ("addr_not_avail" for
// "Cannot assign requested address", "conn_refused", "timed_out",
// "no_live_upstreams", ...). ErrorCauses gives a sample line of each.
// Each call reads only what was written since the last one.
func (p *Proxy) ErrorLog() (lines int, causes map[string]int, err error) {
	lines, list, err := p.ErrorCauses()
	causes = map[string]int{}
	for _, c := range list {
		causes[c.Key] = c.Count
	}
	return lines, causes, err
}

// ErrorCauses is ErrorLog with the matched text and first line of each
// cause, in the order of the known causes.
func (p *Proxy) ErrorCauses() (lines int, causes []Cause, err error) {
	t, err := p.errlog.scan(p.logFiles())
	if err != nil {
		return 0, nil, err
	}
	return t.errLines, t.list(), nil
}

// CutLines is how many lines of the proxy's logs were longer than the
// buffer they are read through (logBuf): each was judged by its start.
func (p *Proxy) CutLines() int {
	t, _ := p.errlog.scan(p.logFiles())
	return t.cut
}

// logContains reports whether the proxy's logs contain s (ASCII, any
// case), read through one buffer of logBuf bytes.
func (p *Proxy) logContains(s string) bool {
	want := bytes.ToLower([]byte(s))
	buf := make([]byte, logBuf)
	for _, path := range p.logFiles() {
		f, err := safefs.OpenRead(path)
		if err != nil {
			continue
		}
		found := containsFold(f, buf, want)
		f.Close()
		if found {
			return true
		}
	}
	return false
}

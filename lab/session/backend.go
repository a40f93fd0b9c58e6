package session

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/loadlab/loadlab/lab/backend"
	"github.com/loadlab/loadlab/lab/cgroup"
	"github.com/loadlab/loadlab/lab/proc"
	"github.com/loadlab/loadlab/lab/proxy"
)

// netnsBackendPort is the backend's port inside its namespace.
const netnsBackendPort = 8080

// checkPaths are the bodies the byte-identical check compares.
var checkPaths = []string{"/1k", "/1m"}

// backendChild is the running `loadlab serve`.
type backendChild struct {
	proc     *proc.Process
	group    cgroup.Group     // nil with NoCgroups
	addr     netip.AddrPort   // the first (or only) backend: /_stats, the body hashes
	addrs    []netip.AddrPort // every named backend (Options.Backends), app01 first; nil for the one backend
	log      string
	launches int                 // starts so far (Renew starts it again)
	sums     map[string][32]byte // sha256 of the bodies it serves, fetched once
}

// servingRe finds the address in serve's first line: "serving http://ADDR ".
var servingRe = regexp.MustCompile(`serving https?://(\S+) `)

// appsRe finds the named backends' addresses in the same line: "app01
// http://ADDR app02 http://ADDR ...".
var appsRe = regexp.MustCompile(`\bapp(\d+) http://([^\s);]+)`)

// startBackend runs `loadlab serve` through the wrapper in its own cgroup
// on the backend CPUs (in the backend namespace in netns mode) and waits
// until it answers /_stats, then records the sha256 of /1k and /1m as it
// serves them. In loopback mode it listens on a port the kernel picks
// (read back from its first line), so no other program can be on it.
func (s *Session) startBackend(ctx context.Context) error {
	s.backend = &backendChild{}
	if err := s.launchBackend(ctx); err != nil {
		return err
	}
	return s.hashBackendBodies(ctx)
}

// launchBackend starts one instance of the backend in a fresh cgroup and
// waits until it answers.
func (s *Session) launchBackend(ctx context.Context) error {
	b := s.backend
	host, err := s.hostFor(RoleBackend)
	if err != nil {
		return err
	}
	n := max(s.o.Backends, 1)
	ports := make([]int, n)
	for i := range ports {
		ports[i] = netnsBackendPort + i
		if s.netLab() == nil {
			// The kernel picks the first ports; a restart (Renew,
			// RestartBackend) takes the same ones, which the proxies'
			// configs name.
			ports[i] = 0
			if i < len(b.addrs) {
				ports[i] = int(b.addrs[i].Port())
			} else if i == 0 && b.addr.IsValid() {
				ports[i] = int(b.addr.Port())
			}
		}
	}
	b.launches++
	name, logName := "backend", "backend.log"
	if b.launches > 1 {
		name, logName = fmt.Sprintf("backend-r%d", b.launches-1), fmt.Sprintf("backend-r%d.log", b.launches-1)
	}
	b.log = filepath.Join(s.o.Dir, logName)
	b.group = nil
	cpus := s.plan.Backend.String()
	if s.cg != nil {
		if b.group, err = s.cg.Create(name, cgroup.Limits{CPUs: cpus, CPUQuota: s.o.BackendQuota}); err != nil {
			return err
		}
	}
	listen := netip.AddrPortFrom(host, uint16(ports[0]))
	args := []string{"serve", "--listen", listen.String(), "--cpus", cpus}
	if s.o.Backends > 0 {
		args = []string{"serve", "--cpus", cpus}
		for _, p := range ports {
			args = append(args, "--app", netip.AddrPortFrom(host, uint16(p)).String())
		}
	}
	// The log is appended to (a resumed run opens the same directory):
	// only what this instance writes says where it listens.
	var logFrom int64
	if fi, err := os.Stat(b.log); err == nil {
		logFrom = fi.Size()
	}
	if b.launches == 1 {
		what := "backend on " + listen.String()
		if s.o.Backends > 0 {
			what = fmt.Sprintf("%d named backends from %s", s.o.Backends, listen)
		}
		fmt.Fprintf(s.o.Log, "starting %s, cpus %s\n", what, cpus)
	}
	p, err := proc.Start(proc.Spec{
		Name:    name,
		Path:    s.o.Self,
		Args:    args,
		Group:   b.group,
		CPUs:    cpus,
		NetNS:   s.NSPath(RoleBackend),
		Stdout:  b.log,
		Stderr:  b.log,
		Wrapper: s.o.Self,
	})
	if err != nil {
		if b.group != nil {
			_ = b.group.Remove()
		}
		return err
	}
	b.proc = p
	s.track(p.PID())
	if b.launches == 1 {
		// One undo step for every instance: it stops whichever runs.
		s.j.Add("stop the backend", s.stopBackend)
	}
	if s.netLab() == nil {
		if b.addr, b.addrs, err = s.servedAddr(ctx, b, logFrom); err != nil {
			return err
		}
	} else {
		b.addr, b.addrs = listen, nil
		if s.o.Backends > 0 {
			for _, p := range ports {
				b.addrs = append(b.addrs, netip.AddrPortFrom(host, uint16(p)))
			}
		}
	}
	return s.waitBackend(ctx)
}

// servedAddr waits for the backend's "serving http://ADDR" line after
// offset from of its log and returns ADDR, and with named backends
// (Options.Backends) every app's address from the same line, in order.
func (s *Session) servedAddr(ctx context.Context, b *backendChild, from int64) (netip.AddrPort, []netip.AddrPort, error) {
	ctx, cancel := context.WithTimeout(ctx, s.o.ReadyTimeout)
	defer cancel()
	for {
		if data, err := os.ReadFile(b.log); err == nil && int64(len(data)) >= from {
			if m := servingRe.FindSubmatch(data[from:]); m != nil {
				first, err := netip.ParseAddrPort(string(m[1]))
				if err != nil || s.o.Backends == 0 {
					return first, nil, err
				}
				line, _, _ := strings.Cut(string(data[from:]), "\n")
				apps, err := parseApps(line, s.o.Backends)
				return first, apps, err
			}
		}
		if b.proc.Exited() {
			return netip.AddrPort{}, nil, fmt.Errorf("backend exited at start: %s", logTail(b.log))
		}
		select {
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				return netip.AddrPort{}, nil, fmt.Errorf("backend did not say where it listens within %s: see %s", s.o.ReadyTimeout, b.log)
			}
			return netip.AddrPort{}, nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// parseApps reads the n named backends' addresses from serve's first
// line: app01 first, each once.
func parseApps(line string, n int) ([]netip.AddrPort, error) {
	out := make([]netip.AddrPort, n)
	for _, m := range appsRe.FindAllStringSubmatch(line, -1) {
		i, err := strconv.Atoi(m[1])
		a, aerr := netip.ParseAddrPort(m[2])
		if err != nil || aerr != nil || i < 1 || i > n || out[i-1].IsValid() {
			return nil, fmt.Errorf("backend: bad named backend %q in %q", m[0], truncate(line, 200))
		}
		out[i-1] = a
	}
	for i, a := range out {
		if !a.IsValid() {
			return nil, fmt.Errorf("backend did not say where %s listens: %q", backend.AppName(i+1), truncate(line, 200))
		}
	}
	return out, nil
}

// stopBackend stops the running backend instance and removes its cgroup
// (idempotent).
func (s *Session) stopBackend() error {
	s.mu.Lock()
	b := s.backend
	s.mu.Unlock()
	if b == nil || b.proc == nil {
		return nil
	}
	err := b.proc.Stop(5 * time.Second)
	s.untrack(b.proc.PID())
	if b.group != nil {
		err = errors.Join(err, b.group.Remove())
	}
	b.proc, b.group = nil, nil
	return err
}

// waitBackend polls /_stats until the backend answers.
func (s *Session) waitBackend(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.o.ReadyTimeout)
	defer cancel()
	var last error
	for {
		if s.backend.proc.Exited() {
			return fmt.Errorf("backend exited at start: %s", logTail(s.backend.log))
		}
		if _, last = s.BackendStats(); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				return fmt.Errorf("backend on %s did not answer within %s (%v): see %s", s.backend.addr, s.o.ReadyTimeout, last, s.backend.log)
			}
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// hashBackendBodies fetches /1k and /1m from the backend and checks them
// against backend.Body, so a proxy's bodies are compared with what the
// backend really sent.
func (s *Session) hashBackendBodies(ctx context.Context) error {
	c := s.plainClient(s.backend.addr.String())
	defer c.CloseIdleConnections()
	s.backend.sums = map[string][32]byte{}
	for _, path := range checkPaths {
		status, _, body, err := fetch(ctx, c, "http://"+s.backend.addr.String()+path)
		if err != nil {
			return fmt.Errorf("backend %s: %v", path, err)
		}
		sum := sha256.Sum256(body)
		if status != 200 || sum != sha256.Sum256(backend.Body(path)) {
			return fmt.Errorf("backend %s answered %d with %d bytes that differ from backend.Body: the loadlab binary %s is not this version", path, status, len(body), s.o.Self)
		}
		s.backend.sums[path] = sum
	}
	return nil
}

// BackendStats asks the backend for its counters (GET /_stats): TCP
// connections accepted and open, requests served.
func (s *Session) BackendStats() (backend.Stats, error) {
	var st backend.Stats
	if s.backend == nil {
		return st, fmt.Errorf("backend not started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := s.plainClient(s.backend.addr.String())
	defer c.CloseIdleConnections()
	status, _, body, err := fetch(ctx, c, "http://"+s.backend.addr.String()+"/_stats")
	if err != nil {
		return st, fmt.Errorf("backend stats: %v", err)
	}
	if status != 200 {
		return st, fmt.Errorf("backend stats: status %d", status)
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, fmt.Errorf("backend stats: %v", err)
	}
	return st, nil
}

// BackendAddr returns the backend's address (host:port) as proxies reach it.
func (s *Session) BackendAddr() string {
	if s.backend == nil {
		return ""
	}
	return s.backend.addr.String()
}

// BackendAddrs returns every named backend's address (host:port) as
// proxies reach it, app01 first (Options.Backends); nil for the lab's one
// backend.
func (s *Session) BackendAddrs() []string {
	if s.backend == nil {
		return nil
	}
	var out []string
	for _, a := range s.backend.addrs {
		out = append(out, a.String())
	}
	return out
}

// routes are the proxies' routes with named backends: appNN.lab.test to
// backend NN (Options.Backends); nil for the lab's one site.
func (s *Session) routes() []proxy.Route {
	var out []proxy.Route
	for i, a := range s.backend.addrs {
		out = append(out, proxy.Route{Host: backend.AppHost(i + 1), Backend: a.String()})
	}
	return out
}

// BackendPID returns the backend's process id.
func (s *Session) BackendPID() int {
	if s.backend == nil || s.backend.proc == nil {
		return 0
	}
	return s.backend.proc.PID()
}

// hostPort joins an address and a port.
func hostPort(a netip.Addr, port int) string {
	return net.JoinHostPort(a.String(), strconv.Itoa(port))
}

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
	"time"

	"github.com/loadlab/loadlab/lab/backend"
	"github.com/loadlab/loadlab/lab/cgroup"
	"github.com/loadlab/loadlab/lab/proc"
)

// netnsBackendPort is the backend's port inside its namespace.
const netnsBackendPort = 8080

// checkPaths are the bodies the byte-identical check compares.
var checkPaths = []string{"/1k", "/1m"}

// backendChild is the running `loadlab serve`.
type backendChild struct {
	proc     *proc.Process
	group    cgroup.Group // nil with NoCgroups
	addr     netip.AddrPort
	log      string
	launches int                 // starts so far (Renew starts it again)
	sums     map[string][32]byte // sha256 of the bodies it serves, fetched once
}

// servingRe finds the address in serve's first line: "serving http://ADDR ".
var servingRe = regexp.MustCompile(`serving https?://(\S+) `)

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
	port := netnsBackendPort
	if s.netLab() == nil {
		// The kernel picks the first port; a restart (RestartBackend)
		// takes the same one, which the proxies' configs name.
		port = 0
		if b.addr.IsValid() {
			port = int(b.addr.Port())
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
	listen := netip.AddrPortFrom(host, uint16(port))
	// The log is appended to (a resumed run opens the same directory):
	// only what this instance writes says where it listens.
	var logFrom int64
	if fi, err := os.Stat(b.log); err == nil {
		logFrom = fi.Size()
	}
	if b.launches == 1 {
		fmt.Fprintf(s.o.Log, "starting backend on %s, cpus %s\n", listen, cpus)
	}
	p, err := proc.Start(proc.Spec{
		Name:    name,
		Path:    s.o.Self,
		Args:    []string{"serve", "--listen", listen.String(), "--cpus", cpus},
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
	if port == 0 || s.netLab() == nil {
		if b.addr, err = s.servedAddr(ctx, b, logFrom); err != nil {
			return err
		}
	} else {
		b.addr = listen
	}
	return s.waitBackend(ctx)
}

// servedAddr waits for the backend's "serving http://ADDR" line after
// offset from of its log and returns ADDR.
func (s *Session) servedAddr(ctx context.Context, b *backendChild, from int64) (netip.AddrPort, error) {
	ctx, cancel := context.WithTimeout(ctx, s.o.ReadyTimeout)
	defer cancel()
	for {
		if data, err := os.ReadFile(b.log); err == nil && int64(len(data)) >= from {
			if m := servingRe.FindSubmatch(data[from:]); m != nil {
				return netip.ParseAddrPort(string(m[1]))
			}
		}
		if b.proc.Exited() {
			return netip.AddrPort{}, fmt.Errorf("backend exited at start: %s", logTail(b.log))
		}
		select {
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				return netip.AddrPort{}, fmt.Errorf("backend did not say where it listens within %s: see %s", s.o.ReadyTimeout, b.log)
			}
			return netip.AddrPort{}, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
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

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
func (e *Session) startBackend(ctx context.Context) error {
	e.backend = &backendChild{}
	if err := e.launchBackend(ctx); err != nil {
		return err
	}
	return e.hashBackendBodies(ctx)
}

// launchBackend starts one instance of the backend in a fresh cgroup and
// waits until it answers.
func (e *Session) launchBackend(ctx context.Context) error {
	b := e.backend
	host, err := e.hostFor(RoleBackend)
	if err != nil {
		return err
	}
	port := netnsBackendPort
	if e.netLab() == nil {
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
	b.log = filepath.Join(e.o.Dir, logName)
	b.group = nil
	cpus := e.plan.Backend.String()
	if e.cg != nil {
		if b.group, err = e.cg.Create(name, cgroup.Limits{CPUs: cpus, CPUQuota: e.o.BackendQuota}); err != nil {
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
		fmt.Fprintf(e.o.Log, "starting backend on %s, cpus %s\n", listen, cpus)
	}
	p, err := proc.Start(proc.Spec{
		Name:    name,
		Path:    e.o.Self,
		Args:    []string{"serve", "--listen", listen.String(), "--cpus", cpus},
		Group:   b.group,
		CPUs:    cpus,
		NetNS:   e.NSPath(RoleBackend),
		Stdout:  b.log,
		Stderr:  b.log,
		Wrapper: e.o.Self,
	})
	if err != nil {
		if b.group != nil {
			_ = b.group.Remove()
		}
		return err
	}
	b.proc = p
	e.track(p.PID())
	if b.launches == 1 {
		// One undo step for every instance: it stops whichever runs.
		e.j.Add("stop the backend", e.stopBackend)
	}
	if port == 0 || e.netLab() == nil {
		if b.addr, err = e.servedAddr(ctx, b, logFrom); err != nil {
			return err
		}
	} else {
		b.addr = listen
	}
	return e.waitBackend(ctx)
}

// servedAddr waits for the backend's "serving http://ADDR" line after
// offset from of its log and returns ADDR.
func (e *Session) servedAddr(ctx context.Context, b *backendChild, from int64) (netip.AddrPort, error) {
	ctx, cancel := context.WithTimeout(ctx, e.o.ReadyTimeout)
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
				return netip.AddrPort{}, fmt.Errorf("backend did not say where it listens within %s: see %s", e.o.ReadyTimeout, b.log)
			}
			return netip.AddrPort{}, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// stopBackend stops the running backend instance and removes its cgroup
// (idempotent).
func (e *Session) stopBackend() error {
	e.mu.Lock()
	b := e.backend
	e.mu.Unlock()
	if b == nil || b.proc == nil {
		return nil
	}
	err := b.proc.Stop(5 * time.Second)
	e.untrack(b.proc.PID())
	if b.group != nil {
		err = errors.Join(err, b.group.Remove())
	}
	b.proc, b.group = nil, nil
	return err
}

// waitBackend polls /_stats until the backend answers.
func (e *Session) waitBackend(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, e.o.ReadyTimeout)
	defer cancel()
	var last error
	for {
		if e.backend.proc.Exited() {
			return fmt.Errorf("backend exited at start: %s", logTail(e.backend.log))
		}
		if _, last = e.BackendStats(); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				return fmt.Errorf("backend on %s did not answer within %s (%v): see %s", e.backend.addr, e.o.ReadyTimeout, last, e.backend.log)
			}
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// hashBackendBodies fetches /1k and /1m from the backend and checks them
// against backend.Body, so a proxy's bodies are compared with what the
// backend really sent.
func (e *Session) hashBackendBodies(ctx context.Context) error {
	c := e.plainClient(e.backend.addr.String())
	defer c.CloseIdleConnections()
	e.backend.sums = map[string][32]byte{}
	for _, path := range checkPaths {
		status, _, body, err := fetch(ctx, c, "http://"+e.backend.addr.String()+path)
		if err != nil {
			return fmt.Errorf("backend %s: %v", path, err)
		}
		sum := sha256.Sum256(body)
		if status != 200 || sum != sha256.Sum256(backend.Body(path)) {
			return fmt.Errorf("backend %s answered %d with %d bytes that differ from backend.Body: the loadlab binary %s is not this version", path, status, len(body), e.o.Self)
		}
		e.backend.sums[path] = sum
	}
	return nil
}

// BackendStats asks the backend for its counters (GET /_stats): TCP
// connections accepted and open, requests served.
func (e *Session) BackendStats() (backend.Stats, error) {
	var st backend.Stats
	if e.backend == nil {
		return st, fmt.Errorf("backend not started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := e.plainClient(e.backend.addr.String())
	defer c.CloseIdleConnections()
	status, _, body, err := fetch(ctx, c, "http://"+e.backend.addr.String()+"/_stats")
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
func (e *Session) BackendAddr() string {
	if e.backend == nil {
		return ""
	}
	return e.backend.addr.String()
}

// BackendPID returns the backend's process id.
func (e *Session) BackendPID() int {
	if e.backend == nil || e.backend.proc == nil {
		return 0
	}
	return e.backend.proc.PID()
}

// logTail returns the last non-empty line of a log file (for errors), or a
// note that the log is empty.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "no log (" + bare(err).Error() + ")"
	}
	lines := splitLines(b)
	if len(lines) == 0 {
		return "nothing in " + path
	}
	return strconv.Quote(truncate(string(lines[len(lines)-1]), 300)) + " (" + path + ")"
}

// hostPort joins an address and a port.
func hostPort(a netip.Addr, port int) string {
	return net.JoinHostPort(a.String(), strconv.Itoa(port))
}

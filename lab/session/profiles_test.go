package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/lab/proxy"
)

// fullKeyMatrix are the profiles checked with every key type; the others
// are checked with P-256 only, to keep the suite short.
var fullKeyMatrix = map[string]bool{"nginx-stock": true, "caddy-stock": true}

// Every installed profile starts under its own cgroup as the proxy user,
// serves /1k and /1m byte-identical to the backend over HTTPS (and h2, and
// HTTP/3 where it has it) and plain HTTP with each key type (an origin
// from the files the lab wrote; caddy-respond its fixed body), reports idle memory > 0 from
// its cgroup, restarts with the same certificate, and stops clean: no
// process, no cgroup left.
func TestProfilesStartCheckStop(t *testing.T) {
	realLab(t)
	e := openSession(t, Options{Keys: certs.AllKeyTypes(), MemoryLimit: 2 << 30})
	for _, prof := range proxy.All() {
		t.Run(prof.Name, func(t *testing.T) {
			if _, err := prof.Find(); errors.Is(err, proxy.ErrNotFound) {
				t.Skipf("%s not installed: %v", prof.Proxy, err)
			}
			keys := []certs.KeyType{certs.P256}
			if fullKeyMatrix[prof.Name] {
				keys = certs.AllKeyTypes()
			}
			for i, key := range keys {
				checkOneProxy(t, e, prof, key, i == 0)
			}
		})
	}
}

// checkOneProxy runs the checks on one profile and key type; with full it
// also measures idle memory and restarts.
func checkOneProxy(t *testing.T, e *Session, prof proxy.Profile, key certs.KeyType, full bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := e.StartProxy(ctx, prof.Name, key)
	if err != nil {
		t.Fatalf("StartProxy(%s, %s): %v", prof.Name, key, err)
	}
	defer p.Stop()
	checks, err := p.CheckBodiesDetail(ctx)
	if err != nil {
		t.Errorf("%s %s: %v", prof.Name, key, err)
	}
	if prof.IsOrigin() {
		// An origin serves the lab's files: no backend, no websocket route.
	} else if ws := p.CheckWebSocket(ctx); !ws.OK {
		t.Errorf("%s %s: websocket route: %+v", prof.Name, key, ws)
	}
	// HTTPS, h2, h3 where served, and plain HTTP.
	want := 2 * (2 + btoi(prof.Features.H2) + btoi(prof.Features.H3))
	if len(checks) != want {
		t.Errorf("%s: %d checks, want %d: %+v", prof.Name, len(checks), want, checks)
	}
	for _, c := range checks {
		if !c.OK {
			t.Errorf("%s %s: %s %s: %s", prof.Name, key, c.Proto, c.Path, c.Error)
		}
	}
	assertRunsAsProxyUser(t, e, p)
	assertMemoryLimit(t, p, e.o.MemoryLimit)
	if full {
		idle, err := p.IdleMemory(ctx, time.Second, 3, 200*time.Millisecond)
		if err != nil {
			t.Fatalf("IdleMemory: %v", err)
		}
		if idle.Need == 0 || idle.Total < idle.Need || len(idle.NeedSamples) != 3 {
			t.Errorf("idle memory %+v, want anon+kernel > 0, at most memory.current, from 3 samples", idle)
		}
		st, err := p.Stats()
		if err != nil || st.Procs < 1 || st.MemCurrent == 0 {
			t.Errorf("Stats = %+v, %v; want a process and memory", st, err)
		}
		secs, same, err := p.Restart(ctx)
		if err != nil {
			t.Fatalf("Restart: %v", err)
		}
		if !same || secs <= 0 {
			t.Errorf("restart: %.2fs, certificate unchanged %v; want > 0 and true", secs, same)
		}
		t.Logf("%s (%s): idle anon+kernel %.1f MiB, page cache %.1f MiB, memory.current %.1f MiB, restart %.2fs, cert unchanged %v", prof.Name, p.Version(), float64(idle.Need)/(1<<20), float64(idle.File)/(1<<20), float64(idle.Total)/(1<<20), secs, same)
		if _, err := p.CheckBodies(ctx); err != nil {
			t.Errorf("after restart: %v", err)
		}
	}
	pid, g := p.PID(), p.Group()
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if alive(pid) {
		t.Errorf("pid %d still alive after Stop", pid)
	}
	if pids, err := g.Pids(); err == nil && len(pids) > 0 {
		t.Errorf("group %s still holds %v after Stop", g.Name(), pids)
	}
	for _, f := range g.ProcsFiles() {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("cgroup file %s still exists after Stop", f)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// assertMemoryLimit checks the memory limit of the proxy's cgroup (v1
// memory.limit_in_bytes, v2 memory.max).
func assertMemoryLimit(t *testing.T, p *Proxy, want int64) {
	t.Helper()
	for _, f := range p.Group().ProcsFiles() {
		dir := filepath.Dir(f)
		for _, name := range []string{"memory.limit_in_bytes", "memory.max"} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				continue
			}
			if got := strings.TrimSpace(string(b)); got != strconv.FormatInt(want, 10) {
				t.Errorf("%s/%s = %s, want %d", dir, name, got, want)
			}
			return
		}
	}
	t.Errorf("no memory limit file in the groups of %v", p.Group().ProcsFiles())
}

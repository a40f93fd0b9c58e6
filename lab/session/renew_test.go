package session

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen"
)

// After traffic through nginx-stock has filled TIME_WAIT in the proxy's
// namespace, Renew gives new namespaces with none in any of the three,
// a new backend and the proxy restarted on the same address, serving the
// same bodies; the old namespaces are gone.
func TestRenewStartsClean(t *testing.T) {
	realLab(t)
	installedProfile(t, "nginx-stock")
	e := openSession(t, Options{Net: NetNS})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := e.StartProxy(ctx, "nginx-stock", certs.P256)
	if err != nil {
		t.Fatal(err)
	}
	res := runGen(t, e, p, gen.Config{URL: "/1k", Connections: 4, Duration: 3 * time.Second, Requests: 300})
	if tw, _ := e.TimeWait(RoleProxy); res.OK == 0 || tw < int(res.OK)/2 {
		t.Fatalf("before Renew: %d ok, TIME_WAIT %d in the proxy namespace: want about one per request", res.OK, tw)
	}
	oldNS, oldBackend, oldProxy, addr := e.NSPath(RoleProxy), e.BackendPID(), p.PID(), p.Addr()
	took, err := e.Renew(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Renew took %s", took)
	for _, role := range []string{RoleProxy, RoleGen, RoleBackend} {
		if n, err := e.TimeWait(role); err != nil || n != 0 {
			t.Errorf("after Renew: TIME_WAIT in the %s namespace %d, %v; want 0", role, n, err)
		}
	}
	if e.NSPath(RoleProxy) == oldNS || strings.Contains(nsNames(t), oldNS[len("/var/run/netns/"):]) {
		t.Errorf("proxy namespace %s was not replaced (now %s)", oldNS, e.NSPath(RoleProxy))
	}
	if e.BackendPID() == oldBackend || p.PID() == oldProxy || p.Exited() || p.Addr() != addr {
		t.Errorf("backend pid %d -> %d, proxy pid %d -> %d (exited %v), address %s -> %s: want new processes on the same address",
			oldBackend, e.BackendPID(), oldProxy, p.PID(), p.Exited(), addr, p.Addr())
	}
	// Nothing went through the restarted proxy: the backend served no
	// request (its own /_stats, readiness included, does not count).
	if st, err := e.BackendStats(); err != nil || st.Requests != 0 {
		t.Errorf("backend after Renew: %+v, %v; want no request served yet", st, err)
	}
	res = runGen(t, e, p, gen.Config{URL: "/1k", Connections: 2, Duration: 2 * time.Second, Requests: 50})
	if res.OK != 50 {
		t.Errorf("through the renewed lab: %d ok of 50, errors %v", res.OK, res.Errors)
	}
	if e.Renewals() != 1 {
		t.Errorf("Renewals() = %d, want 1", e.Renewals())
	}
}

// A second session in the same run directory (a resumed lab run) finds
// its own backend, not the port the first one wrote in the appended log.
func TestReopenSameDirFindsNewBackend(t *testing.T) {
	realLab(t)
	dir := filepath.Join(testRoot, "reopen")
	first := openSession(t, Options{Dir: dir})
	addr := first.BackendAddr()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := openSession(t, Options{Dir: dir})
	if _, err := second.BackendStats(); err != nil {
		t.Fatalf("second session's backend (%s, the first was on %s): %v", second.BackendAddr(), addr, err)
	}
}

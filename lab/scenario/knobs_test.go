package scenario

import (
	"context"
	"testing"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/pin"
)

// A scenario's sysctls and quotas reach the session it runs in (and no
// other), each step records the sysctls as read back and the TcpExt
// counters' growth over the step, and server_cpus: all gives the proxy
// every CPU with the generator and backend where a 1-CPU server puts them.
func TestKnobsReachSessionAndSteps(t *testing.T) {
	h := newHarness(t, `
name: t
profiles: [nginx-stock]
net: netns
cpus: {server: "1", backend_quota: 0.5}
scenarios:
  - name: plain
    kind: sustained
    duration: 2s
  - name: buckets
    kind: sustained
    duration: 2s
    sysctls: {net.ipv4.tcp_max_tw_buckets: 8192}
  - name: quota
    kind: fixed-rate
    rates: [1000]
    runs: 1
    duration: 2s
    server_cpus: all
    server_quota: 1
`)
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if len(h.lab.opens) != 3 {
		t.Fatalf("%d sessions", len(h.lab.opens))
	}
	plain, buckets, quota := h.lab.opens[0], h.lab.opens[1], h.lab.opens[2]
	if len(plain.Sysctls) != 0 || plain.ServerQuota != 0 || plain.BackendQuota != 0.5 {
		t.Errorf("plain session %+v", plain)
	}
	if buckets.Sysctls["net.ipv4.tcp_max_tw_buckets"] != "8192" || buckets.ServerQuota != 0 {
		t.Errorf("buckets session %+v", buckets)
	}
	if c := quota.CPUs; quota.ServerQuota != 1 || c == nil || !c.Server.Equal(pin.NewCPUSet(0, 1)) || !c.Gen.Equal(pin.NewCPUSet(1)) || !c.Backend.Equal(pin.NewCPUSet(1)) {
		t.Errorf("quota session: quota %g, CPUs %+v", quota.ServerQuota, c)
	}
	st := f.Unit("buckets/nginx-stock/p256/1cpu").Steps[0]
	if st.Sysctls["net.ipv4.tcp_max_tw_buckets"] != "8192" {
		t.Errorf("step sysctls %v", st.Sysctls)
	}
	// one reading before and one after the step: one reading's growth
	if st.TCPExt["TW"] != 1000 || st.TCPExt["TCPTimeWaitOverflow"] != 500 || len(st.TCPExt) != 6 {
		t.Errorf("step tcp_ext %v", st.TCPExt)
	}
	if ps := f.Unit("plain/nginx-stock/p256/1cpu").Steps[0]; ps.Sysctls != nil || ps.TCPExt["TCPTimeWaitOverflow"] != 0 {
		t.Errorf("plain step %v %v", ps.Sysctls, ps.TCPExt)
	}
	if u := f.Unit("quota/nginx-stock/p256/2cpu"); u == nil || len(u.Steps) != 1 {
		t.Fatalf("quota unit on the shared layout: %+v", u)
	}
	if s := h.plan.Scenarios[2]; s.ServerCPUs != plan.AllCPUs {
		t.Fatal(s.ServerCPUs)
	}
}

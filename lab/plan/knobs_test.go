package plan

import (
	"strings"
	"testing"
)

const knobsPlan = `
name: k
profiles: [nginx-stock, caddy-stock]
net: netns
cpus: {server: "1", server_quota: 0.5, backend_quota: 2}
scenarios:
  - name: tw-reuse
    kind: sustained
    sysctls:
      net.ipv4.tcp_tw_reuse: 1
      net.ipv4.ip_local_port_range: "32768 60999"
  - name: quota
    kind: fixed-rate
    server_cpus: all
    server_quota: 1
  - name: plain
    kind: fixed-rate
    server_quota: 0
`

func TestKnobsResolve(t *testing.T) {
	p, err := Parse([]byte(knobsPlan))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	tw, q, plain := p.Scenarios[0], p.Scenarios[1], p.Scenarios[2]
	if tw.Sysctls["net.ipv4.tcp_tw_reuse"] != "1" || tw.Sysctls["net.ipv4.ip_local_port_range"] != "32768 60999" {
		t.Errorf("sysctls %v", tw.Sysctls)
	}
	if tw.Eff.ServerQuota != 0.5 || tw.Eff.BackendQuota != 2 {
		t.Errorf("plan quotas not inherited: %+v", tw.Eff)
	}
	if q.Eff.ServerQuota != 1 || q.ServerCPUs != AllCPUs || plain.Eff.ServerQuota != 0 || plain.Eff.BackendQuota != 2 {
		t.Errorf("scenario quotas: %+v %+v", q.Eff, plain.Eff)
	}
}

// Plan errors name the key: not namespaced, unknown, not on this kernel,
// loopback mode; quotas out of range.
func TestKnobsRefused(t *testing.T) {
	for change, want := range map[[2]string]string{
		{"net.ipv4.tcp_tw_reuse: 1", "vm.swappiness: 1"}:              "sysctl vm.swappiness is not one a network namespace has its own copy of",
		{"net.ipv4.tcp_tw_reuse: 1", "net.core.rmem_max: 1"}:          "sysctl net.core.rmem_max is not one",
		{"net.ipv4.tcp_tw_reuse: 1", "net.ipv4.tcp_no_such_thing: 1"}: "sysctl net.ipv4.tcp_no_such_thing does not exist on this kernel",
		{"net.ipv4.tcp_tw_reuse: 1", "kernel.pid_max: 99999"}:         "sysctl kernel.pid_max is not one",
		{"net: netns", "net: loopback"}:                               "sysctls: net.ipv4.ip_local_port_range needs net: netns",
		{"server_quota: 1\n", "server_quota: -1\n"}:                   "server_quota -1",
		{"server_quota: 0.5", "server_quota: 0.001"}:                  "cpus.server_quota 0.001",
		{"backend_quota: 2", "backend_quota: 5000"}:                   "cpus.backend_quota 5000",
		{`net.ipv4.tcp_tw_reuse: 1`, `net.ipv4.tcp_tw_reuse: ""`}:     "sysctl net.ipv4.tcp_tw_reuse: value",
		{"server_cpus: all", "server_cpus: everything"}:               "server_cpus",
	} {
		text := strings.Replace(knobsPlan, change[0], change[1], 1)
		if text == knobsPlan {
			t.Fatalf("%q not in the plan", change[0])
		}
		p, err := Parse([]byte(text))
		if err == nil {
			err = p.Check()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s -> %s: %v, want %q", change[0], change[1], err, want)
		}
	}
}

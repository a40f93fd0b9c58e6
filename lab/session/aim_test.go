package session

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/pin"
)

// TestAimConfig: a step's Config goes to the proxy's address for its scheme,
// keeps the path and query, replaces the Host header, trusts the lab CA
// unless insecure, runs on the generator's CPUs unless given, and in
// netns mode spreads new connections over the namespace's addresses.
func TestAimConfig(t *testing.T) {
	a := Aim{HTTPS: netip.MustParseAddrPort("127.0.0.1:21001"), HTTP: netip.MustParseAddrPort("127.0.0.1:21000"),
		ServerName: "bench.lab", CAFile: "/run/ca.pem", CPUs: pin.NewCPUSet(1)}
	for _, c := range []struct {
		base gen.Config
		url  string
	}{
		{gen.Config{URL: "/1k"}, "https://127.0.0.1:21001/1k"},
		{gen.Config{URL: "https://example.org:9/1m?x=1"}, "https://127.0.0.1:21001/1m?x=1"},
		{gen.Config{URL: "http://whatever/echo"}, "http://127.0.0.1:21000/echo"},
		{gen.Config{}, "https://127.0.0.1:21001/"},
	} {
		if got := a.Config(c.base); got.URL != c.url {
			t.Errorf("Config(%q).URL = %q, want %q", c.base.URL, got.URL, c.url)
		}
	}
	base := gen.Config{URL: "/1k", Headers: []string{"host: other", "X-A: 1"}, Connections: 7, NewConn: true}
	got := a.Config(base)
	if !reflect.DeepEqual(got.Headers, []string{"X-A: 1", "Host: bench.lab"}) {
		t.Errorf("headers %q", got.Headers)
	}
	if got.TLS.SNI != "bench.lab" || got.TLS.CAFile != "/run/ca.pem" || got.Connections != 7 || !got.CPUs.Equal(pin.NewCPUSet(1)) {
		t.Errorf("Config = %+v", got)
	}
	if got.NetNS != "" || got.SrcAddrs != "" {
		t.Errorf("loopback aim set NetNS %q / SrcAddrs %v", got.NetNS, got.SrcAddrs)
	}
	if len(base.Headers) != 2 || base.Headers[0] != "host: other" {
		t.Errorf("Config changed the caller's headers: %q", base.Headers)
	}
	ins := a.Config(gen.Config{URL: "/1k", TLS: gen.TLSOptions{Insecure: true}, CPUs: pin.NewCPUSet(0)})
	if ins.TLS.CAFile != "" || !ins.CPUs.Equal(pin.NewCPUSet(0)) {
		t.Errorf("insecure/explicit CPUs not kept: %+v", ins)
	}

	ns := a
	ns.NetNS, ns.SrcAddrs = "/run/netns/ll1-gen", []netip.Addr{netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.3")}
	if got := ns.Config(gen.Config{URL: "/1k", NewConn: true}); got.NetNS != ns.NetNS || got.SrcAddrs != "10.0.0.2,10.0.0.3" {
		t.Errorf("netns aim, new connections: NetNS %q, SrcAddrs %v", got.NetNS, got.SrcAddrs)
	}
	if got := ns.Config(gen.Config{URL: "/1k"}); got.NetNS != ns.NetNS || got.SrcAddrs != "" {
		t.Errorf("netns aim, keep-alive: NetNS %q, SrcAddrs %v (want none)", got.NetNS, got.SrcAddrs)
	}
}

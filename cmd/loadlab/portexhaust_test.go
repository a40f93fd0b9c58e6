package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/netns"
)

// TestPortExhaustionAcrossVeth proves the port-exhaustion problem and its two
// fixes where they are real: across veth between two network namespaces
// (on loopback, tcp_tw_reuse=2 lets new connections reuse TIME_WAIT ports, so
// nothing would show). Each case gets fresh namespaces, since TIME_WAIT lasts
// 60 s and is per namespace.
//
// The generator's namespace gets a 4,000-port ephemeral range instead of the
// default 28,232. Reason, measured here: once the even half of the range is
// in TIME_WAIT, the kernel's port search in connect() scans it on every call
// (connect prefers even ports) and a 2-core machine drops from ~8,000 to
// ~300 new connections/s, so the default range does not fill within the 60 s
// TIME_WAIT lifetime and nothing would ever run out. The mechanism is the
// same at any range size; the smaller range makes it happen in seconds.
// scripts/bench-ports.sh runs the full-size version.
func TestPortExhaustionAcrossVeth(t *testing.T) {
	if testing.Short() {
		t.Skip("drives ~30,000 connections per case")
	}
	cases := []struct {
		name      string
		extra     int // additional generator addresses
		useSrc    bool
		close     gen.CloseMode
		exhausted bool
		requests  int
	}{
		{"one address, fin close", 0, false, gen.CloseFIN, true, 4300},
		{"four source addresses", 3, true, gen.CloseFIN, false, 10000},
		{"rst close", 0, false, gen.CloseRST, false, 10000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lab, err := netns.NewLab("llt", []string{"server", netns.GenRole}, tc.extra)
			if err != nil {
				t.Skipf("network namespaces unavailable: %v", err)
			}
			t.Cleanup(func() { lab.Close() })
			err = lab.Do(netns.GenRole, func() error {
				return os.WriteFile("/proc/sys/net/ipv4/ip_local_port_range", []byte("40000 43999"), 0o644)
			})
			if err != nil {
				t.Fatalf("narrow the port range in the generator's namespace: %v", err)
			}
			ln, err := lab.Listen("server", "tcp", net.JoinHostPort(lab.Addr("server").String(), "8080"))
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "ok")
			})}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })

			cfg := gen.Config{
				URL:         "http://" + net.JoinHostPort(lab.Addr("server").String(), "8080") + "/",
				NewConn:     true,
				Connections: 32,
				Requests:    tc.requests,
				Duration:    60 * time.Second,
				Timeout:     5 * time.Second, // absorbs SYN retransmits (1 s, 3 s) on a loaded machine
				Close:       tc.close,
				NetNS:       lab.NSPath(netns.GenRole),
			}
			if tc.useSrc {
				addrs := lab.GenAddrs()
				if len(addrs) < 4 {
					t.Fatalf("want 4 generator addresses, have %v", addrs)
				}
				for i, a := range addrs {
					if i > 0 {
						cfg.SrcAddrs += ","
					}
					cfg.SrcAddrs += a.String()
				}
			}
			res, err := gen.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			exhausted := res.Errors["addr_not_avail"]
			t.Logf("ok %d, addr_not_avail %d, other errors %v, time_wait_peak %d, %.0f conn/s",
				res.OK, exhausted, res.Errors, res.Generator.TimeWaitPeak, res.HandshakeRate)
			if tc.exhausted {
				if exhausted == 0 {
					t.Fatalf("%d connections from one address with fin close: expected addr_not_avail once the range sat in TIME_WAIT", res.OK)
				}
				if res.OK+res.Errors["timeout"] < 3950 || res.OK > 4000 {
					t.Errorf("%d successful connections before exhaustion, want just under the 4,000-port range", res.OK)
				}
				if res.Generator.TimeWaitPeak < 3950 {
					t.Errorf("time_wait_peak %d: expected the whole port range (4,000) in TIME_WAIT", res.Generator.TimeWaitPeak)
				}
				return
			}
			if exhausted != 0 {
				t.Fatalf("addr_not_avail %d: the fix did not work", exhausted)
			}
			if res.OK+res.Errors["timeout"] != uint64(tc.requests) || res.Errors["timeout"] > uint64(tc.requests/1000) {
				t.Fatalf("%d of %d connections succeeded (errors %v)", res.OK, tc.requests, res.Errors)
			}
			if tc.close == gen.CloseRST && res.Generator.TimeWaitPeak > 100 {
				t.Errorf("rst close left %d sockets in TIME_WAIT on the generator's side", res.Generator.TimeWaitPeak)
			}
		})
	}
}

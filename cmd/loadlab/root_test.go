package main

import (
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen"
)

// Every newRootCmd is a fresh tree: flags parsed by one run are not seen
// by the next, and gen's flags start from gen's own defaults.
func TestRootCmdFreshFlagsWithGenDefaults(t *testing.T) {
	first := newRootCmd()
	g, _, err := first.Find([]string{"gen"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.ParseFlags([]string{"-c", "7", "-d", "3s", "--timeout", "1s", "-m", "POST", "--tls", "1.2", "--client-hello", "chrome", "-H", "X-A: 1"}); err != nil {
		t.Fatal(err)
	}
	var want gen.Config
	want.Defaults()
	second := newRootCmd()
	g2, _, err := second.Find([]string{"gen"})
	if err != nil {
		t.Fatal(err)
	}
	fl := g2.Flags()
	intFlag := func(name string) int { v, _ := fl.GetInt(name); return v }
	durFlag := func(name string) time.Duration { v, _ := fl.GetDuration(name); return v }
	strFlag := func(name string) string { v, _ := fl.GetString(name); return v }
	if got := intFlag("connections"); got != want.Connections {
		t.Errorf("--connections %d, gen default %d", got, want.Connections)
	}
	if got := durFlag("duration"); got != want.Duration {
		t.Errorf("--duration %v, gen default %v", got, want.Duration)
	}
	if got := durFlag("timeout"); got != want.Timeout {
		t.Errorf("--timeout %v, gen default %v", got, want.Timeout)
	}
	if got := strFlag("method"); got != want.Method {
		t.Errorf("--method %q, gen default %q", got, want.Method)
	}
	if got := strFlag("tls"); got != want.TLS.Version {
		t.Errorf("--tls %q, gen default %q", got, want.TLS.Version)
	}
	if got := strFlag("client-hello"); got != want.TLS.ClientHello {
		t.Errorf("--client-hello %q, gen default %q", got, want.TLS.ClientHello)
	}
	if h, _ := fl.GetStringArray("header"); len(h) != 0 {
		t.Errorf("--header %q carried over from another tree", h)
	}
	for _, f := range []string{"connections", "duration", "header"} {
		if fl.Changed(f) {
			t.Errorf("--%s marked changed in a fresh tree", f)
		}
	}
}

package check

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/lab/proxy"
)

// A proxy that is not installed is a row that says how to install it, not
// a failure.
func TestLabCheckNotInstalledRow(t *testing.T) {
	prof, _ := proxy.Get("traefik")
	prof = prof.WithBinary("/nonexistent/traefik-is-nowhere/traefik")
	row := checkProfile(t.Context(), nil, Config{Log: io.Discard}, prof)
	if row.Found || row.Error != "" || !strings.Contains(row.Install, "--with-traefik") {
		t.Fatalf("row %+v: want not found, no error, install hint", row)
	}
	rep := Report{Net: "loopback", Cgroups: true, Keys: []certs.KeyType{certs.P256}, Rows: []Row{row, {
		Profile: "nginx-stock", Found: true, Version: "nginx 1.22.1", Features: proxy.Features{TLS: true, H2: true},
		TLS: true, HTTP: true, H2: true, ByteIdentical: true, WebSocket: true, IdleNeed: 5 << 20, IdleFile: 1 << 20, IdleMemory: 6 << 20, RestartSeconds: 0.1, CertUnchanged: true,
	}, {
		Profile: "caddy-stock", Found: true, Version: "caddy 2.11.9", Features: proxy.Features{TLS: true, H2: true, H3: true},
		TLS: true, HTTP: true, H2: true, Error: "h3 /1m through caddy-stock: status 502",
	}, {
		Profile: "nginx-files", Role: "origin", Found: true, Version: "nginx 1.22.1", Features: proxy.Features{TLS: true, H2: true},
		TLS: true, H2: true, ByteIdentical: false, Error: "http /1k through nginx-files: status 404",
	}}}
	if got := rep.Failed(); len(got) != 2 || got[0] != "caddy-stock" || got[1] != "nginx-files" {
		t.Errorf("Failed() = %v, want caddy-stock and nginx-files", got)
	}
	var b bytes.Buffer
	rep.WriteTable(&b)
	out := b.String()
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 7 && f[0] == "PROFILE" && (f[3] != "HTTP" || f[6] != "WS"):
			t.Errorf("header %q: want HTTP after TLS, WS after H3", line)
		case len(f) > 7 && f[0] == "nginx-stock" && (f[4] != "ok" || f[7] != "ok"):
			t.Errorf("nginx-stock row %q: want plain HTTP and the websocket route ok", line)
		case len(f) > 7 && f[0] == "caddy-stock" && f[7] != "FAIL":
			t.Errorf("caddy-stock row %q: want the websocket route FAIL", line)
		case len(f) > 7 && f[0] == "nginx-files" && (f[4] != "FAIL" || f[7] != "-"):
			t.Errorf("nginx-files row %q: want plain HTTP FAIL and no websocket route (an origin)", line)
		}
	}
	for _, want := range []string{
		"traefik  ", "not installed", "traefik: not installed: install it with scripts/install-proxies.sh --with-traefik",
		"nginx-stock", "5.0 MiB", "1.0 MiB", "6.0 MiB", "0.10s", "unchanged", "identical",
		"caddy-stock", "FAIL", "DIFFER", "caddy-stock: h3 /1m through caddy-stock: status 502",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

package report

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/session"
)

// The Checks section: one row per profile with its key types and
// protocols, the restart, the WebSocket route and HTTP/3 served and
// advertised; failures say so.
func TestChecksSection(t *testing.T) {
	body := func(proto string, ok bool, alt string) []session.BodyCheck {
		return []session.BodyCheck{{Proto: proto, Path: "/1k", OK: true, AltSvc: alt}, {Proto: proto, Path: "/1m", OK: ok, AltSvc: alt}}
	}
	f := synthFile(t)
	f.Checks = []results.ProxyCheck{
		{Layout: "1cpu", Profile: "nginx-stock", Proxy: "nginx", Key: "p256", Checks: session.Checks{
			Bodies: append(body("h1", true, ""), body("h2", true, "")...), ByteIdentical: true, WebSocket: session.WebSocketCheck{OK: true},
			Restarted: true, RestartS: 0.114, CertUnchanged: true}},
		{Layout: "1cpu", Profile: "nginx-stock", Proxy: "nginx", Key: "rsa4096", Checks: session.Checks{
			Bodies: append(body("h1", true, ""), body("h2", false, "")...), WebSocket: session.WebSocketCheck{OK: true}, Error: "h2 /1m through nginx-stock: 12 bytes"}},
		{Layout: "1cpu", Profile: "caddy-stock", Proxy: "caddy", Key: "p256", Checks: session.Checks{
			Bodies: append(append(body("h1", true, `h3=":443"; ma=2592000`), body("h2", true, `h3=":443"; ma=2592000`)...), body("h3", true, "")...), ByteIdentical: true,
			WebSocket: session.WebSocketCheck{Error: "no 101"}, H3: true, H3Advertised: true, Restarted: true, RestartS: 1.5, CertUnchanged: false}},
	}
	r, md := build(t, f)
	if r.Checks == nil {
		t.Fatal("no Checks section")
	}
	for _, want := range []string{
		"## Checks",
		"| nginx-stock | nginx 1.22.1 | 1cpu | ECDSA P-256: h1 ok, h2 ok; RSA 4096: h1 ok, h2 DIFFER | 0.11 s | unchanged | ok | - | - |",
		`| caddy-stock | v2.11.9 | 1cpu | ECDSA P-256: h1 ok, h2 ok, h3 ok | 1.50 s | CHANGED | FAIL: no 101 | yes | yes: h3=":443"; ma=2592000 |`,
		"nginx-stock (RSA 4096): h2 /1m through nginx-stock: 12 bytes",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
	f.Checks[2].H3Advertised = false
	if _, md := build(t, f); !strings.Contains(md, "| yes | no Alt-Svc naming h3 |") {
		t.Errorf("an HTTP/3 proxy without Alt-Svc must say so:\n%s", md)
	}
}

package session

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// WebSocketCheck is one upgrade to WebSocket through a proxy (seed 001's
// websocket route): the backend's /ws answers 101 only when Upgrade:
// websocket and Connection: Upgrade reach it, and reports both as they
// arrived; after the 101 it echoes, so the tunnel is checked too.
type WebSocketCheck struct {
	Status     int    `json:"status"`               // the proxy's answer (101 when the upgrade went through)
	Upgrade    string `json:"upgrade,omitempty"`    // Upgrade as the backend received it
	Connection string `json:"connection,omitempty"` // Connection as the backend received it
	Echo       bool   `json:"echo"`                 // bytes sent after the 101 came back
	OK         bool   `json:"ok"`                   // 101, both headers arrived, echo
	Error      string `json:"error,omitempty"`      // why not
}

// wsProbe is what the check writes on the upgraded connection.
const wsProbe = "loadlab websocket probe\n"

// CheckWebSocket sends GET /ws with Upgrade: websocket and Connection:
// Upgrade through the proxy over HTTPS (HTTP/1.1: an upgrade needs it) and
// checks that the backend answered 101 with both headers received, and
// that the upgraded connection carries bytes both ways.
func (p *Proxy) CheckWebSocket(ctx context.Context) WebSocketCheck {
	var c WebSocketCheck
	fail := func(format string, args ...any) WebSocketCheck {
		c.Error = fmt.Sprintf(format, args...)
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	raw, err := p.e.dialContext(ctx, "tcp", p.addr.String())
	if err != nil {
		return fail("connect: %v", err)
	}
	defer raw.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = raw.SetDeadline(dl)
	}
	cfg := p.e.tlsConfig()
	cfg.NextProtos = []string{"http/1.1"}
	tc := tls.Client(raw, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return fail("TLS handshake: %v", err)
	}
	var key [16]byte
	_, _ = rand.Read(key[:])
	req := "GET /ws HTTP/1.1\r\nHost: " + p.e.Host() + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + base64.StdEncoding.EncodeToString(key[:]) + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(tc, req); err != nil {
		return fail("send the upgrade: %v", err)
	}
	br := bufio.NewReader(tc)
	resp, err := http.ReadResponse(br, nil) //nolint:bodyclose // a 101 has no body; the caller closes the hijacked connection
	if err != nil {
		return fail("read the answer: %v", err)
	}
	c.Status = resp.StatusCode
	c.Upgrade, c.Connection = resp.Header.Get("X-Loadlab-Upgrade"), resp.Header.Get("X-Loadlab-Connection")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fail("%s answered %d, not 101: %s", p.prof.Name, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if !strings.EqualFold(c.Upgrade, "websocket") || !headerHasToken(c.Connection, "upgrade") {
		return fail("the backend received Upgrade %q and Connection %q through %s", c.Upgrade, c.Connection, p.prof.Name)
	}
	_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(tc, wsProbe); err != nil {
		return fail("write on the upgraded connection: %v", err)
	}
	got := make([]byte, len(wsProbe))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != wsProbe {
		return fail("the upgraded connection did not echo (%q, %v)", got, err)
	}
	c.Echo, c.OK = true, true
	return c
}

// headerHasToken reports whether a comma-separated header lists tok.
func headerHasToken(v, tok string) bool {
	for _, f := range strings.Split(v, ",") {
		if strings.EqualFold(strings.TrimSpace(f), tok) {
			return true
		}
	}
	return false
}

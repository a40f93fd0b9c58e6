package backend

import (
	"crypto/sha1"
	"encoding/base64"
	"net"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// The /ws route answers an HTTP/1.1 upgrade to WebSocket the way a
// WebSocket server starts one, so the lab can check that a proxy passes
// the upgrade through (seed 001's websocket route): with Upgrade: websocket
// and a Connection header listing "upgrade" it answers 101 Switching
// Protocols, says in X-Loadlab-Upgrade and X-Loadlab-Connection what the
// two headers said when they arrived, and then echoes every byte on the
// connection until the client closes or is silent for upgradeIdle. Without
// both headers it answers 400 and says what arrived.

// upgradeIdle ends an upgraded connection nobody writes on.
const upgradeIdle = 10 * time.Second

// websocketGUID is RFC 6455's key suffix for Sec-WebSocket-Accept.
const websocketGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// upgradeOverH3 is the 400 body of /ws over HTTP/3, which has no upgrade.
const upgradeOverH3 = "400 /ws needs HTTP/1.1 with Upgrade: websocket and Connection: Upgrade\n"

// hasToken reports whether a comma-separated header value lists tok (any
// case).
func hasToken(v, tok string) bool {
	for _, f := range strings.Split(v, ",") {
		if strings.EqualFold(strings.TrimSpace(f), tok) {
			return true
		}
	}
	return false
}

// upgradeFast answers /ws over HTTP/1.1.
func upgradeFast(ctx *fasthttp.RequestCtx) {
	up, conn := string(ctx.Request.Header.Peek("Upgrade")), string(ctx.Request.Header.Peek("Connection"))
	resp := &ctx.Response
	if !strings.EqualFold(strings.TrimSpace(up), "websocket") || !hasToken(conn, "upgrade") {
		resp.SetStatusCode(fasthttp.StatusBadRequest)
		resp.Header.SetContentType(ctText)
		resp.SetBodyString("400 /ws needs Upgrade: websocket and Connection: Upgrade; got Upgrade " + quote(up) + ", Connection " + quote(conn) + "\n")
		return
	}
	resp.SetStatusCode(fasthttp.StatusSwitchingProtocols)
	resp.Header.Set("Upgrade", "websocket")
	resp.Header.Set("Connection", "Upgrade")
	resp.Header.Set("X-Loadlab-Upgrade", up)
	resp.Header.Set("X-Loadlab-Connection", conn)
	if key := strings.TrimSpace(string(ctx.Request.Header.Peek("Sec-WebSocket-Key"))); key != "" {
		sum := sha1.Sum([]byte(key + websocketGUID))
		resp.Header.Set("Sec-WebSocket-Accept", base64.StdEncoding.EncodeToString(sum[:]))
	}
	ctx.Hijack(echoUpgraded)
}

// upgradeHeader is the HTTP/1.1 server's HeaderReceived: a proxy may list
// close beside upgrade on /ws (lighttpd's mod_proxy sends "Connection:
// close, upgrade"); the upgrade wins, as in WebSocket servers. fasthttp
// hijacks only a connection it was not told to close, and takes that from
// the request before the handler runs.
func upgradeHeader(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if h.ConnectionClose() && string(h.RequestURI()) == "/ws" && hasToken(string(h.Peek("Connection")), "upgrade") {
		h.ResetConnectionClose()
	}
	return fasthttp.RequestConfig{}
}

// echoUpgraded echoes what arrives on an upgraded connection.
func echoUpgraded(c net.Conn) {
	buf := make([]byte, 4096)
	for {
		_ = c.SetReadDeadline(time.Now().Add(upgradeIdle))
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func quote(s string) string { return `"` + s + `"` }

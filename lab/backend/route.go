package backend

import (
	"strconv"
	"strings"
	"time"
)

// MaxDelay caps the sleep of /delay/D.
const MaxDelay = 10 * time.Second

// Content types the endpoints answer with.
const (
	ctJSON   = "application/json"
	ctBinary = "application/octet-stream"
	ctText   = "text/plain; charset=utf-8"
)

// kind says how an endpoint answers; every protocol adapter (fasthttp for
// HTTP/1.1, net/http for HTTP/3) switches on it, so the routing and the
// bodies exist once.
type kind uint8

const (
	kindNotFound kind = iota // 404
	kindBad                  // 400 with msg
	kindBody                 // fixed body with Content-Length
	kindChunked              // body in chunkSize pieces, no Content-Length
	kindClose                // fixed body, then close the connection
	kindDelay                // sleep delay, then fixed body
	kindStatus               // status with a short text body
	kindEcho                 // request description
	kindStats                // counters as JSON
	kindUpgrade              // /ws: 101 Switching Protocols, then an echo (websocket.go)
)

// chunkSize is the piece size /chunked writes: the 1k body goes out in four
// chunks, enough to exercise a client's chunked decoder.
const chunkSize = 256

// route is the resolved answer for one request path.
type route struct {
	kind   kind
	body   []byte        // kindBody, kindChunked, kindClose, kindDelay
	ctype  string        // content type of body
	status int           // kindStatus
	delay  time.Duration // kindDelay
	msg    string        // kindBad
}

// resolve maps a request path (already decoded, without query) to its
// answer. It does not retain path.
func resolve(path string) route {
	switch path {
	case "/1k":
		return route{kind: kindBody, body: body1k, ctype: ctJSON}
	case "/100k":
		return route{kind: kindBody, body: body100k, ctype: ctBinary}
	case "/1m":
		return route{kind: kindBody, body: body1m, ctype: ctBinary}
	case "/echo":
		return route{kind: kindEcho}
	case "/chunked":
		return route{kind: kindChunked, body: body1k, ctype: ctJSON}
	case "/close":
		return route{kind: kindClose, body: body1k, ctype: ctJSON}
	case "/_stats":
		return route{kind: kindStats}
	case "/ws":
		return route{kind: kindUpgrade}
	}
	if arg, ok := strings.CutPrefix(path, "/status/"); ok {
		code, err := strconv.Atoi(arg)
		if err != nil || len(arg) != 3 || code < 200 || code > 599 {
			return route{kind: kindBad, msg: "bad status: want /status/NNN with NNN in 200-599\n"}
		}
		return route{kind: kindStatus, status: code}
	}
	if arg, ok := strings.CutPrefix(path, "/delay/"); ok {
		d, err := parseDelay(arg)
		if err != nil {
			return route{kind: kindBad, msg: "bad delay: want /delay/D with a duration like 50ms (max 10s) or integer milliseconds\n"}
		}
		return route{kind: kindDelay, delay: d, body: body1k, ctype: ctJSON}
	}
	return route{kind: kindNotFound}
}

// parseDelay reads a Go duration ("50ms", "1.5s") or a bare integer number
// of milliseconds, rejects negatives and caps the result at MaxDelay.
func parseDelay(s string) (time.Duration, error) {
	var d time.Duration
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms > int64(MaxDelay/time.Millisecond) {
			ms = int64(MaxDelay / time.Millisecond)
		}
		d = time.Duration(ms) * time.Millisecond
	} else {
		d, err = time.ParseDuration(s)
		if err != nil {
			return 0, err
		}
	}
	if d < 0 {
		return 0, strconv.ErrRange
	}
	return min(d, MaxDelay), nil
}

// notFoundBody is the 404 body.
const notFoundBody = "404 not found: try /1k /100k /1m /echo /status/NNN /chunked /close /delay/D /ws /_stats\n"

// statusBody is the short body of /status/NNN: "NNN Reason\n".
func statusBody(code int, reason string) string {
	return strconv.Itoa(code) + " " + reason + "\n"
}

// appendStats appends the /_stats JSON document to dst.
func appendStats(dst []byte, st Stats) []byte {
	dst = append(dst, `{"accepted": `...)
	dst = strconv.AppendUint(dst, st.Accepted, 10)
	dst = append(dst, `, "open": `...)
	dst = strconv.AppendUint(dst, st.Open, 10)
	dst = append(dst, `, "requests": `...)
	dst = strconv.AppendUint(dst, st.Requests, 10)
	if len(st.Apps) > 0 {
		dst = append(dst, `, "apps": [`...)
		for i, n := range st.Apps {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = strconv.AppendUint(dst, n, 10)
		}
		dst = append(dst, ']')
	}
	return append(dst, "}\n"...)
}

package gen

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/gen/h2"
	"github.com/loadlab/loadlab/gen/result"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Engine is HTTP/2 on the same raw sockets, TCP loops and byte-stream
// seam as HTTP/1.1: over TLS with ALPN h2 (the same handshakes, lean or
// crypto/tls), or h2c with prior knowledge for http:// targets. Each loop
// (h2loop.go) owns its connection slots (h2conn.go); each slot's socket
// carries one h2.Conn (package gen/h2: frames, HPACK, flow control, no
// I/O) with up to Config.Streams requests in flight.
type h2Engine struct {
	tcpEngine
	tmpls   []*h2.Template // the request of each target, encoded once (HPACK static table and literals)
	streams int
}

// newH2Engine encodes the request and checks that the target accepts
// connections.
func newH2Engine(r *run) (*h2Engine, error) {
	var tmpls []*h2.Template
	for i := range r.cfg.reqs {
		tmpl, err := h2Template(&r.cfg.reqs[i])
		if err != nil {
			return nil, err
		}
		tmpls = append(tmpls, tmpl)
	}
	tcp, err := newTCPEngine(r)
	if err != nil {
		return nil, err
	}
	return &h2Engine{tcpEngine: tcp, tmpls: tmpls, streams: r.cfg.Streams}, nil
}

// h2Template encodes the run's request as HTTP/2 header block and body:
// the URL's scheme, authority and path, the headers (a Host header becomes
// :authority; fields HTTP/2 forbids are left out, as RFC 9113 8.2.2 says),
// a user-agent unless one is given, content-length from the body.
func h2Template(c *reqSpec) (*h2.Template, error) {
	fields := make([]hpack.HeaderField, 0, len(c.headers))
	for _, h := range c.headers {
		name := strings.ToLower(h.Name)
		fields = append(fields, hpack.HeaderField{Name: h.Name, Value: h.Value,
			Sensitive: name == "authorization" || name == "proxy-authorization" || name == "cookie"})
	}
	t, err := h2.NewTemplate(h2.Request{
		Method:    c.method,
		Scheme:    c.target.Scheme,
		Authority: c.target.HostHeader,
		Path:      c.target.Path,
		Header:    fields,
		Body:      c.body,
	})
	if err != nil {
		return nil, usage("HTTP/2 cannot carry the request ({Method}, the URL or {Headers}): %v", err)
	}
	return t, nil
}

func (e *h2Engine) protocol() string { return "h2" }

func (e *h2Engine) newDriver(lc *lifecycle, conns int) (driver, error) {
	l, err := newH2Loop(e, lc, conns)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// outcome adds the streams per connection and what the loops saw of the
// protocol to the CPU accounts.
func (e *h2Engine) outcome(o *outcome) {
	e.tcpEngine.outcome(o)
	o.streams = e.streams
	inf := &result.H2Info{}
	var reset, goaway [h2CodeSlots]uint64
	for _, lc := range e.r.loops {
		k := &lc.d.(*h2Loop).h2c
		inf.GoAways += k.goaways
		inf.Refused += k.refused
		if s := k.serverStreams; s > 0 && (inf.ServerMaxStreams == 0 || s < inf.ServerMaxStreams) {
			inf.ServerMaxStreams = s
		}
		for i := range reset {
			reset[i] += k.resetCodes[i]
			goaway[i] += k.goawayCodes[i]
		}
	}
	inf.ResetCodes, inf.GoAwayCodes = codeCounts(reset), codeCounts(goaway)
	o.h2 = inf
	if s := inf.ServerMaxStreams; s > 0 {
		e.r.notes = append(e.r.notes, fmt.Sprintf("the server limited concurrent streams (SETTINGS_MAX_CONCURRENT_STREAMS) to %d per connection, below the run's %d streams: a connection carried at most %d requests at once", s, e.streams, s))
	}
}

// h2CodeSlots is how many HTTP/2 error codes are counted apart: the 14 of
// RFC 9113 (NO_ERROR 0x0 to HTTP_1_1_REQUIRED 0xd), then one for the rest.
const h2CodeSlots = 15

// codeSlot is the counting slot of code.
func codeSlot(code http2.ErrCode) int { return int(min(code, h2CodeSlots-1)) }

// codeCounts names the non-zero counts by code (nil when there are none).
func codeCounts(n [h2CodeSlots]uint64) map[string]uint64 {
	var m map[string]uint64
	for i, v := range n {
		if v == 0 {
			continue
		}
		if m == nil {
			m = map[string]uint64{}
		}
		name := "OTHER"
		if i < h2CodeSlots-1 {
			name = http2.ErrCode(i).String()
		}
		m[name] += v
	}
	return m
}

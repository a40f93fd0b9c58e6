package h2

import (
	"fmt"
	"strings"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	wire "github.com/loadlab/loadlab/gen/h2"
	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/gen/internal/tcploop"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/fields"
)

// engine is HTTP/2 on the same raw sockets, TCP loops and byte-stream
// seam as HTTP/1.1: over TLS with ALPN h2 (the same handshakes, lean or
// crypto/tls), or h2c with prior knowledge for http:// targets. Each loop
// (loop.go) owns its connection slots (conn.go); each slot's socket
// carries one wire.Conn (package gen/h2: frames, HPACK, flow control, no
// I/O) with up to Spec.Streams requests in flight.
type engine struct {
	tcploop.Engine
	tmpls   []*wire.Template // the request of each target, encoded once (HPACK static table and literals)
	streams int
	loops   []*counters // each loop's, in loop order (NewDriver adds them)
}

// counters are what a loop saw of the protocol (see result.H2Info).
type counters struct {
	goaways       uint64
	refused       uint64
	resetCodes    [codeSlots]uint64
	goawayCodes   [codeSlots]uint64
	serverStreams uint32 // lowest server limit below streams, 0 = none
}

// New encodes the requests and checks that the target accepts
// connections.
func New(r *run.Run) (run.Engine, error) {
	var tmpls []*wire.Template
	for i := range r.Spec.Reqs {
		tmpl, err := h2Template(&r.Spec.Reqs[i])
		if err != nil {
			return nil, err
		}
		tmpls = append(tmpls, tmpl)
	}
	tcp, err := tcploop.NewEngine(r)
	if err != nil {
		return nil, err
	}
	return &engine{Engine: tcp, tmpls: tmpls, streams: r.Spec.Streams}, nil
}

// h2Template encodes the run's request as HTTP/2 header block and body:
// the URL's scheme, authority and path, the headers (a Host header becomes
// :authority; fields HTTP/2 forbids are left out, as RFC 9113 8.2.2 says),
// a user-agent unless one is given, content-length from the body.
func h2Template(c *run.Req) (*wire.Template, error) {
	hf := make([]hpack.HeaderField, 0, len(c.Headers))
	for _, h := range c.Headers {
		name := strings.ToLower(h.Name)
		hf = append(hf, hpack.HeaderField{Name: h.Name, Value: h.Value,
			Sensitive: name == "authorization" || name == "proxy-authorization" || name == "cookie"})
	}
	t, err := wire.NewTemplate(wire.Request{
		Method:    c.Method,
		Scheme:    c.Target.Scheme,
		Authority: c.Target.HostHeader,
		Path:      c.Target.Path,
		Header:    hf,
		Body:      c.Body,
	})
	if err != nil {
		return nil, fields.Usagef("HTTP/2 cannot carry the request ({Method}, the URL or {Headers}): %v", err)
	}
	return t, nil
}

func (e *engine) Protocol() string { return "h2" }

// Stats adds the streams per connection and what the loops saw of the
// protocol to the CPU accounts.
func (e *engine) Stats(st *run.Stats) {
	e.Engine.Stats(st)
	st.Streams = e.streams
	inf := &result.H2Info{}
	var reset, goaway [codeSlots]uint64
	for _, k := range e.loops {
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
	st.H2 = inf
	if s := inf.ServerMaxStreams; s > 0 {
		e.R.Note(fmt.Sprintf("the server limited concurrent streams (SETTINGS_MAX_CONCURRENT_STREAMS) to %d per connection, below the run's %d streams: a connection carried at most %d requests at once", s, e.streams, s))
	}
}

// codeSlots is how many HTTP/2 error codes are counted apart: the 14 of
// RFC 9113 (NO_ERROR 0x0 to HTTP_1_1_REQUIRED 0xd), then one for the rest.
const codeSlots = 15

// codeSlot is the counting slot of code.
func codeSlot(code http2.ErrCode) int { return int(min(code, codeSlots-1)) }

// codeCounts names the non-zero counts by code (nil when there are none).
func codeCounts(n [codeSlots]uint64) map[string]uint64 {
	var m map[string]uint64
	for i, v := range n {
		if v == 0 {
			continue
		}
		if m == nil {
			m = map[string]uint64{}
		}
		name := "OTHER"
		if i < codeSlots-1 {
			name = http2.ErrCode(i).String()
		}
		m[name] += v
	}
	return m
}

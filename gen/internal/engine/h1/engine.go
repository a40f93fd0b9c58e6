package h1

import (
	"strconv"
	"strings"

	wire "github.com/loadlab/loadlab/gen/h1"
	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/gen/internal/tcploop"
)

// engine is HTTP/1.1, plain or over TLS, on raw non-blocking sockets: one
// TCP loop (loop.go) per pinned CPU, each owning its connections
// (conn.go), whose byte stream is a plain socket or TLS (package sock).
type engine struct {
	tcploop.Engine
	reqs [][]byte // the request of each target, serialized once
	head []bool   // whether it is a HEAD request
}

// New checks that the target accepts connections and serializes the
// requests.
func New(r *run.Run) (run.Engine, error) {
	tcp, err := tcploop.NewEngine(r)
	if err != nil {
		return nil, err
	}
	e := &engine{Engine: tcp}
	for i := range r.Spec.Reqs {
		e.reqs = append(e.reqs, buildRequest(&r.Spec.Reqs[i]))
		e.head = append(e.head, r.Spec.Reqs[i].Method == "HEAD")
	}
	return e, nil
}

func (e *engine) Protocol() string { return "http/1.1" }

// buildRequest serializes an HTTP/1.1 request once; every connection
// writes these same bytes for every request of its target. With NewConn
// the request still asks for keep-alive: the generator closes first after
// the response, so TIME_WAIT lands on its side (see gen.Config.Close and
// SrcAddrs); send a "Connection: close" header to make the server close
// first instead.
func buildRequest(c *run.Req) []byte {
	var b strings.Builder
	b.WriteString(c.Method)
	b.WriteByte(' ')
	b.WriteString(c.Target.Path)
	b.WriteString(" HTTP/1.1\r\n")
	if !run.HasHeader(c.Headers, "host") {
		b.WriteString("Host: ")
		b.WriteString(c.Target.HostHeader)
		b.WriteString("\r\n")
	}
	if !run.HasHeader(c.Headers, "user-agent") {
		b.WriteString("User-Agent: loadlab\r\n")
	}
	for _, h := range c.Headers {
		if strings.EqualFold(h.Name, "content-length") {
			continue // set below from the body
		}
		b.WriteString(h.Name)
		b.WriteString(": ")
		b.WriteString(h.Value)
		b.WriteString("\r\n")
	}
	if len(c.Body) > 0 || c.Method == "POST" || c.Method == "PUT" || c.Method == "PATCH" {
		b.WriteString("Content-Length: ")
		b.WriteString(strconv.Itoa(len(c.Body)))
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	b.Write(c.Body)
	return []byte(b.String())
}

// classify maps an error to its class (run.Classify), the HTTP/1.1
// parser's own too: a response cut short is closed, a malformed one
// parse.
func classify(err error) run.ErrorClass {
	switch {
	case err == wire.ErrClosedEarly:
		return run.ClassClosed
	case wire.IsParseError(err):
		return run.ClassParse
	}
	return run.Classify(err)
}

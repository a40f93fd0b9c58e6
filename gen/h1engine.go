package gen

// h1Engine is HTTP/1.1, plain or over TLS, on raw non-blocking sockets: one
// TCP loop (h1loop.go) per pinned CPU, each owning its connections
// (h1conn.go), whose byte stream is a plain socket or TLS (package sock).
type h1Engine struct {
	tcpEngine
	reqs [][]byte // the request of each target, serialized once
	head []bool   // whether it is a HEAD request
}

// newH1Engine checks that the target accepts connections and serializes
// the request.
func newH1Engine(r *run) (*h1Engine, error) {
	tcp, err := newTCPEngine(r)
	if err != nil {
		return nil, err
	}
	e := &h1Engine{tcpEngine: tcp}
	for i := range r.cfg.reqs {
		e.reqs = append(e.reqs, buildRequest(&r.cfg.reqs[i]))
		e.head = append(e.head, r.cfg.reqs[i].method == "HEAD")
	}
	return e, nil
}

func (e *h1Engine) protocol() string { return "http/1.1" }

func (e *h1Engine) newDriver(lc *lifecycle, conns int) (driver, error) {
	return newLoop(e, lc, conns), nil
}

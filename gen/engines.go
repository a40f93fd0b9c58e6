package gen

import (
	"github.com/loadlab/loadlab/gen/internal/engine/h1"
	"github.com/loadlab/loadlab/gen/internal/engine/h2"
	"github.com/loadlab/loadlab/gen/internal/engine/h3lean"
	"github.com/loadlab/loadlab/gen/internal/engine/h3std"
	"github.com/loadlab/loadlab/gen/internal/run"
)

// engines is the table of engines: the first whose runs says yes to a
// prepared run runs it. Each is its own package under gen/internal/engine,
// on the run core (gen/internal/run); the HTTP/1.1, HTTP/2 and lean HTTP/3
// ones on the TCP loop (gen/internal/tcploop).
var engines = []struct {
	name string
	runs func(s *run.Spec) bool
	new  run.NewEngine
}{
	// HTTP/3 on the lean QUIC client (gen/quic), where lean TLS applies.
	{"h3lean", func(s *run.Spec) bool { return s.HTTP3 && s.TLS.Lean }, h3lean.New},
	// HTTP/3 on quic-go: TLS.Engine std, or what the lean client does not do.
	{"h3std", func(s *run.Spec) bool { return s.HTTP3 }, h3std.New},
	// HTTP/2 (gen/h2), h2c or over TLS.
	{"h2", func(s *run.Spec) bool { return s.HTTP2 }, h2.New},
	// HTTP/1.1 (gen/h1), plain or over TLS.
	{"h1", func(*run.Spec) bool { return true }, h1.New},
}

// engineOf returns the constructor of the engine that runs s.
func engineOf(s *run.Spec) run.NewEngine {
	for _, e := range engines {
		if e.runs(s) {
			return e.new
		}
	}
	return nil // not reached: h1 runs everything
}

package run

import (
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/pin"
)

// A run is one shared lifecycle and one engine per protocol. The core
// (this package) keeps the schedule and its intended times, the pending
// queue, the stop, the drain, the warmup, the per-second flush, the
// wakeup planning, the accounting and the result. An engine knows only its
// protocol: it prepares the run (probe, request, sockets), builds one
// driver per loop, and starts a request on a connection when the
// lifecycle says one is due. The engines live in gen/internal/engine/*;
// the HTTP/1.1, HTTP/2 and lean HTTP/3 ones run on the TCP loop
// (gen/internal/tcploop). gen's table of engines picks the one that runs.

// Engine is one protocol's part of a run.
type Engine interface {
	// Protocol names the result's protocol: "http/1.1", "h2", "h3".
	Protocol() string
	// Claim prepares the process for nloops loops on cpus (the TCP loops:
	// a P per loop; quic-go's HTTP/3: the whole process on cpus) and
	// returns the undo.
	Claim(cpus pin.CPUSet, nloops int) (release func(), err error)
	// NewDriver builds the driver of loop lc, with conns connections.
	NewDriver(lc *Lifecycle, conns int) (Driver, error)
	// Stats adds what only the engine knows to s: the CPU accounts (one
	// per loop, or one per CPU) and its notes. Called after every loop ended.
	Stats(s *Stats)
	// Closes counts the sockets the run's loops have closed so far (the
	// TIME_WAIT sampler dumps the socket table only once there are some).
	Closes() int64
}

// Driver is one loop of an engine: its connections and how it sleeps.
// Lifecycle.main calls it on the loop's own goroutine (locked to a thread
// pinned to the loop's CPU, by Setup); Wake may be called from anywhere.
// It is the one dynamic call on the per-request path.
//
// The methods marked "under lock" are called between Lock and Unlock. They
// touch state the engine's other goroutines share with the loop (quic-go's
// HTTP/3 workers settle requests into the lifecycle); the TCP loops have
// no other goroutines and their lock is a no-op.
type Driver interface {
	Setup() error    // pin the thread, enter the namespace, make the wait primitive
	Begin(now int64) // the run starts: in closed loop every connection starts a request
	Lock()
	Unlock()
	Idle() (conn int, ok bool)                           // under lock: a free connection for a due request
	Send(conn int, intended int64, tgt int32, now int64) // under lock: start a request for target tgt intended at intended on it
	Inflight() int                                       // under lock: requests in flight
	Tick(now int64)                                      // once per wakeup: time out requests, restart backed-off connections
	GiveUp(now int64, class ErrorClass, err error) int   // under lock: the drain is over (or the loop broke down); fail what is in flight as class, err, return how many
	Wait(now, until int64)                               // sleep until until (ns since the start) at the latest, handling what arrives
	Wake()                                               // interrupt Wait
	AccountBegin()                                       // the measured window begins (CPU accounts)
	AccountEnd()                                         // and ends
	Finish()                                             // after the loop: stop the engine's goroutines
	Teardown()                                           // close sockets and descriptors
}

// LiveSharer is a Driver that can account its thread's CPU over the last
// second (the TCP loops: one thread pinned to one CPU).
type LiveSharer interface {
	LiveShare() (result.LiveCPU, bool)
}

// OpenCounter is a Driver that can count its open connections.
type OpenCounter interface {
	OpenConns() int
}

// Stats is what an engine adds to its run's result once every loop has
// ended (Engine.Stats): the account of its CPUs, which the engines measure
// differently, and what it saw of its protocol.
type Stats struct {
	Gen         result.Generator // the engine's parts: IO, IONote, Notes (and CPUs, for quic-go's HTTP/3)
	Shares      []CPUShare       // per loop (the TCP loops) or per CPU (quic-go's HTTP/3)
	QUICVersion string
	PerCPU      bool           // Shares are per CPU, not per loop (quic-go's HTTP/3 engine)
	QUICLoops   bool           // the loops are lean QUIC loops (their starvation alone limits the run)
	Streams     int            // HTTP/2: streams per connection
	H2          *result.H2Info // HTTP/2: what the loops saw of the protocol
}

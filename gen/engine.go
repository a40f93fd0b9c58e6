package gen

import "github.com/loadlab/loadlab/pin"

// The engines.
//
// A run is one shared lifecycle and one engine per protocol. The shared part
// keeps the schedule and its intended times, the pending queue, the stop,
// the drain, the warmup, the per-second flush, the wakeup planning, the
// accounting and the result (run.go, lifecycle.go, schedule.go, record.go,
// aggregate.go, outcome.go). An engine knows only its protocol: it prepares
// the run (probe, request, sockets), builds one driver per loop, and starts a
// request on a connection when the lifecycle says one is due. HTTP/1.1
// (h1*.go; parser gen/h1) and HTTP/2 (h2*.go; framing
// gen/h2) run on raw sockets in TCP loops (tcploop.go, behind the poller seam: epoll.go or io_uring,
// uringio.go, as Config.IO says), plain or TLS behind
// the byte-stream seam of gen/internal/sock (TLS: gen/internal/tlsfd,
// configured by tlsconfig.go); HTTP/3 on quic-go (h3*.go). The result
// model, and the exact merging of the shards of one run, are package
// gen/result; a run's result is assembled in outcome.go.

// engine is one protocol's part of a run.
type engine interface {
	// protocol names the result's protocol: "http/1.1", "h2", "h3".
	protocol() string
	// claim prepares the process for nloops loops on cpus (HTTP/1.1: a P
	// per loop; HTTP/3: the whole process on cpus) and returns the undo.
	claim(cpus pin.CPUSet, nloops int) (release func(), err error)
	// newDriver builds the driver of loop lc, with conns connections.
	newDriver(lc *lifecycle, conns int) (driver, error)
	// outcome adds what only the engine knows to o: the CPU accounts (one
	// per loop, or one per CPU) and its notes. Called after every loop ended.
	outcome(o *outcome)
	// closes counts the sockets the run's loops have closed so far (the
	// TIME_WAIT sampler dumps the socket table only once there are some).
	closes() int64
}

// driver is one loop of an engine: its connections and how it sleeps.
// lifecycle.main calls it on the loop's own goroutine (locked to a thread
// pinned to the loop's CPU, by setup); wake may be called from anywhere.
//
// The methods marked "under lock" are called between lock and unlock. They
// touch state the engine's other goroutines share with the loop (HTTP/3's
// workers settle requests into the lifecycle); HTTP/1.1 has no other
// goroutines and its lock is a no-op.
type driver interface {
	setup() error    // pin the thread, enter the namespace, make the wait primitive
	begin(now int64) // the run starts: in closed loop every connection starts a request
	lock()
	unlock()
	idle() (conn int, ok bool)                           // under lock: a free connection for a due request
	send(conn int, intended int64, tgt int32, now int64) // under lock: start a request for target tgt intended at intended on it
	inflight() int                                       // under lock: requests in flight
	tick(now int64)                                      // once per wakeup: time out requests, restart backed-off connections
	giveUp(now int64, class ErrorClass, err error) int   // under lock: the drain is over (or the loop broke down); fail what is in flight as class, err, return how many
	wait(now, until int64)                               // sleep until until (ns since the start) at the latest, handling what arrives
	wake()                                               // interrupt wait
	accountBegin()                                       // the measured window begins (CPU accounts)
	accountEnd()                                         // and ends
	finish()                                             // after the loop: stop the engine's goroutines
	teardown()                                           // close sockets and descriptors
}

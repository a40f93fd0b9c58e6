// Package run is gen's run core, the same for every engine: a run's spec
// (Spec, what gen's Prepare made), its lifecycle, schedule and pacer, the
// pending queue, the recorder, the per-second aggregation and its spill,
// the result's assembly, the self-check and the wake floor, the CPU
// accounts, the error classes, the TLS client, and the seams an engine
// plugs into (Engine, Driver). It imports no engine and not gen.
package run

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadlab/loadlab/gen/internal/tlsfd"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/pin"
)

// A run is one shared lifecycle and one engine per protocol. The core
// keeps the schedule and its intended times, the pending
// queue, the stop, the drain, the warmup, the per-second flush, the
// wakeup planning, the accounting and the result. An engine knows only its
// protocol: it prepares the run (probe, request, sockets), builds one
// driver per loop, and starts a request on a connection when the
// lifecycle says one is due. The engines live in gen/internal/engine/*;
// the HTTP/1.1, HTTP/2 and lean HTTP/3 ones run on the TCP loop
// (gen/internal/tcploop). gen's table of engines picks the one that runs.

// NewEngine builds an engine for a run (each engine package's New).
type NewEngine func(r *Run) (Engine, error)

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

// Run is the state shared by the loops of one run, whatever the engine.
// Loops only read it, except for the atomics and channels.
type Run struct {
	Spec  *Spec
	Dst   netip.AddrPort // the target's address
	Start time.Time      // the run's time origin (the loops' clock reads ns since it)
	TLS   *TLSClient     // https:// only
	Loops []*Lifecycle   // one per loop, in loop order

	eng     Engine
	warmup  int64 // ns since Start
	netns   int   // fd of the namespace to enter, -1 for none
	ready   sync.WaitGroup
	goCh    chan struct{}
	stopped atomic.Bool // interrupted (the context ended)
	aborted atomic.Bool // a loop's setup failed: the others leave at once
	broken  atomic.Bool // a loop's I/O failed mid-run: every loop stops (failErr says why)
	lag     lagJudge    // the lag rule's samples and what it judged (set when the result is assembled)

	loopsDone  sync.WaitGroup
	unfinished atomic.Int64
	seconds    chan loopSecond
	histPool   chan *hdr.Histogram
	obs        []Observer     // told each second and at the end
	liveFree   chan liveHists // observers: the loops' spare live histograms
	final      *result.Live   // observers: the result's own Live, told once the result is assembled
	histMax    int64          // latency histogram ceiling, µs (see histCeiling)
	notes      []string

	failMu  sync.Mutex
	failErr error

	diagFd int // sock_diag netlink socket in the generator's namespace, -1 if none

	wake *wakeProbe // Spec.WakeProbe's, over the measured window (nil: none)
}

// Observer watches a run as it goes (gen.Observer, which says more).
type Observer interface {
	Second(lv *result.Live)
	End(lv *result.Live)
}

// loopSecond is a loop's share of one second of the run, handed to the
// aggregator at each second boundary.
type loopSecond struct {
	loop   int
	t      int
	counts secondCounts
	hist   *hdr.Histogram
	dur    int64     // ns of the second the loop covered (1 s but for the last)
	live   *loopLive // the loop's share of the observers' Live (nil: no observers)
}

// Lifecycle is one loop's share of the run, the same for every engine: its
// schedule (intended times, pending queue, quota), its recorder, and the
// phases of the run (warmup, measured window, stop, drain, end) with the
// per-second reports. main drives it and calls the loop's driver for what
// is the protocol's; the driver reads it (the engine's seam to the core).
//
// The fields from Stopping on are written by the loop's own goroutine;
// Stopping, Ended and the schedule's pending queue and counters are also
// read and written by an engine's other goroutines, under the driver's lock.
type Lifecycle struct {
	ID  int
	CPU int
	R   *Run
	D   Driver
	Rec *Recorder
	Schedule

	Stopping   bool  // no new requests (pending ones still go out)
	Ended      bool  // the drain is over: what was still owed is given up; later results are not counted
	stopWall   int64 // when the stop began (an interrupt stops early)
	drainEnd   int64
	nextSecond int64
	secIdx     int
	warmupSeen bool

	// Broken is the failure of the loop's own I/O (its io_uring), set by
	// the driver on the loop's goroutine: the loop ends at once and the run
	// ends with it (breakDown).
	Broken error
	// in is what the loop read from a server last (the loop's own buffer,
	// not a copy): a panic's report shows it (survive).
	in []byte
}

// loopLive is a loop's share of a result.Live, made on the loop's own thread
// (under the driver's lock) at the end of each second.
type loopLive struct {
	hists    liveHists
	tally    result.Tally
	written  uint64
	dials    uint64
	open     int
	inflight int
	pending  int
	lagMax   int64
	cpu      *result.LiveCPU // nil: no account per loop (HTTP/3)
}

// CPUShare is a loop's (or a CPU's) account as fractions of wall time.
type CPUShare struct {
	busy    float64
	wait    float64 // runnable, not running
	softirq float64 // the CPU's, context only (see above)
	steal   float64 // the CPU's, context only
	cpuS    float64 // CPU seconds used
}

// TLSClient builds the TLS state of new connections (tlsfd.Client, which
// the TCP loops' connections share; HTTP/3 uses its crypto/tls
// configuration) and remembers what the first handshake negotiated: it is
// the Client's Capturer.
type TLSClient struct {
	tlsfd.Client
	why   string // why the lean TLS 1.3 handshakes do not apply, if they do not
	http3 bool   // HTTP/3: lean means the lean QUIC client, std quic-go

	once     sync.Once
	captured atomic.Bool
	inf      result.TLSInfo
}

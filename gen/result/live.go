package result

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Live is a run as it stands at the end of one second, as the run's
// observers see it (gen.Observer): the second that just ended, as the
// result's per_second keeps it, and the run so far. The loops hand their
// share over once a second with their per-second report, never per
// request: a run with observers costs a request one more histogram record,
// a run without them nothing.
//
// Counts are cumulative from the start of the measured window, the same
// tallies as the result's (Tally: requests, ok, status, errors by class,
// bytes read, handshakes), so the Final Live equals the result. Rates and
// gauges are of the last second.
type Live struct {
	T       int       // the second (0 is the run's first, warmup included)
	Start   time.Time // the run's time origin: second T began at Start + T s
	Elapsed float64   // seconds since Start
	Final   bool      // the run has ended: the counts and histograms are the result's

	// Second is the second that ended, as the result's per_second keeps
	// it, its histogram encoded in Hist (nil in the Final Live).
	Second *Second

	Tally        Tally  // measured window, cumulative
	BytesWritten uint64 // request bytes the loops wrote (the whole run, TLS records excluded)
	Dials        uint64 // connections opened (the whole run; HTTP/3: established)
	Open         int    // connections open now
	InFlight     int    // requests sent and not yet answered
	Pending      int    // open loop: requests due and not yet sent

	Achieved float64 // 2xx responses completed in the last second, per second (Final: the result's achieved_rate)
	LagMaxUs int64   // open loop: the latest any loop woke for a due request in the last second, µs

	// CPUs is the generator's account of each loop's CPU over the last
	// second (HTTP/1.1 and HTTP/2; empty for quic-go's HTTP/3, whose
	// goroutines are not tied to a CPU): busy + starved + idle = 1. In the
	// Final Live it is the result's, over the measured window.
	CPUs []LiveCPU

	// Corrected (from the intended time) and Uncorrected (from the write)
	// are the measured window's latencies so far, µs. They belong to the
	// run: read them during the call, never keep or change them.
	Corrected, Uncorrected *hdr.Histogram
}

// LiveCPU is one loop's CPU account (see Generator).
type LiveCPU struct {
	CPU                 int
	Busy, Starved, Idle float64
}

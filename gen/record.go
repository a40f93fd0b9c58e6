package gen

import (
	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 µs to 60 s at 3 significant figures, in microseconds.
const (
	histMin     = 1
	histMax     = 60_000_000
	histSigFigs = 3
)

func newHist() *hdr.Histogram { return hdr.New(histMin, histMax, histSigFigs) }

// record adds v (µs) to h, clamped into the histogram's range so that a
// value beyond 60 s is kept as 60 s rather than dropped.
func record(h *hdr.Histogram, v int64) {
	if v < histMin {
		v = histMin
	} else if v > histMax {
		v = histMax
	}
	h.RecordValue(v) // in range by construction: cannot fail
}

// counters are the per-request tallies of one loop. Only the loop's own
// thread writes them; they are read after the loop has stopped, or copied
// into a secondReport by the loop itself.
type counters struct {
	status      [1000]uint64 // by status code (100-999), measured window
	errors      [numErrorClasses]uint64
	firstErr    [numErrorClasses]error // first error seen per class (any time)
	ok          uint64
	non2xx      uint64
	bytes       uint64 // header + body bytes read, measured window
	lateSends   uint64
	dropped     uint64
	handshakes  uint64 // completed TCP+TLS handshakes, measured window
	resumed     uint64
	zeroRTT     uint64 // HTTP/3: requests sent as 0-RTT early data the server accepted
	unsolicited uint64 // idle connections closed because the server sent bytes with no request in flight
}

// recorder holds one loop's histograms and counters. No locks: the loop
// thread owns it.
type recorder struct {
	counters
	corrected   *hdr.Histogram // from intended send time, measured window
	uncorrected *hdr.Histogram // from the actual write, measured window
	lag         *hdr.Histogram // open loop: how late the loop dispatched a due request to a free connection
	handshake   *hdr.Histogram // connect start to handshake done
	interval    *hdr.Histogram // corrected, this second, warmup included

	sec secondCounts
}

// secondCounts are the tallies of the current second.
type secondCounts struct {
	ok, non2xx, errors uint64
	bytes              uint64
}

func newRecorder() *recorder {
	return &recorder{
		corrected:   newHist(),
		uncorrected: newHist(),
		lag:         newHist(),
		handshake:   newHist(),
		interval:    newHist(),
	}
}

// response records a complete response. intended, written and done are
// nanoseconds since the run start; measured says whether the request
// belongs to the measured window.
func (r *recorder) response(status int, intended, written, done int64, nbytes int64, measured bool) {
	corr := (done - intended) / 1000
	record(r.interval, corr)
	ok := status >= 200 && status < 300
	if ok {
		r.sec.ok++
	} else {
		r.sec.non2xx++
	}
	r.sec.bytes += uint64(nbytes)
	if !measured {
		return
	}
	record(r.corrected, corr)
	record(r.uncorrected, (done-written)/1000)
	if status >= 0 && status < len(r.status) {
		r.status[status]++
	}
	if ok {
		r.ok++
	} else {
		r.non2xx++
	}
	r.bytes += uint64(nbytes)
}

// failure records a failed request of class c.
func (r *recorder) failure(c ErrorClass, err error, measured bool) {
	if r.firstErr[c] == nil {
		r.firstErr[c] = err
	}
	r.sec.errors++
	if measured {
		r.errors[c]++
	}
}

package run

import (
	"testing"
	"time"
)

// BenchmarkRecordLive is the recorder's work per response without and with
// an observer (--metrics-addr): with one, each response is also recorded
// into the loop's live histograms, the only per-request work metrics add
// (the per-second part, the aggregator's merge and a scrape, is gen/metrics'
// BenchmarkSecond). Latencies spread from 50 µs to 3 ms, as a loopback run's.
func BenchmarkRecordLive(b *testing.B) {
	for _, live := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "live"}[live], func(b *testing.B) {
			r := newRecorder(0, int64(time.Minute/time.Microsecond))
			if live {
				r.live = liveHists{corrected: newHist(), uncorrected: newHist()}
			}
			b.ReportAllocs()
			var i int64
			for b.Loop() {
				lat := 50_000 + (i*7919)%3_000_000 // ns
				r.Response(0, 200, i, i+1000, i+lat, 1024)
				i++
			}
		})
	}
}

// BenchmarkLiveAdd is the aggregator's once-a-second work per loop with
// observers: the loop's two live histograms merged into the run's sums
// and reset (liveState.add), with a second of 20,000 responses in them.
func BenchmarkLiveAdd(b *testing.B) {
	s := &liveState{corrected: newHist(), uncorrected: newHist(), last: make([]*loopLive, 1), free: make(chan liveHists, 1)}
	h := liveHists{corrected: newHist(), uncorrected: newHist()}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for i := range int64(20_000) {
			record(h.corrected, 50+(i*7919)%3000)
			record(h.uncorrected, 40+(i*7919)%3000)
		}
		b.StartTimer()
		s.add(0, &loopLive{hists: h})
		h = <-s.free
	}
}

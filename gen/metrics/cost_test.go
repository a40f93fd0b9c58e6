package metrics

import (
	"bytes"
	"math/rand/v2"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/common/expfmt"

	"github.com/loadlab/loadlab/gen/result"
)

// liveOf is a Live as a run of two loops passes it a minute in: latencies
// from 50 µs to 60 s in both histograms, three status codes, two error
// classes.
func liveOf() *result.Live {
	corr := hdr.New(1, 60_000_000, 3)
	unc := hdr.New(1, 60_000_000, 3)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		v := int64(50 + rng.ExpFloat64()*400)
		corr.RecordValue(v)
		unc.RecordValue(v / 2)
	}
	corr.RecordValue(60_000_000)
	offered := 20_000.0
	return &result.Live{T: 60, Elapsed: 60, Second: &result.Second{T: 60, Offered: &offered},
		Tally: result.Tally{Requests: 200_010, OK: 199_990, Status: map[string]uint64{"200": 199_990, "404": 10, "503": 5}, Errors: map[string]uint64{"timeout": 3, "reset": 2}},
		Open:  50, InFlight: 50, Achieved: 19_998,
		CPUs:      []result.LiveCPU{{CPU: 1, Busy: 0.4, Idle: 0.6}, {CPU: 2, Busy: 0.3, Idle: 0.7}},
		Corrected: corr, Uncorrected: unc}
}

// BenchmarkSecond is what --metrics-addr costs the generator's process once
// a second beside the loops' work: the aggregator's Observe of the second's
// Live and one scrape (Gather and the text format of every series, the Go
// and process collectors included). bench-gen.sh's +metrics rows scrape once
// a second, so this over a second's CPU of the run bounds the per-second
// part of the overhead (scripts/bench-gen.sh METRICS=1 measures the whole).
func BenchmarkSecond(b *testing.B) {
	lv := liveOf()
	g := NewGen(map[string]string{"run": "bench"})
	reg := NewRegistry(g)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		g.Observe(lv)
		mfs, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		buf.Reset()
		enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/scrape")
}

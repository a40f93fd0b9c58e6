package metrics

import (
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Buckets are the upper bounds, in seconds, of the latency histograms'
// buckets: ten a decade (1, 1.25, 1.6, 2, 2.5, 3.15, 4, 5, 6.3, 8, the R10
// series: each 26% above the last) from 10 µs to 60 s, the run's least
// ceiling. A value above 60 s counts in +Inf only. The counts come from
// the run's own HdrHistograms (1 µs resolution at 3 significant figures),
// so histogram_quantile over them is within one bucket of the result's
// exact percentile.
var Buckets = r10(10e-6, 60)

func r10(lo, hi float64) []float64 {
	steps := []float64{1, 1.25, 1.6, 2, 2.5, 3.15, 4, 5, 6.3, 8}
	var out []float64
	for d := lo; d <= hi; d *= 10 {
		for _, s := range steps {
			v := d * s
			if v > hi*(1+1e-9) {
				return append(out, hi)
			}
			out = append(out, round(v))
		}
	}
	return out
}

// round trims the float noise of d*s (1e-05*1.25 = 1.2500000000000001e-05).
func round(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v))-3)
	return math.Round(v/p) * p
}

// hist is a latency histogram in Prometheus's terms: cumulative counts at
// Buckets, the count and the sum, in seconds.
type hist struct {
	cum   map[float64]uint64
	count uint64
	sum   float64
}

// histOf reads h (µs) into Buckets. Each HdrHistogram bucket's count goes
// to the first bound at or above the bucket's highest value: a value is
// never counted below its bucket, and its bucket is at most 0.1% wide.
func histOf(h *hdr.Histogram) hist {
	out := hist{cum: make(map[float64]uint64, len(Buckets))}
	per := make([]uint64, len(Buckets))
	if h == nil {
		for _, b := range Buckets {
			out.cum[b] = 0
		}
		return out
	}
	var over uint64
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		n := uint64(b.Count)
		out.count += n
		s := float64(b.To) / 1e6
		// Within its bucket a value is taken at the middle, as the
		// HdrHistogram's own mean does.
		out.sum += float64(b.Count) * float64(b.From+b.To) / 2 / 1e6
		i := searchBound(s)
		if i == len(Buckets) {
			over += n
			continue
		}
		per[i] += n
	}
	var c uint64
	for i, b := range Buckets {
		c += per[i]
		out.cum[b] = c
	}
	return out
}

// searchBound is the index of the first bound at or above s (len(Buckets)
// when none is).
func searchBound(s float64) int {
	lo, hi := 0, len(Buckets)
	for lo < hi {
		m := (lo + hi) / 2
		if Buckets[m] >= s {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

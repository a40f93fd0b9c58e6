package results

import (
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/loadlab/loadlab/lab/watch"
)

// SpectrumPoint is the corrected latency at one percentile.
type SpectrumPoint struct {
	P  float64 `json:"p"`  // percentile, 0-100
	Us int64   `json:"us"` // latency, µs
}

// ProxySample is one reading of the proxy's cgroup and namespace.
type ProxySample struct {
	T         float64 `json:"t"`          // seconds since the step started
	CPU       float64 `json:"cpu"`        // cores busy since the previous sample
	Mem       uint64  `json:"mem"`        // memory charged (bytes): memory.current, page cache included
	MemAnon   uint64  `json:"mem_anon"`   // anonymous memory
	MemKernel uint64  `json:"mem_kernel"` // kernel memory (slab, stacks, socket buffers)
	MemFile   uint64  `json:"mem_file"`   // page cache
	MemPeak   uint64  `json:"mem_peak"`   // highest charge so far
	TimeWait  int     `json:"time_wait"`  // TIME_WAIT sockets (-1 = not counted)
	Procs     int     `json:"procs"`
	Threads   int     `json:"threads"`
	// CFS bandwidth since the previous sample (all omitted without a
	// CPU quota): the quota (cores), periods run, periods throttled and
	// the time throttled.
	CPUQuota    float64 `json:"cpu_quota,omitempty"`
	NrPeriods   uint64  `json:"nr_periods,omitempty"`
	NrThrottled uint64  `json:"nr_throttled,omitempty"`
	ThrottledMs float64 `json:"throttled_ms,omitempty"`
}

// ProxySummary condenses the samples of the measured window (after the
// discard).
type ProxySummary struct {
	Samples     int     `json:"samples"`
	CPUAvg      float64 `json:"cpu_avg"` // cores
	CPUMax      float64 `json:"cpu_max"`
	MemAvg      uint64  `json:"mem_avg"` // memory.current
	MemMax      uint64  `json:"mem_max"`
	NeedAvg     uint64  `json:"anon_kernel_avg"` // anon + kernel: what the proxy needs under load
	NeedMax     uint64  `json:"anon_kernel_max"`
	FileMax     uint64  `json:"page_cache_max"`
	TimeWaitMax int     `json:"time_wait_max"` // -1 = not counted
	ProcsMax    int     `json:"procs_max"`     // most processes in the proxy's group
	ThreadsMax  int     `json:"threads_max"`   // most threads

	// CFS bandwidth over the window (cpu.stat deltas; 0 without a quota):
	// the quota in cores as read back, the 100 ms periods the proxy ran
	// in, those in which it used up its quota and waited, and how long it
	// waited in all.
	CPUQuota    float64 `json:"cpu_quota_cores"`
	NrPeriods   uint64  `json:"nr_periods"`
	NrThrottled uint64  `json:"nr_throttled"`
	ThrottledMs float64 `json:"throttled_ms"`
}

// Spectrum reads the percentile spectrum of a latency histogram the way
// HdrHistogram plots it: five points per decade of 1/(1-p) (0%, 36.9%,
// 60.2%, ... 90%, ... 99%, ... 99.9%...) up to the resolution the count
// allows, p50 included, and the maximum as p=100. Nil for an empty
// histogram.
func Spectrum(h *hdr.Histogram) []SpectrumPoint {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	n := float64(h.TotalCount())
	var out []SpectrumPoint
	added50 := false
	for k := 0; k < 60; k++ {
		x := math.Pow(10, float64(k)/5) // 1/(1-p)
		if x > n {
			break
		}
		p := 100 * (1 - 1/x)
		if !added50 && p > 50 {
			out = append(out, SpectrumPoint{P: 50, Us: h.ValueAtQuantile(50)})
			added50 = true
		}
		out = append(out, SpectrumPoint{P: round6(p), Us: h.ValueAtQuantile(p)})
	}
	return append(out, SpectrumPoint{P: 100, Us: h.Max()})
}

func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }

// FromWatch converts watcher samples.
func FromWatch(ws []watch.Sample) []ProxySample {
	out := make([]ProxySample, 0, len(ws))
	for _, s := range ws {
		out = append(out, ProxySample{
			T: math.Round(s.T.Seconds()*1000) / 1000, CPU: math.Round(s.CPUCores*1000) / 1000,
			Mem: s.MemCurrent, MemAnon: s.MemAnon, MemKernel: s.MemKernel, MemFile: s.MemFile, MemPeak: s.MemPeak, TimeWait: s.TimeWait,
			Procs: s.Procs, Threads: s.Threads,
			CPUQuota: s.CPUQuota, NrPeriods: s.NrPeriods, NrThrottled: s.NrThrottled,
			ThrottledMs: math.Round(float64(s.ThrottledNanos)/1e3) / 1e3,
		})
	}
	return out
}

// Summarize condenses the samples taken at or after from seconds (the
// discard). With none there, it uses all samples.
func Summarize(samples []ProxySample, from float64) ProxySummary {
	var win []ProxySample
	for _, s := range samples {
		if s.T >= from {
			win = append(win, s)
		}
	}
	if len(win) == 0 {
		win = samples
	}
	sum := ProxySummary{Samples: len(win), TimeWaitMax: -1}
	if len(win) == 0 {
		return sum
	}
	var cpu float64
	var mem, need float64
	for _, s := range win {
		cpu += s.CPU
		mem += float64(s.Mem)
		need += float64(s.MemAnon + s.MemKernel)
		sum.CPUMax = math.Max(sum.CPUMax, s.CPU)
		sum.MemMax = max(sum.MemMax, s.Mem)
		sum.NeedMax = max(sum.NeedMax, s.MemAnon+s.MemKernel)
		sum.FileMax = max(sum.FileMax, s.MemFile)
		if s.TimeWait > sum.TimeWaitMax {
			sum.TimeWaitMax = s.TimeWait
		}
		sum.ProcsMax, sum.ThreadsMax = max(sum.ProcsMax, s.Procs), max(sum.ThreadsMax, s.Threads)
		sum.CPUQuota = math.Max(sum.CPUQuota, s.CPUQuota)
		sum.NrPeriods += s.NrPeriods
		sum.NrThrottled += s.NrThrottled
		sum.ThrottledMs += s.ThrottledMs
	}
	sum.ThrottledMs = math.Round(sum.ThrottledMs*1000) / 1000
	sum.CPUAvg = math.Round(cpu/float64(len(win))*1000) / 1000
	sum.MemAvg = uint64(mem / float64(len(win)))
	sum.NeedAvg = uint64(need / float64(len(win)))
	return sum
}

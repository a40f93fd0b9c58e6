package result

import (
	"fmt"
	"io"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// HdrLog writes a run's HdrHistogram interval log (.hlog) as the run goes,
// one interval per second (gen --hdr-log): it is a run observer
// (gen.Observer). The format is the one HdrHistogram's
// HistogramLogProcessor and the Go library's reader read, and ReadHdrLog
// reads back: a whole-second BaseTime, a StartTime with millisecond
// precision, and one line per second "start,length,max,payload" with start
// relative to BaseTime and max in milliseconds (the recorded values are
// corrected latencies in microseconds). Writes are best effort: the run
// goes on whatever w says; its owner sees an error when it closes w.
type HdrLog struct {
	w       io.Writer
	log     *hdr.HistogramLogWriter
	started bool
}

// hlogMaxRatio: Interval_Max is in milliseconds, the values in µs.
const hlogMaxRatio = 1000.0

// NewHdrLog returns an observer that writes the run's interval log to w.
func NewHdrLog(w io.Writer) *HdrLog {
	return &HdrLog{w: w, log: hdr.NewHistogramLogWriter(w)}
}

// Second writes the interval of the second that ended (the header first).
//
//nolint:errcheck // best effort: see HdrLog
func (h *HdrLog) Second(lv *Live) {
	if !h.started {
		h.started = true
		ms := lv.Start.UnixMilli()
		h.log.OutputLogFormatVersion()
		h.log.OutputComment("[loadlab corrected latency, microseconds, one interval per second; Interval_Max in milliseconds]")
		h.log.OutputComment(fmt.Sprintf("[StartTime: %.3f (seconds since epoch), %s]", float64(ms)/1000, lv.Start.UTC().Format(time.RFC3339Nano)))
		base := ms - ms%1000
		h.log.OutputBaseTime(base)
		h.log.SetBaseTime(base)
		h.log.OutputLegend()
	}
	s := lv.Second
	if s == nil || s.Hist == "" {
		return
	}
	start := float64(s.AtMs-h.log.BaseTime()) / 1000
	fmt.Fprintf(h.w, "%.3f,%.3f,%.3f,%s\n", start, s.DurS, float64(s.Maxus)/hlogMaxRatio, s.Hist)
}

// End writes nothing: every second has its interval.
func (h *HdrLog) End(*Live) {}

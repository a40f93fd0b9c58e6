package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"time"
	"unicode/utf8"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadlab/loadlab/internal/units"
)

// ReadResults reads every gen result in data: one JSON result (as --json
// writes it), or several one after another, one per line or indented (as
// `kubectl logs -l job-name=...` prints a Job's shards). Anything else in
// the stream, such as the error line of a shard that failed, is an error
// that quotes it. name is used in errors. Errors are one-line
// *UsageErrors.
func ReadResults(name string, data []byte) ([]*Result, error) {
	var out []*Result
	pos := 0
	for {
		pos += len(data[pos:]) - len(bytes.TrimLeft(data[pos:], " \t\r\n"))
		if pos >= len(data) {
			break
		}
		line := 1 + bytes.Count(data[:pos], []byte("\n"))
		if data[pos] != '{' {
			text, _, _ := bytes.Cut(data[pos:], []byte("\n"))
			return nil, usage("%s:%d: not a gen result: %s", name, line, quote(text))
		}
		dec := json.NewDecoder(bytes.NewReader(data[pos:]))
		var r Result
		if err := dec.Decode(&r); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				line += bytes.Count(data[pos:pos+int(min(se.Offset, int64(len(data)-pos)))], []byte("\n"))
			}
			return nil, usage("%s:%d: bad JSON result: %v", name, line, err)
		}
		if r.Target == "" || (r.Mode != "open" && r.Mode != "closed") {
			return nil, usage("%s:%d: a JSON object that is not a gen result (no target or mode)", name, line)
		}
		out = append(out, &r)
		pos += int(dec.InputOffset())
	}
	if len(out) == 0 {
		return nil, usage("%s: no results in it", name)
	}
	return out, nil
}

// quote returns b as a short quoted string for an error message.
func quote(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 120 {
		b = b[:120]
		for len(b) > 0 && !utf8.Valid(b) {
			b = b[:len(b)-1]
		}
		return strconv.Quote(string(b)) + "..."
	}
	return strconv.Quote(string(b))
}

var hlogStartLine = regexp.MustCompile(`(?m)^#\[StartTime: ([0-9.]+)`)

// ReadHdrLog reads an HdrHistogram interval log (as gen --hdr-log writes:
// corrected latency in microseconds, one interval per second) into a
// result that holds only what such a log has: the corrected histogram of
// the whole log, and per second its histogram and p99. Intervals are keyed
// by their wall-clock start. Errors are one-line *UsageErrors.
func ReadHdrLog(name string, data []byte) (*Result, error) {
	var start time.Time
	if m := hlogStartLine.FindSubmatch(data); m != nil {
		if s, err := strconv.ParseFloat(string(m[1]), 64); err == nil && s > 0 && s < 1e11 {
			start = time.UnixMilli(int64(math.Round(s * 1000)))
		}
	}
	rd := hdr.NewHistogramLogReader(bytes.NewReader(data))
	r := &Result{}
	var hists []*hdr.Histogram
	for {
		h, err := readInterval(rd)
		if err != nil {
			return nil, usage("%s: bad HdrHistogram log: %v", name, err)
		}
		if h == nil {
			break
		}
		hists = append(hists, h)
	}
	if len(hists) == 0 {
		return nil, usage("%s: no intervals in it: not an HdrHistogram log", name)
	}
	if start.IsZero() {
		start = time.UnixMilli(hists[0].StartTimeMs())
	}
	total := emptyLike(hists)
	for _, h := range hists {
		if dropped := total.Merge(h); dropped > 0 {
			return nil, usage("%s: %d values did not fit the histogram range", name, dropped)
		}
		t := int(math.Round(float64(h.StartTimeMs()-start.UnixMilli()) / 1000))
		if t < 0 || t > 1e7 {
			return nil, usage("%s: interval at %d ms is outside the log's run", name, h.StartTimeMs())
		}
		enc, err := EncodeHist(h)
		if err != nil {
			return nil, err
		}
		if n := len(r.Seconds); n > 0 && r.Seconds[n-1].T >= t {
			return nil, usage("%s: intervals out of order or closer than a second (t=%d after t=%d): not a gen interval log", name, t, r.Seconds[n-1].T)
		}
		r.Seconds = append(r.Seconds, Second{T: t, DurS: units.Round3(float64(h.EndTimeMs()-h.StartTimeMs()) / 1000), P99us: h.ValueAtQuantile(99), Maxus: h.Max(),
			AtMs: h.StartTimeMs(), Hist: enc})
	}
	r.CorrectedHist = total
	r.Latency = LatencyOf(total)
	r.Requests = uint64(total.TotalCount())
	r.Schedule = nil
	r.Host = ""
	r.DurationS = float64(len(hists))
	r.hlogStart = start
	return r, nil
}

// readInterval returns the next interval of rd, nil at the end. The
// library's reader can panic on some malformed lines: that is an error.
func readInterval(rd *hdr.HistogramLogReader) (h *hdr.Histogram, err error) {
	defer func() {
		if p := recover(); p != nil {
			h, err = nil, fmt.Errorf("malformed interval line (%v)", p)
		}
	}()
	h, err = rd.NextIntervalHistogram()
	if err != nil && errors.Is(err, io.EOF) {
		return nil, nil
	}
	return h, err
}

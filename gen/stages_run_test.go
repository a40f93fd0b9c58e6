package gen

import (
	"bytes"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/result"
)

// TestStagesLive: a staged run against a server that notes when each
// request arrived. Stages 2s:1000,1s:1000,1s:0 offer N(t) = 250 t^2 over
// the first 2 s (1,000), then 1,000/s (2,000 by 3 s), then a ramp down
// (2,500 by 4 s).
//
// Each request arrives no earlier than its intended time (the generator
// never sends early) and at most lateness after it; so the i-th arrival
// (in time order) lies between the i-th intended time and that plus
// lateness, and the arrivals in second s lie between the requests due in
// [s, s+1-lateness) and those due in [s-lateness, s+1). Both are checked,
// along with the result: every one of the 2,500 requests answered, the
// stages and per second offered rate recorded, the mean offered rate as
// requested_rate.
func TestStagesLive(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var arrivals []time.Time
	srv := startServer(t, eachRequest(func(c net.Conn) bool {
		now := time.Now()
		mu.Lock()
		arrivals = append(arrivals, now)
		mu.Unlock()
		_, err := io.WriteString(c, okResp)
		return err == nil
	}))
	st, err := ParseStages("2s:1000,1s:1000,1s:0")
	if err != nil {
		t.Fatal(err)
	}
	var hlog bytes.Buffer
	cfg := Config{URL: srv.url("http"), Stages: st, Connections: 20, Timeout: 2 * time.Second}
	res := runLogged(t, cfg, result.NewHdrLog(&hlog))
	// The interval log has one interval per second of the run, whatever
	// the rate, as the per-second series does.
	intervals := 0
	for _, line := range strings.Split(hlog.String(), "\n") {
		if line != "" && line[0] >= '0' && line[0] <= '9' {
			intervals++
		}
	}
	if intervals != len(res.Seconds) || intervals < 4 {
		t.Errorf("%d hlog intervals, %d per-second entries: want one per second of the run", intervals, len(res.Seconds))
	}
	if res.Requests != 2500 || res.OK != 2500 {
		t.Fatalf("requests %d ok %d, want the stages' 2500 answered (errors %v)", res.Requests, res.OK, res.Errors)
	}
	if len(res.Stages) != 3 || res.Stages[0] != (result.StageInfo{DurationS: 2, Rate: 1000}) || res.Stages[2] != (result.StageInfo{DurationS: 1, Rate: 0}) {
		t.Errorf("stages %+v", res.Stages)
	}
	if res.Mode != "open" || res.RequestedRate < 620 || res.RequestedRate > 630 {
		t.Errorf("mode %s requested_rate %v, want open and the mean offered 2500/4 s = 625", res.Mode, res.RequestedRate)
	}
	for i, want := range []float64{250, 750, 1000, 500} {
		if i >= len(res.Seconds) || res.Seconds[i].Offered == nil || *res.Seconds[i].Offered != want {
			t.Errorf("per_second[%d].offered: want %v (%+v)", i, want, res.Seconds)
		}
	}
	var okSum uint64
	for _, s := range res.Seconds {
		okSum += s.OK
	}
	if okSum != 2500 {
		t.Errorf("per-second ok adds up to %d, want 2500", okSum)
	}

	// The intended times, from the stages.
	rp := newPacer(st)
	intended := make([]int64, 2500)
	hint := 0
	for j := range intended {
		intended[j] = rp.At(int64(j), &hint)
	}
	mu.Lock()
	got := slices.Clone(arrivals)
	mu.Unlock()
	if len(got) != 2500 {
		t.Fatalf("the server saw %d requests, want 2500", len(got))
	}
	start := res.Schedule.Start
	at := make([]int64, len(got))
	for i, a := range got {
		at[i] = int64(a.Sub(start))
	}
	slices.Sort(at)
	const early = int64(2 * time.Millisecond) // the two clocks' reading granularity
	lateness := int64(250 * time.Millisecond) // a shared machine's scheduling, with room
	for i := range at {
		if at[i] < intended[i]-early || at[i] > intended[i]+lateness {
			t.Fatalf("arrival %d at %.6f s, intended time %.6f s: want within [-2 ms, +250 ms] of it", i, float64(at[i])/1e9, float64(intended[i])/1e9)
		}
	}
	for s := int64(0); s < 4; s++ {
		lo, hi := s*1e9, (s+1)*1e9
		n := 0
		for _, a := range at {
			if a >= lo && a < hi {
				n++
			}
		}
		due := func(from, to int64) int {
			c := 0
			for _, x := range intended {
				if x >= from && x < to {
					c++
				}
			}
			return c
		}
		if least, most := due(lo+early, hi-lateness), due(lo-lateness, hi+early); n < least || n > most {
			t.Errorf("second %d: %d arrivals, want %d..%d (due within it, allowing the lateness)", s, n, least, most)
		}
	}
}

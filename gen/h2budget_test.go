package gen

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadlab/loadlab/pin"
	"golang.org/x/net/http2"
)

// floodFor is how long the flooding connection of TestH2ReadBudget sends:
// longer than the run (2 s and a 1 s drain) and its margin, so that a loop
// that reads it to EAGAIN cannot end on time.
const floodFor = 8 * time.Second

// flood writes chunk to c over and over until floodFor has passed or the
// client closed the connection.
func flood(c net.Conn, chunk []byte) {
	end := time.Now().Add(floodFor)
	for time.Now().Before(end) {
		if _, err := c.Write(chunk); err != nil {
			return
		}
	}
}

// priorityFlood is rawH2's "flood": PRIORITY frames, cheap to send,
// dearer to parse, and they ask for no answer: the generator cannot read
// them as fast as they come.
var priorityFlood = func() []byte {
	var b []byte
	for range 1 << 16 {
		b = append(b, 0, 0, 5, byte(http2.FramePriority), 0, 0, 0, 0, 1, 0, 0, 0, 0, 15)
	}
	return b
}()

// TestH2ReadBudget runs two HTTP/2 connections on one loop against a
// server that sends one of them more than the loop can parse. With a read
// budget per connection per wakeup the other connection's requests are
// answered all along and the run ends on time; reading the flooding socket
// until EAGAIN never returned to the others (nor to the timeout scan, nor
// to the stop) while the flood lasted: 1 response in 2 s.
func TestH2ReadBudget(t *testing.T) {
	var flooded atomic.Int64 // the connection that got the first request floods
	srv := startRawH2(t, func(n, onConn int64) rawAction {
		if onConn == 1 && flooded.CompareAndSwap(0, n) {
			return rawAction{kind: "flood"}
		}
		return rawAction{kind: "answer"}
	})
	cfg := Config{URL: srv.url, HTTP2: true, Connections: 2, Duration: misDuration, Timeout: misTimeout,
		CPUs: pin.CPUSet{lastCPU(t)}}
	res := runOnTime(t, cfg)
	if flooded.Load() == 0 {
		t.Fatal("no connection was flooded")
	}
	// The other connection gets a turn after every budget's worth of the
	// flood (256 KiB: well under 10 ms to parse here, even under -race):
	// hundreds of responses in 2 s at the least.
	t.Logf("ok %d, errors %v", res.OK, res.Errors)
	if res.OK < 100 {
		t.Errorf("ok %d, want at least 100 from the connection beside the flood (errors %v)", res.OK, res.Errors)
	}
	for class, n := range res.Errors {
		if n > 0 && class != "timeout" {
			t.Errorf("errors.%s = %d (%s), want only the flooded requests' timeouts", class, n, res.ErrorSamples[class])
		}
	}
	if res.Errors["timeout"] == 0 {
		t.Error("the flooded requests did not time out")
	}
}

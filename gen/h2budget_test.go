package gen

import (
	"bytes"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadlab/loadlab/pin"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// floodFor is how long the flooding connection of TestReadBudget sends:
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

// h2Flood gives the first connection that sends a request an endless run
// of PRIORITY frames (cheap to send, dearer to parse, and they ask for no
// answer: the generator cannot read them as fast as they come), every
// other request a 200 at once.
func h2Flood(first *atomic.Bool) func(net.Conn) {
	var chunk []byte
	for range 1 << 16 {
		chunk = append(chunk, 0, 0, 5, byte(http2.FramePriority), 0, 0, 0, 0, 1, 0, 0, 0, 0, 15)
	}
	var hb bytes.Buffer
	hpack.NewEncoder(&hb).WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	block := hb.Bytes()
	return func(c net.Conn) {
		pre := make([]byte, len(http2.ClientPreface))
		if _, err := io.ReadFull(c, pre); err != nil {
			return
		}
		fr := http2.NewFramer(c, c)
		if fr.WriteSettings() != nil {
			return
		}
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if !f.IsAck() && fr.WriteSettingsAck() != nil {
					return
				}
			case *http2.HeadersFrame:
				if first.CompareAndSwap(false, true) {
					flood(c, chunk)
					return
				}
				if fr.WriteHeaders(http2.HeadersFrameParam{StreamID: f.StreamID, BlockFragment: block, EndStream: true, EndHeaders: true}) != nil {
					return
				}
			}
		}
	}
}

// TestH2ReadBudget runs two HTTP/2 connections on one loop against a
// server that sends one of them more than the loop can parse. With a read
// budget per connection per wakeup the other connection's requests are
// answered all along and the run ends on time; reading the flooding socket
// until EAGAIN never returned to the others (nor to the timeout scan, nor
// to the stop) while the flood lasted: 1 response in 2 s.
func TestH2ReadBudget(t *testing.T) {
	var first atomic.Bool
	srv := startServer(t, h2Flood(&first))
	cfg := Config{URL: srv.url("http"), HTTP2: true, Connections: 2, Duration: misDuration, Timeout: misTimeout,
		CPUs: pin.CPUSet{lastCPU(t)}}
	res := runOnTime(t, cfg)
	if !first.Load() {
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

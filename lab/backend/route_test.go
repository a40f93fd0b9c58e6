package backend

import (
	"testing"
	"time"
)

func TestResolve(t *testing.T) {
	cases := []struct {
		path   string
		kind   kind
		status int
		delay  time.Duration
		size   int
	}{
		{"/1k", kindBody, 0, 0, Size1K},
		{"/100k", kindBody, 0, 0, Size100K},
		{"/1m", kindBody, 0, 0, Size1M},
		{"/echo", kindEcho, 0, 0, 0},
		{"/chunked", kindChunked, 0, 0, Size1K},
		{"/close", kindClose, 0, 0, Size1K},
		{"/_stats", kindStats, 0, 0, 0},
		{"/status/200", kindStatus, 200, 0, 0},
		{"/status/503", kindStatus, 503, 0, 0},
		{"/status/199", kindBad, 0, 0, 0},
		{"/status/600", kindBad, 0, 0, 0},
		{"/status/0200", kindBad, 0, 0, 0},
		{"/status/+20", kindBad, 0, 0, 0},
		{"/status/", kindBad, 0, 0, 0},
		{"/delay/50ms", kindDelay, 0, 50 * time.Millisecond, Size1K},
		{"/delay/75", kindDelay, 0, 75 * time.Millisecond, Size1K},
		{"/delay/1h", kindDelay, 0, MaxDelay, Size1K},
		{"/delay/99999999999999", kindDelay, 0, MaxDelay, Size1K},
		{"/delay/0", kindDelay, 0, 0, Size1K},
		{"/delay/-5ms", kindBad, 0, 0, 0},
		{"/delay/-5", kindBad, 0, 0, 0},
		{"/delay/soon", kindBad, 0, 0, 0},
		{"/", kindNotFound, 0, 0, 0},
		{"/1k/", kindNotFound, 0, 0, 0},
		{"/statusx", kindNotFound, 0, 0, 0},
	}
	for _, c := range cases {
		r := resolve(c.path)
		if r.kind != c.kind || r.status != c.status || r.delay != c.delay || len(r.body) != c.size {
			t.Errorf("resolve(%q) = kind %d status %d delay %s body %d; want kind %d status %d delay %s body %d",
				c.path, r.kind, r.status, r.delay, len(r.body), c.kind, c.status, c.delay, c.size)
		}
		if r.kind == kindBad && r.msg == "" {
			t.Errorf("resolve(%q): bad request without a message", c.path)
		}
	}
}

func TestAppendStats(t *testing.T) {
	got := string(appendStats(nil, Stats{Accepted: 3, Open: 1, Requests: 12}))
	if want := "{\"accepted\": 3, \"open\": 1, \"requests\": 12}\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestPieceReaderSplits(t *testing.T) {
	p := &pieceReader{b: body1k}
	buf := make([]byte, 4096)
	var pieces, total int
	for {
		n, err := p.Read(buf)
		if n > chunkSize {
			t.Fatalf("piece of %d bytes, want at most %d", n, chunkSize)
		}
		total += n
		if n > 0 {
			pieces++
		}
		if err != nil {
			break
		}
	}
	if total != Size1K || pieces != Size1K/chunkSize {
		t.Fatalf("read %d bytes in %d pieces, want %d in %d", total, pieces, Size1K, Size1K/chunkSize)
	}
}

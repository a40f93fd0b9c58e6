package tcploop

import (
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/internal/run"
)

// TestIOAutoPerRow: auto keeps each benchmark row's faster path: io_uring
// for HTTP/1.1, epoll for HTTP/2.
func TestIOAutoPerRow(t *testing.T) {
	needUring(t)
	rate := run.Constant(100, time.Second)
	staged := new(run.Pacer).Ramp(time.Second, 100)
	for _, tc := range []struct {
		spec run.Spec
		want string
	}{
		{run.Spec{Pacer: rate}, run.IOEpoll}, // tolerance 0: epoll cost less (bench-gen.sh)
		{run.Spec{Pacer: rate, PacingTolerance: time.Millisecond}, run.IOUring},
		{run.Spec{Pacer: staged}, run.IOEpoll},
		{run.Spec{Pacer: rate, IO: run.IOUring}, run.IOUring},
		{run.Spec{}, run.IOUring},
		{run.Spec{HTTP2: true, Pacer: rate}, run.IOEpoll},
		{run.Spec{HTTP2: true, Pacer: rate, IO: run.IOUring}, run.IOUring},
	} {
		s := tc.spec
		if s.IO == "" {
			s.IO = run.IOAuto
		}
		io, note, err := ChooseIO(&s)
		if err != nil || io != tc.want || note == "" {
			t.Errorf("%+v: %q (%q, %v), want %s", tc.spec, io, note, err, tc.want)
		}
	}
}

// needUring skips a test where io_uring cannot run the loops.
func needUring(t *testing.T) {
	t.Helper()
	if f := uringFeatures(); len(f.Missing()) > 0 {
		m := f.Missing()
		t.Skipf("io_uring: %v", m)
	}
}

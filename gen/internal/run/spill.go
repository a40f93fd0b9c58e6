package run

import (
	"io"
	"os"

	"github.com/loadlab/loadlab/gen/result"
)

// histSpill keeps the run's encoded per-second histograms (a few KB each:
// about 9 MB an hour at 10,000 req/s) in a temporary file instead of the
// heap while the run goes on, so a long run's memory stays flat; the result
// reads them back once, at the end. The file is unlinked as soon as it is
// made: nothing is left behind, even if the process is killed. If no
// temporary file can be made, the histograms stay in memory as before.
// Used by the aggregator goroutine only, then by the result once it ended.
type histSpill struct {
	f   *os.File
	off int64
	err error // the first write error: the rest stay in memory
}

// spillRef is where one histogram is in the spill file.
type spillRef struct {
	off int64
	n   int32 // 0: not spilled (the histogram is in its SecondMergeable.Hist)
}

// newHistSpill makes the unlinked temporary file (nil when it cannot).
func newHistSpill() *histSpill {
	f, err := os.CreateTemp("", "loadlab-hist-*")
	if err != nil {
		return nil
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil
	}
	return &histSpill{f: f}
}

// put writes enc and returns where, or false to keep it in memory.
func (s *histSpill) put(enc string) (spillRef, bool) {
	if s == nil || s.err != nil || enc == "" {
		return spillRef{}, false
	}
	n, err := io.WriteString(s.f, enc)
	if err != nil || n != len(enc) {
		s.err = err
		if s.err == nil {
			s.err = io.ErrShortWrite
		}
		// Where the next write would land is unknown: stop spilling.
		return spillRef{}, false
	}
	ref := spillRef{off: s.off, n: int32(n)}
	s.off += int64(n)
	return ref, true
}

// restore fills in the spilled histograms of secs (refs[i] is where
// secs[i]'s is) and closes the file.
func (s *histSpill) restore(secs []result.PerSecond, refs []spillRef) error {
	if s == nil {
		return nil
	}
	defer s.f.Close()
	for i := range secs {
		ref := refs[i]
		if ref.n == 0 {
			continue
		}
		b := make([]byte, ref.n)
		if _, err := s.f.ReadAt(b, ref.off); err != nil {
			return err
		}
		secs[i].Hist = string(b)
	}
	return nil
}

package gen

import (
	"io"
	"os"

	"github.com/loadlab/loadlab/gen/result"
)

// histSpill keeps the run's encoded per-second histograms (a few KB each:
// about 9 MB an hour at 10,000 req/s) in a temporary file instead of the
// heap while the run goes on, so a long run's memory stays flat; the result
// reads them back once, at the end. The file is unlinked as soon as it is
// made: nothing is left behind, even if the process is killed. It goes in
// the temporary directory ($TMPDIR, else /tmp: the Kubernetes Job mounts an
// emptyDir there, as its image's root is read-only); if no file can be made
// there, the histograms stay in memory, and the result says which
// (generator.spill, and a note with the reason). Used by the aggregator
// goroutine only, then by the result once it ended.
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

// newHistSpill makes the unlinked temporary file in dir; nil and the
// reason when it cannot.
func newHistSpill(dir string) (*histSpill, error) {
	f, err := os.CreateTemp(dir, "loadlab-hist-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return &histSpill{f: f}, nil
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

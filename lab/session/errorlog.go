package session

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"strconv"
	"sync"
	"syscall"

	"github.com/loadlab/loadlab/internal/safefs"
)

// Cause is one known reason for failed requests found in a proxy's log.
type Cause struct {
	Key    string `json:"key"`    // e.g. "addr_not_avail"
	What   string `json:"what"`   // the text it matches, e.g. "Cannot assign requested address"
	Count  int    `json:"count"`  // matching lines
	Sample string `json:"sample"` // the first matching line
}

// knownCauses are matched case-insensitively (ASCII), first match wins
// per line.
var knownCauses = [...]struct{ key, what string }{
	{"addr_not_avail", "Cannot assign requested address"}, // errno 99: the proxy ran out of local ports (seeds 001, 003)
	{"conn_refused", "Connection refused"},
	{"conn_reset", "Connection reset by peer"},
	{"no_live_upstreams", "no live upstreams"},
	{"timed_out", "timed out"},
	{"io_timeout", "i/o timeout"},
	{"too_many_files", "Too many open files"},
	{"worker_connections", "worker_connections are not enough"},
	{"out_of_memory", "Cannot allocate memory"},
}

// lowCauses are knownCauses' texts in lower case.
var lowCauses = func() [][]byte {
	out := make([][]byte, len(knownCauses))
	for i, k := range knownCauses {
		out[i] = bytes.ToLower([]byte(k.what))
	}
	return out
}()

// logBuf is the one buffer a proxy's logs are read through: a line longer
// than it is judged by its first logBuf bytes and counted as cut.
const logBuf = 64 << 10

// logScan is what a proxy's logs held so far: each file is read on from
// where the last scan stopped, through one fixed buffer, so a scan costs
// what was written since the one before, in bounded memory, however long
// the proxy has logged.
type logScan struct {
	mu    sync.Mutex
	buf   []byte // logBuf bytes read from a file
	low   []byte // a line of buf in lower case
	files []fileScan
}

// fileScan is one log file's part of a logScan.
type fileScan struct {
	path     string
	dev, ino uint64
	off      int64 // bytes judged: complete lines, and a cut line's rest
	skipping bool  // inside a cut line: its rest up to the newline is skipped
	done     tally // the complete lines up to off
}

// tally counts a log's error lines and known causes.
type tally struct {
	errLines, cut int
	counts        [len(knownCauses)]int
	samples       [len(knownCauses)]string
}

// scan reads what each file gained since the last scan and returns the
// counts over all of them, in the order of files (a cause's sample is the
// first file's that has one). A last line without its newline yet is
// counted, and judged again once complete.
func (s *logScan) scan(paths []string) (tally, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buf == nil {
		s.buf, s.low = make([]byte, logBuf), make([]byte, logBuf)
	}
	var total tally
	for _, path := range paths {
		fl := s.file(path)
		tail, err := s.readOn(fl)
		if err != nil {
			return tally{}, err
		}
		total.add(&fl.done)
		total.add(&tail)
	}
	return total, nil
}

// file is path's record, made on first use.
func (s *logScan) file(path string) *fileScan {
	for i := range s.files {
		if s.files[i].path == path {
			return &s.files[i]
		}
	}
	s.files = append(s.files, fileScan{path: path})
	return &s.files[len(s.files)-1]
}

// readOn judges fs's file from fl.off to its end, and returns the tally
// of its last line when it has no newline yet (not added to fl.done). A
// file that was replaced or shrank is read again from its start. A
// missing file counts nothing. The file is opened as safefs.OpenRead does:
// its directory may be the proxy user's.
func (s *logScan) readOn(fl *fileScan) (tally, error) {
	f, err := safefs.OpenRead(fl.path)
	if errors.Is(err, syscall.ENOENT) {
		return tally{}, nil
	}
	if err != nil {
		return tally{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return tally{}, err
	}
	st := fi.Sys().(*syscall.Stat_t)
	//nolint:unconvert // Stat_t.Dev is not uint64 on every architecture
	if uint64(st.Dev) != fl.dev || st.Ino != fl.ino || fi.Size() < fl.off {
		*fl = fileScan{path: fl.path, dev: uint64(st.Dev), ino: st.Ino} //nolint:unconvert // as above
	}
	have := 0 // bytes of buf from offset fl.off
	for {
		n, rerr := f.ReadAt(s.buf[have:], fl.off+int64(have))
		have += n
		b := s.buf[:have]
		i := 0
		if fl.skipping {
			nl := bytes.IndexByte(b, '\n')
			if nl < 0 {
				i = have
			} else {
				i, fl.skipping = nl+1, false
			}
		}
		for !fl.skipping {
			nl := bytes.IndexByte(b[i:], '\n')
			if nl < 0 {
				break
			}
			fl.done.line(b[i:i+nl], s.low)
			i += nl + 1
		}
		if i == 0 && have == len(s.buf) {
			// A line longer than the buffer: judged by its start.
			fl.done.line(b, s.low)
			fl.done.cut++
			fl.skipping, i = true, have
		}
		fl.off += int64(i)
		have = copy(s.buf, b[i:])
		if rerr == io.EOF || n == 0 && rerr == nil {
			break
		}
		if rerr != nil {
			return tally{}, &fs.PathError{Op: "read", Path: fl.path, Err: rerr}
		}
	}
	var tail tally
	if have > 0 && !fl.skipping {
		tail.line(s.buf[:have], s.low)
	}
	return tail, nil
}

// line counts one line: the first known cause it contains, and whether it
// reports an error. low is scratch space of at least len(l) bytes.
func (t *tally) line(l, low []byte) {
	low = low[:len(l)]
	for i, c := range l {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	for k, what := range lowCauses {
		if bytes.Contains(low, what) {
			if t.samples[k] == "" {
				t.samples[k] = truncate(string(l), 300)
			}
			t.counts[k]++
			t.errLines++
			return
		}
	}
	if errorWord(low) {
		t.errLines++
	}
}

// add adds o's counts to t, keeping t's samples.
func (t *tally) add(o *tally) {
	t.errLines += o.errLines
	t.cut += o.cut
	for k := range t.counts {
		t.counts[k] += o.counts[k]
		if t.samples[k] == "" {
			t.samples[k] = o.samples[k]
		}
	}
}

// list is t's causes in the order of knownCauses.
func (t *tally) list() []Cause {
	var out []Cause
	for k, c := range knownCauses {
		if t.counts[k] > 0 {
			out = append(out, Cause{Key: c.key, What: c.what, Count: t.counts[k], Sample: t.samples[k]})
		}
	}
	return out
}

// errorWord reports whether a lower-case line reports an error, whatever
// the proxy's log format: nginx "[error]", "[crit]", "[alert]",
// "[emerg]", Caddy JSON "level":"error", Traefik "ERR", HAProxy
// "[ALERT]", h2o and the rest plain words. That is the regular expression
// (?i)\[(error|crit|alert|emerg)\]|"level":"(error|fatal|panic)"|\bERR\b|\b(error|fatal|panic|failed)\b
// (FuzzErrorWord holds them equal), without its cost per byte: a word
// (a run of ASCII letters, digits and '_') that is err, error, fatal,
// panic or failed, or crit, alert or emerg in square brackets.
func errorWord(low []byte) bool {
	for i := 0; i < len(low); {
		if !wordByte(low[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(low) && wordByte(low[j]) {
			j++
		}
		switch string(low[i:j]) { // no allocation: a conversion in a switch
		case "err", "error", "fatal", "panic", "failed":
			return true
		case "crit", "alert", "emerg":
			if i > 0 && low[i-1] == '[' && j < len(low) && low[j] == ']' {
				return true
			}
		}
		i = j
	}
	return false
}

// wordByte reports whether c is an ASCII word character (\w).
func wordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// scanLog counts error lines and known causes in lines.
func scanLog(lines [][]byte) (errLines int, causes []Cause) {
	var t tally
	low := make([]byte, 0)
	for _, l := range lines {
		if len(l) > len(low) {
			low = make([]byte, len(l))
		}
		t.line(l, low)
	}
	return t.errLines, t.list()
}

// logTail returns the last non-empty line of a log file (for errors), or a
// note that the log is empty: it reads the file's last logBuf bytes, and
// not through a link (safefs.OpenRead).
func logTail(path string) string {
	b, err := readTail(path, logBuf)
	if err != nil {
		return "no log (" + bare(err).Error() + ")"
	}
	lines := splitLines(b)
	if len(lines) == 0 {
		return "nothing in " + path
	}
	return strconv.Quote(truncate(string(lines[len(lines)-1]), 300)) + " (" + path + ")"
}

// readTail reads the last n bytes of path (all of a shorter file).
func readTail(path string, n int64) ([]byte, error) {
	f, err := safefs.OpenRead(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	from := max(fi.Size()-n, 0)
	b := make([]byte, fi.Size()-from)
	k, err := f.ReadAt(b, from)
	if err == io.EOF {
		err = nil
	}
	return b[:k], err
}

// containsFold reads r through buf (longer than want) and reports whether
// it holds want, a lower-case ASCII text, in any case. Consecutive
// windows overlap by len(want)-1 bytes, so a match across two reads is
// found.
func containsFold(r io.Reader, buf, want []byte) bool {
	keep := 0
	for {
		n, err := r.Read(buf[keep:])
		b := buf[:keep+n]
		for i, c := range b[keep:] {
			if 'A' <= c && c <= 'Z' {
				b[keep+i] = c + 'a' - 'A'
			}
		}
		if bytes.Contains(b, want) {
			return true
		}
		keep = copy(buf, b[max(len(b)-len(want)+1, 0):])
		if err != nil {
			return false
		}
	}
}

// splitLines returns the non-empty lines of b.
func splitLines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if l = bytes.TrimRight(l, "\r"); len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

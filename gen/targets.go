package gen

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/internal/units"
)

// Targets: several requests in one run (vegeta's targets file). The run
// sends them round-robin, request j of the global schedule going to target
// j mod T, or weighted (Config.TargetWeights): target table[j mod W] of a
// table in which target i appears weight(i) times, spread out (smooth
// weighted round-robin, as nginx balances upstreams). The choice depends
// on j alone, so shards split targets exactly as they split the schedule.
// Every target shares the run's one connection pool: one scheme and
// host:port; each may send its own Host header.

// Request is one target: a method, a URL and what to send with it.
type Request struct {
	Method  string
	URL     string
	Headers []string // "Name: value" lines; they replace Config.Headers of the same name
	Body    []byte   // nil: Config.Body
}

// MaxTargets bounds a targets file: each target keeps its own counters and
// latency histogram in every loop.
const MaxTargets = 1000

// maxTargetWeight bounds the weighted table (Σ weights entries).
const maxTargetWeight = 1_000_000

// ParseTargets reads vegeta's plain ("http") targets format:
//
//	GET http://127.0.0.1:8080/a
//	X-Account: 8675309
//
//	POST http://127.0.0.1:8080/b
//	Content-Type: application/json
//	@body.json
//
// Each target is a line "METHOD URL" (METHOD in capitals), then header
// lines "Name: value", then optionally "@FILE", whose bytes are the body
// (read with readFile: vegeta reads the path as given, relative to the
// working directory). A blank line, a body line or the next "METHOD URL"
// line ends a target; lines starting with # are comments.
func ParseTargets(r io.Reader, readFile func(path string) ([]byte, error)) ([]Request, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	var out []Request
	var cur *Request
	lineNo := 0
	bad := func(format string, args ...any) error {
		return fieldErr("Targets", "line %d: %s", lineNo, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			cur = nil
			continue
		case line[0] == '#':
			continue
		case startsWithMethod(line):
			method, rawURL, _ := strings.Cut(line, " ")
			rawURL = strings.TrimSpace(rawURL)
			if _, err := ParseTarget(rawURL); err != nil {
				return nil, bad("%v", err)
			}
			if len(out) == MaxTargets {
				return nil, bad("more than %d targets", MaxTargets)
			}
			out = append(out, Request{Method: method, URL: rawURL})
			cur = &out[len(out)-1]
		case cur == nil:
			return nil, bad("%q is not a target: a target starts with METHOD URL, e.g. GET http://127.0.0.1:8080/", units.Clip(line, 60))
		case line[0] == '@':
			path := strings.TrimSpace(line[1:])
			if path == "" {
				return nil, bad("@ without a file name")
			}
			b, err := readFile(path)
			if err != nil {
				return nil, bad("body file: %v", err)
			}
			if b == nil {
				b = []byte{}
			}
			cur.Body = b
			cur = nil // the body ends the target
		default:
			name, val, ok := strings.Cut(line, ":")
			if _, err := parseHeaders([]string{line}); err != nil || !ok || strings.TrimSpace(val) == "" || strings.TrimSpace(name) == "" {
				return nil, bad("bad header %q: use \"Name: value\"", units.Clip(line, 60))
			}
			cur.Headers = append(cur.Headers, line)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fieldErr("Targets", "line %d is longer than 1 MiB", lineNo+1)
		}
		return nil, fieldErr("Targets", "read: %v", err)
	}
	if len(out) == 0 {
		return nil, fieldErr("Targets", "no targets: give lines such as GET http://127.0.0.1:8080/")
	}
	return out, nil
}

// startsWithMethod reports whether line starts with a method in capitals
// and a space (vegeta's rule: what else is a header or a body).
func startsWithMethod(line string) bool {
	i := strings.IndexAny(line, " \t")
	if i <= 0 {
		return false
	}
	for _, c := range line[:i] {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// ParseTargetWeights parses "5,1,1": one integer weight of at least 1 per
// target, in file order.
func ParseTargetWeights(s string) ([]int, error) {
	var ws []int
	for _, p := range strings.Split(s, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || w < 1 || w > maxTargetWeight {
			return nil, fieldErr("TargetWeights", "bad weight %q in %q: give one whole number from 1 to %d per target, e.g. 5,1,1", p, s, maxTargetWeight)
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// parseHeaders splits "Name: value" lines.
func parseHeaders(lines []string) ([]run.Header, error) {
	hs := make([]run.Header, 0, len(lines))
	for _, h := range lines {
		name, val, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(h, "\r\n") || strings.ContainsAny(name, " \t") {
			return nil, fieldErr("Headers", "bad header %q: use \"Name: value\"", h)
		}
		hs = append(hs, run.Header{Name: name, Value: strings.TrimSpace(val)})
	}
	return hs, nil
}

// weightTable spreads target i over weights[i] of Σ weights slots by
// smooth weighted round-robin: each slot goes to the target with the
// highest running credit (each target gains its weight per slot, the
// chosen one loses the total), so 5,1,1 gives a a b a c a a, not a a a a a b c.
func weightTable(weights []int) ([]int32, error) {
	total := 0
	for i, w := range weights {
		if w < 1 || w > maxTargetWeight {
			return nil, fieldErr("TargetWeights", "weight %d of target %d must be between 1 and %d", w, i+1, maxTargetWeight)
		}
		total += w
		if total > maxTargetWeight {
			return nil, fieldErr("TargetWeights", "the weights add up to more than %d", maxTargetWeight)
		}
	}
	credit := make([]int, len(weights))
	tab := make([]int32, total)
	for s := range tab {
		best := 0
		for i, w := range weights {
			credit[i] += w
			if credit[i] > credit[best] {
				best = i
			}
		}
		credit[best] -= total
		tab[s] = int32(best)
	}
	return tab, nil
}

package session

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Cause is one known reason for failed requests found in a proxy's log.
type Cause struct {
	Key    string `json:"key"`    // e.g. "addr_not_avail"
	What   string `json:"what"`   // the text it matches, e.g. "Cannot assign requested address"
	Count  int    `json:"count"`  // matching lines
	Sample string `json:"sample"` // the first matching line
}

// knownCauses are matched case-insensitively, first match wins per line.
var knownCauses = []struct{ key, what string }{
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

// errorLevel marks lines that report an error whatever the proxy's log
// format: nginx "[error]"/"[crit]"/"[alert]"/"[emerg]", Caddy JSON
// "level":"error", Traefik "ERR", HAProxy "[ALERT]", h2o and the rest
// plain words.
var errorLevel = regexp.MustCompile(`(?i)\[(error|crit|alert|emerg)\]|"level":"(error|fatal|panic)"|\bERR\b|\b(error|fatal|panic|failed)\b`)

// logFiles are the files a proxy logs to: its error log where the config
// names one (nginx, h2o), and its stdout and stderr (the rest).
func (p *Proxy) logFiles() []string {
	return []string{filepath.Join(p.params.Dir, "error.log"), p.logFile}
}

// ErrorLog reads the proxy's error log (and its output, where Caddy,
// Traefik and HAProxy write errors) over its whole life, restarts
// included: lines is the number of lines reporting an error, causes
// counts the lines matching known causes by key ("addr_not_avail" for
// "Cannot assign requested address", "conn_refused", "timed_out",
// "no_live_upstreams", ...). ErrorCauses gives a sample line of each.
func (p *Proxy) ErrorLog() (lines int, causes map[string]int, err error) {
	lines, list, err := p.ErrorCauses()
	causes = map[string]int{}
	for _, c := range list {
		causes[c.Key] = c.Count
	}
	return lines, causes, err
}

// ErrorCauses is ErrorLog with the matched text and first line of each
// cause, in the order of the known causes.
func (p *Proxy) ErrorCauses() (lines int, causes []Cause, err error) {
	var text [][]byte
	for _, f := range p.logFiles() {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return 0, nil, err
		}
		text = append(text, splitLines(b)...)
	}
	lines, causes = scanLog(text)
	return lines, causes, nil
}

// scanLog counts error lines and known causes.
func scanLog(lines [][]byte) (errLines int, causes []Cause) {
	byKey := map[string]*Cause{}
	for _, l := range lines {
		s := string(l)
		low := strings.ToLower(s)
		matched := false
		for _, k := range knownCauses {
			if !strings.Contains(low, strings.ToLower(k.what)) {
				continue
			}
			c := byKey[k.key]
			if c == nil {
				c = &Cause{Key: k.key, What: k.what, Sample: truncate(s, 300)}
				byKey[k.key] = c
			}
			c.Count++
			matched = true
			break
		}
		if matched || errorLevel.MatchString(s) {
			errLines++
		}
	}
	for _, k := range knownCauses {
		if c := byKey[k.key]; c != nil {
			causes = append(causes, *c)
		}
	}
	return errLines, causes
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

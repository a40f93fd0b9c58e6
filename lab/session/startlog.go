package session

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/loadlab/loadlab/lab/proc"
)

// startTailBytes is how much of the end of each log a start failure reads.
const startTailBytes = 4 << 10

// startTailLines is how many of the last log lines a start failure quotes.
const startTailLines = 3

// lastLines is the last log lines of a server that failed to start, on
// one line: the last lines of its error log and of its output, " | "
// between them; or what says there are none.
func (p *Proxy) lastLines() string {
	var out []string
	for _, f := range p.logFiles() {
		out = append(out, tailLines(f, startTailLines)...)
	}
	if len(out) == 0 {
		return "nothing logged in " + p.params.Dir
	}
	if len(out) > startTailLines {
		out = out[len(out)-startTailLines:]
	}
	return strings.Join(out, " | ")
}

// tailLines returns the last n non-empty lines of the end of file path
// (its last startTailBytes, each line at most 200 bytes), read as
// readTail does: not through a link the proxy's user put there.
func tailLines(path string, n int) []string {
	b, err := readTail(path, startTailBytes)
	if err != nil {
		return nil
	}
	var lines []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		if s := strings.TrimSpace(string(l)); s != "" {
			lines = append(lines, truncate(s, 200))
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// startExited is the error of a server that exited while starting: "NAME
// exited with status N while starting: <its last log lines>".
func (p *Proxy) startExited(pr *proc.Process) error {
	how := "exited"
	if x, ok := pr.ExitInfo(); ok {
		how = x.Describe()
	}
	if p.logContains("address already in use") {
		return fmt.Errorf("%s %s while starting: %w: %s", p.prof.Name, how, errPortInUse, p.lastLines())
	}
	return fmt.Errorf("%s %s while starting: %s", p.prof.Name, how, p.lastLines())
}

// startTimedOut is the error of a server not ready within the start
// timeout: "NAME not ready after 10 s: <its last log lines> (last
// answer: ...)".
func (p *Proxy) startTimedOut(last error) error {
	return fmt.Errorf("%s not ready after %s: %s (the last try on %s: %v)", p.prof.Name, seconds(p.e.o.ReadyTimeout), p.lastLines(), p.addr, last)
}

// seconds writes d as "10 s".
func seconds(d time.Duration) string {
	return fmt.Sprintf("%g s", d.Round(100*time.Millisecond).Seconds())
}

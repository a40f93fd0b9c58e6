package session

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/lab/proxy"
)

// logLines are lines of the kinds a proxy logs, each with what ErrorLog
// must make of it: the known cause it counts ("" for none) and whether it
// is an error line.
var logLines = []struct {
	line  string
	cause string
	err   bool
}{
	{`2026/01/01 10:00:01 [crit] 13#13: *5 connect() to 10.0.0.2:8080 failed (99: Cannot assign requested address) while connecting to upstream, client: 10.0.0.3, server: bench.lab, request: "GET /1k HTTP/1.1", upstream: "http://10.0.0.2:8080/1k", host: "bench.lab"`, "addr_not_avail", true},
	{`2026/01/01 10:00:02 [error] 13#13: *7 upstream timed out (110: Connection timed out) while reading response header from upstream`, "timed_out", true},
	{`2026/01/01 10:00:00 [notice] 12#12: start worker process 14`, "", false},
	{`{"level":"error","ts":1767261600.1,"logger":"http.log.error","msg":"dial tcp 10.0.0.2:8080: connect: connection refused","status":502}`, "conn_refused", true},
	{`2026/01/01 10:00:03 [warn] 13#13: *9 an upstream response is buffered to a temporary file /lab/proxy_temp/1/00/0000000001`, "", false},
	{`[ALERT]    (1) : Server be_app/app is DOWN, reason: Layer4 connection problem`, "", true},
	{`2026/01/01 10:00:04 [error] 13#13: *8 no live upstreams while connecting to upstream`, "no_live_upstreams", true},
}

// logBlock is at least size bytes of whole logLines, and what they count.
func logBlock(size int) (block []byte, errLines int, causes map[string]int) {
	causes = map[string]int{}
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		l := logLines[i%len(logLines)]
		b.WriteString(l.line)
		b.WriteByte('\n')
		if l.err {
			errLines++
		}
		if l.cause != "" {
			causes[l.cause]++
		}
	}
	return b.Bytes(), errLines, causes
}

// appendFile appends b to path n times.
func appendFile(t *testing.T, path string, b []byte, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for range n {
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
	}
}

// allocated is the bytes the process allocated during fn.
func allocated(fn func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	fn()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// A step reads the proxy's log before and after the generator runs. With
// 500 MB logged in between (nginx at warn under overload logs every
// 502), the scan after reads just those 500 MB, through one buffer: it
// allocates less than 1 MiB, and counts every line and cause as reading
// the whole file would (the block's counts times its copies), line
// endings across the buffer's edges included. The next scan reads only
// what came after.
func TestErrorLogReadsOnBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 500 MB log (skipped with -short)")
	}
	dir := t.TempDir()
	p := &Proxy{params: proxy.Params{Dir: dir}, logFile: filepath.Join(dir, "proxy.log")}
	errorLog := filepath.Join(dir, "error.log")
	block, blockErrs, blockCauses := logBlock(1 << 20)
	appendFile(t, errorLog, block, 1)
	const copies = 500
	var lines int
	var causes map[string]int
	var err error
	alloc := allocated(func() {
		if _, _, err := p.ErrorLog(); err != nil { // the step's scan before the generator
			t.Fatal(err)
		}
		appendFile(t, errorLog, block, copies-1) // what the generator's step made the proxy log
		t0 := time.Now()
		lines, causes, err = p.ErrorLog() // ...and the scan after it
		t.Logf("read %d MB in %s", copies*len(block)>>20, time.Since(t0).Round(time.Millisecond))
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the step's two scans of a %d MB log allocated %d bytes", copies*len(block)>>20, alloc)
	if alloc >= 1<<20 {
		t.Errorf("the step's scans allocated %d bytes, want less than 1 MiB", alloc)
	}
	want := map[string]int{}
	for k, n := range blockCauses {
		want[k] = n * copies
	}
	if lines != blockErrs*copies || !reflect.DeepEqual(causes, want) {
		t.Fatalf("ErrorLog = %d lines, %v; want %d, %v", lines, causes, blockErrs*copies, want)
	}

	// The next step's scans read only what it adds.
	appendFile(t, p.logFile, []byte(logLines[0].line+"\n"), 1)
	alloc = allocated(func() { lines, causes, err = p.ErrorLog() })
	want["addr_not_avail"]++
	if err != nil || lines != blockErrs*copies+1 || !reflect.DeepEqual(causes, want) {
		t.Fatalf("after one more line: %d lines, %v, %v", lines, causes, err)
	}
	if alloc >= 64<<10 {
		t.Errorf("a scan of one new line allocated %d bytes", alloc)
	}
}

// A last line without its newline yet is counted as it stands, and once
// complete it is counted once; a line longer than the buffer is judged by its start
// and counted as cut; a log replaced by a new file is read from its
// start.
func TestErrorLogIncremental(t *testing.T) {
	dir := t.TempDir()
	p := &Proxy{params: proxy.Params{Dir: dir}, logFile: filepath.Join(dir, "proxy.log")}
	errorLog := filepath.Join(dir, "error.log")
	check := func(what string, wantLines int, want map[string]int, wantCut int) {
		t.Helper()
		lines, causes, err := p.ErrorLog()
		if err != nil || lines != wantLines || !reflect.DeepEqual(causes, want) {
			t.Fatalf("%s: ErrorLog = %d, %v, %v; want %d, %v", what, lines, causes, err, wantLines, want)
		}
		if cut := p.CutLines(); cut != wantCut {
			t.Fatalf("%s: %d cut lines, want %d", what, cut, wantCut)
		}
	}
	half := logLines[0].line[:60]
	appendFile(t, errorLog, []byte(logLines[1].line+"\n"+half), 1)
	check("half a line ([crit] is in it)", 2, map[string]int{"timed_out": 1}, 0)
	appendFile(t, errorLog, []byte(logLines[0].line[60:]), 1)
	check("a last line without its newline", 2, map[string]int{"timed_out": 1, "addr_not_avail": 1}, 0)
	appendFile(t, errorLog, []byte("\n"), 1)
	check("the line completed", 2, map[string]int{"timed_out": 1, "addr_not_avail": 1}, 0)

	long := "[error] 13#13: too many open files " + strings.Repeat("x", 2*logBuf) + " Connection refused\n"
	appendFile(t, errorLog, []byte(long+logLines[3].line+"\n"), 1)
	check("a line longer than the buffer", 4, map[string]int{"timed_out": 1, "addr_not_avail": 1, "too_many_files": 1, "conn_refused": 1}, 1)

	_, causes, _ := p.ErrorCauses()
	if causes[0].Key != "addr_not_avail" || causes[0].Sample != logLines[0].line {
		t.Fatalf("first cause %+v", causes[0])
	}

	os.Remove(errorLog)
	appendFile(t, errorLog, []byte(logLines[6].line+"\n"), 1)
	check("a new file", 1, map[string]int{"no_live_upstreams": 1}, 0)
}

// oldErrorLevel is the regular expression errorWord replaces.
var oldErrorLevel = regexp.MustCompile(`(?i)\[(error|crit|alert|emerg)\]|"level":"(error|fatal|panic)"|\bERR\b|\b(error|fatal|panic|failed)\b`)

// FuzzErrorWord holds errorWord to the regular expression it replaces,
// and a line's tally to the regular expression and a case-insensitive
// (ASCII) search of each cause.
func FuzzErrorWord(f *testing.F) {
	for _, l := range logLines {
		f.Add(l.line)
	}
	for _, s := range []string{"ERR", "x_err", "[CRIT]", "crit]", "[alert", `"level":"Panic"`, "failed2", "Failed.", "errors", "worKer_connections are not enough"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		low := []byte(asciiLower(line))
		if got, want := errorWord(low), oldErrorLevel.MatchString(line); got != want {
			t.Fatalf("errorWord(%q) = %v, the expression says %v", line, got, want)
		}
		var tl tally
		tl.line([]byte(line), make([]byte, len(line)))
		wantErr, wantKey := oldErrorLevel.MatchString(line), ""
		for _, k := range knownCauses {
			if strings.Contains(asciiLower(line), asciiLower(k.what)) {
				wantKey, wantErr = k.key, true
				break
			}
		}
		gotKey := ""
		if c := tl.list(); len(c) > 0 {
			gotKey = c[0].Key
		}
		if gotKey != wantKey || (tl.errLines == 1) != wantErr {
			t.Fatalf("%q: cause %q error %v; want %q %v", line, gotKey, tl.errLines == 1, wantKey, wantErr)
		}
	})
}

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// logTail, tailLines (a start failure's last lines) and logContains read
// a log's end and search it without following a link the proxy's user
// put in its directory.
func TestLogTailRefusesLink(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("root:$6$hash:19000:0:99999:7:::\naddress already in use\n"), 0o600)
	p := &Proxy{params: proxy.Params{Dir: dir}, logFile: filepath.Join(dir, "proxy.log")}
	os.Symlink(secret, p.logFile)
	if got := logTail(p.logFile); strings.Contains(got, "root:") || !strings.Contains(got, "symbolic link") {
		t.Fatalf("logTail through a link = %q", got)
	}
	if p.logContains("address already in use") {
		t.Fatal("logContains read through a link")
	}
	if lines := tailLines(p.logFile, 3); len(lines) != 0 {
		t.Fatalf("a start failure would quote %q through a link", lines)
	}
	os.Remove(p.logFile)
	os.WriteFile(p.logFile, []byte(strings.Repeat("x", 3*logBuf)+"\nbind() to 0.0.0.0:80 failed (98: Address already in use)\nlast line\n"), 0o600)
	if got := logTail(p.logFile); got != fmt.Sprintf("%q (%s)", "last line", p.logFile) {
		t.Fatalf("logTail = %s", got)
	}
	if !p.logContains("address already in use") || p.logContains("no such text") {
		t.Fatal("logContains")
	}
}

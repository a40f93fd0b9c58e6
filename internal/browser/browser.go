// Package browser loads pages in a real headless Chromium, for the tests
// that check how the lab's report looks: the DOM as Chromium built it
// (DumpDOM), and how wide each table of a page came out at a given window
// width (Fit). Chromium is found as the lab finds its programs
// (internal/findbin: Debian's chromium package, installed by
// scripts/install-proxies.sh); each call runs its own
// browser with a temporary profile, bounded by the caller's context.
//
// Imports: internal/findbin and no other loadlab package.
package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/loadlab/loadlab/internal/findbin"
)

// Program is the name findbin.FindBinary looks up.
const Program = "chromium"

// ErrNoBrowser is wrapped by Find's error when Chromium is not installed.
var ErrNoBrowser = errors.New("chromium not found")

// Find returns the path of Chromium (findbin.FindBinary: a binary the
// tests, run as root, may run).
func Find() (string, error) {
	p, err := findbin.FindBinary(Program)
	if errors.Is(err, findbin.ErrNotFound) {
		return "", fmt.Errorf("%w: install it (apt-get install chromium, or scripts/install-proxies.sh): %v", ErrNoBrowser, err)
	}
	return p, err
}

// Options shape the browser window.
type Options struct {
	Width, Height int // the window in CSS pixels; 0: 1400 x 1000
	// Budget is the virtual time the page gets to load and run its
	// scripts before the DOM is dumped; 0: 2 s. A meta refresh later than
	// that does not fire.
	Budget time.Duration
}

func (o Options) withDefaults() Options {
	if o.Width == 0 {
		o.Width = 1400
	}
	if o.Height == 0 {
		o.Height = 1000
	}
	if o.Budget == 0 {
		o.Budget = 2 * time.Second
	}
	return o
}

// DumpDOM loads url (http://, https:// or file://) in headless Chromium
// and returns the DOM as it stood after the page loaded, serialized.
func DumpDOM(ctx context.Context, url string, o Options) (string, error) {
	bin, err := Find()
	if err != nil {
		return "", err
	}
	return dumpRetrying(ctx, bin, url, o.withDefaults())
}

// dumpRetrying is DumpDOM with the browser at bin.
func dumpRetrying(ctx context.Context, bin, url string, o Options) (string, error) {
	// A Chromium that crashes (dies of a signal: a segmentation fault
	// seen 1 run in about 20 on this 2-core machine under load) says
	// nothing of the page: it gets two more tries.
	var crashed error
	for range 3 {
		dom, err := dumpDOM(ctx, bin, url, o)
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ctx.Err() == nil && ee.ProcessState != nil && !ee.ProcessState.Exited() {
			crashed = err
			continue
		}
		return dom, err
	}
	return "", crashed
}

// dumpDOM is one run of Chromium for DumpDOM.
func dumpDOM(ctx context.Context, bin, url string, o Options) (string, error) {
	profile, err := os.MkdirTemp("", "loadlab-chromium-")
	if err != nil {
		return "", fmt.Errorf("create chromium's profile directory: %w (check TMPDIR)", err)
	}
	defer os.RemoveAll(profile)
	cmd := exec.CommandContext(ctx, bin,
		"--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-dev-shm-usage",
		"--user-data-dir="+profile,
		fmt.Sprintf("--window-size=%d,%d", o.Width, o.Height),
		fmt.Sprintf("--virtual-time-budget=%d", o.Budget.Milliseconds()),
		"--dump-dom", url)
	// Chromium forks helpers: end them all with it when ctx ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("chromium on %s: %w (give the test more time, or check that the page loads)", url, ctx.Err())
		}
		return "", fmt.Errorf("chromium on %s: %w: %s (run it by hand to see why)", url, err, lastLine(stderr.String()))
	}
	if out.Len() == 0 {
		return "", fmt.Errorf("chromium on %s dumped no DOM: %s (check the URL loads)", url, lastLine(stderr.String()))
	}
	return out.String(), nil
}

// lastLine is s's last non-empty line (Chromium's stderr is long).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// TableFit is how wide one table of a page came out.
type TableFit struct {
	Index   int     // the table's place among the page's tables, from 0
	Caption string  // its caption, if any
	Width   float64 // its border box, CSS pixels
	Right   float64 // its right edge from the page's left edge
	Room    float64 // the content width of the box it sits in
}

// Wider reports whether the table is wider than the box it sits in.
func (t TableFit) Wider() bool { return t.Width > t.Room+0.5 }

// Fit is how a page came out at a window width.
type Fit struct {
	Window      int     // window.innerWidth
	PageWidth   float64 // the page's visible width (documentElement.clientWidth)
	ScrollWidth float64 // the page's full width: more than PageWidth when something sticks out
	Tables      []TableFit
}

// Overflows lists the tables wider than the box they sit in or sticking
// out past the page's right edge.
func (f *Fit) Overflows() []TableFit {
	var out []TableFit
	for _, t := range f.Tables {
		if t.Wider() || t.Right > f.PageWidth+0.5 {
			out = append(out, t)
		}
	}
	return out
}

// measureID is the element the measuring script writes its JSON into.
const measureID = "loadlab-browser-measure"

// measureScript measures every table once the page has loaded (images
// included) and writes the numbers into the DOM for DumpDOM to carry out.
const measureScript = `<script>
addEventListener("load", function () {
  var de = document.documentElement, out = {window: innerWidth, page: de.clientWidth, scroll: de.scrollWidth, tables: []};
  document.querySelectorAll("table").forEach(function (t, i) {
    var r = t.getBoundingClientRect(), p = t.parentElement, cs = getComputedStyle(p);
    var room = p.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    var c = t.querySelector("caption");
    out.tables.push({index: i, caption: c ? c.textContent.trim() : "", width: r.width, right: r.right + scrollX, room: room});
  });
  var pre = document.createElement("pre");
  pre.id = "` + measureID + `";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>`

// FitHTML loads page (a whole HTML document) in headless Chromium at
// o.Width and measures each of its tables. The page is written to a
// temporary file with a measuring script added before </body>.
func FitHTML(ctx context.Context, page []byte, o Options) (*Fit, error) {
	dir, err := os.MkdirTemp("", "loadlab-page-")
	if err != nil {
		return nil, fmt.Errorf("create a directory for the page: %w (check TMPDIR)", err)
	}
	defer os.RemoveAll(dir)
	s := string(page)
	if i := strings.LastIndex(strings.ToLower(s), "</body>"); i >= 0 {
		s = s[:i] + measureScript + s[i:]
	} else {
		s += measureScript
	}
	file := filepath.Join(dir, "page.html")
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		return nil, fmt.Errorf("write the page: %w (check TMPDIR)", err)
	}
	dom, err := DumpDOM(ctx, "file://"+file, o)
	if err != nil {
		return nil, err
	}
	return parseFit(dom)
}

// parseFit reads the measuring script's JSON back out of a dumped DOM.
func parseFit(dom string) (*Fit, error) {
	open := `<pre id="` + measureID + `">`
	i := strings.Index(dom, open)
	if i < 0 {
		return nil, errors.New("the page's tables were not measured: the load event did not fire within the time budget (raise Options.Budget)")
	}
	rest := dom[i+len(open):]
	j := strings.Index(rest, "</pre>")
	if j < 0 {
		return nil, errors.New("the measurement in the dumped DOM is cut short (rerun; check chromium's version)")
	}
	var raw struct {
		Window int     `json:"window"`
		Page   float64 `json:"page"`
		Scroll float64 `json:"scroll"`
		Tables []struct {
			Index   int     `json:"index"`
			Caption string  `json:"caption"`
			Width   float64 `json:"width"`
			Right   float64 `json:"right"`
			Room    float64 `json:"room"`
		} `json:"tables"`
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(rest[:j])), &raw); err != nil {
		return nil, fmt.Errorf("read the page's measurement: %w (the measuring script and parseFit disagree)", err)
	}
	f := &Fit{Window: raw.Window, PageWidth: raw.Page, ScrollWidth: raw.Scroll}
	for _, t := range raw.Tables {
		f.Tables = append(f.Tables, TableFit{Index: t.Index, Caption: t.Caption, Width: t.Width, Right: t.Right, Room: t.Room})
	}
	return f, nil
}

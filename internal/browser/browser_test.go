package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A table of 40 unbreakable cells is wider than a 1400 px window; a
// short one is not; the window is the width asked for.
func TestFitFindsTheWideTable(t *testing.T) {
	Need(t)
	var wide strings.Builder
	for i := range 40 {
		fmt.Fprintf(&wide, "<td>cell-number-%02d</td>", i)
	}
	page := `<!DOCTYPE html><html><head><style>body { max-width: 60em; margin: 0 auto; }</style></head><body>
<table><caption>narrow</caption><tr><td>a</td><td>b</td></tr></table>
<table><caption>wide</caption><tr>` + wide.String() + `</tr></table>
</body></html>`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fit, err := FitHTML(ctx, []byte(page), Options{Width: 1400})
	if err != nil {
		t.Fatal(err)
	}
	if fit.Window != 1400 {
		t.Errorf("window %d px, want 1400", fit.Window)
	}
	if len(fit.Tables) != 2 {
		t.Fatalf("%d tables measured, want 2: %+v", len(fit.Tables), fit)
	}
	over := fit.Overflows()
	if len(over) != 1 || over[0].Caption != "wide" || over[0].Width <= 1400 {
		t.Errorf("overflows %+v, want only the wide table, wider than 1400 px", over)
	}
	if fit.ScrollWidth <= fit.PageWidth {
		t.Errorf("page scroll width %v, visible %v: the wide table should stick out", fit.ScrollWidth, fit.PageWidth)
	}
}

// DumpDOM returns the DOM after the page's scripts ran.
func TestDumpDOMRunsScripts(t *testing.T) {
	Need(t)
	file := filepath.Join(t.TempDir(), "p.html")
	page := `<html><body><p id="x">before</p><script>document.getElementById("x").textContent = "after";</script></body></html>`
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dom, err := DumpDOM(ctx, "file://"+file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dom, `<p id="x">after</p>`) {
		t.Errorf("DOM %s: the script did not run", dom)
	}
}

// A browser that crashes (dies of a signal) is run again, twice at most; one
// that exits with an error is not.
func TestDumpDOMRetriesACrash(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name    string
		crashes int    // runs that die of SIGSEGV before one prints the DOM
		exit    string // instead: how every run exits
		runs    int
		ok      bool
	}{
		{"one crash", 1, "", 2, true},
		{"two crashes", 2, "", 3, true},
		{"three crashes", 3, "", 3, false},
		{"an error exit", 0, "exit 3", 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			count := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			fail := c.exit
			if fail == "" {
				fail = "true"
			}
			script := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".sh")
			body := fmt.Sprintf("#!/bin/sh\necho x >> %s\nn=$(wc -l < %s)\n%s\nif [ \"$n\" -le %d ]; then kill -SEGV $$; fi\necho '<html>ok</html>'\n", count, count, fail, c.crashes)
			if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
			dom, err := dumpRetrying(context.Background(), script, "file:///dev/null", Options{}.withDefaults())
			if (err == nil) != c.ok || (c.ok && !strings.Contains(dom, "ok")) {
				t.Errorf("dom %q, err %v: want ok=%v", dom, err, c.ok)
			}
			b, _ := os.ReadFile(count)
			if n := strings.Count(string(b), "x"); n != c.runs {
				t.Errorf("%d runs, want %d", n, c.runs)
			}
		})
	}
}

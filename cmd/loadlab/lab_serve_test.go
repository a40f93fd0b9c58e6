package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/browser"
)

// --serve on a port in use: one line, a non-zero exit, before the run
// starts (no budget, no layout printed).
func TestLabRunServePortInUse(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	code, _, errs := runCLI(t, "lab", "run", "--plan", "quick", "--out", t.TempDir(), "--dry-run", "--serve", held.Addr().String())
	if code == 0 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "--serve "+held.Addr().String()) || !strings.Contains(errs, "address already in use") {
		t.Fatalf("exit %d, stderr:\n%s\nwant one line naming --serve and the port in use", code, errs)
	}
	if strings.Contains(errs, "layout") || strings.Contains(errs, "loadlab: plan") {
		t.Errorf("the run got under way before the port was checked:\n%s", errs)
	}
}

// --serve off loopback is refused without --allow-remote (exit 2).
func TestLabRunServeRefusesRemote(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8080"} {
		code, _, errs := runCLI(t, "lab", "run", "--plan", "quick", "--out", t.TempDir(), "--dry-run", "--serve", addr)
		if code != exitUsage || !strings.Contains(errs, "--allow-remote") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("--serve %s: exit %d, stderr:\n%s\nwant exit 2, one line pointing to --allow-remote", addr, code, errs)
		}
	}
	if code, _, errs := runCLI(t, "lab", "run", "--plan", "quick", "--out", t.TempDir(), "--dry-run", "--serve", "127.0.0.1:0", "--serve-linger", "-1s"); code != exitUsage {
		t.Errorf("--serve-linger -1s: exit %d\n%s", code, errs)
	}
}

// A real lab run of a tiny plan with --serve 127.0.0.1:0: while it runs
// the page (loaded in headless Chromium) names the step running; after
// the run it is the final report and lingers until Ctrl-C, which ends
// the process with status 0.
func TestLabRunServeLivePage(t *testing.T) {
	needNginxRoot(t)
	browser.Need(t)
	dir := worldDir(t)
	planFile := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(planFile, []byte(`name: live-page
profiles: [nginx-stock, nginx-keepalive]
keys: [p256]
net: netns
cpus: {server: "1"}
timeout: 5s
idle_memory: {quiet: 0s, samples: 0, every: 0s}
scenarios:
  - kind: fixed-rate
    rates: [300]
    runs: 1
    duration: 4s
    warmup: 1s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := cliCommand(t, "lab", "run", "--plan", planFile, "--out", filepath.Join(dir, "out"), "-q", "--serve", "127.0.0.1:0", "--serve-linger", "5m")
	progress, done := startUntil(t, cmd, "loadlab: live report at http://127.0.0.1:")
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
	}()
	url := regexp.MustCompile(`live report at (http://127\.0\.0\.1:\d+/)`).FindStringSubmatch(progress.text())[1]
	dom := func() string {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		d, err := browser.DumpDOM(ctx, url, browser.Options{Width: 1400})
		if err != nil {
			t.Fatalf("%v\n%s", err, progress.text())
		}
		return d
	}
	// during the run: the step running, until the second profile's
	deadline := time.Now().Add(90 * time.Second)
	var during string
	for during = dom(); !strings.Contains(during, "Now: fixed-rate on nginx-keepalive (p256, layout"); during = dom() {
		if time.Now().After(deadline) {
			t.Fatalf("the page never showed the second step running:\n%s\n%s", during, progress.text())
		}
		time.Sleep(300 * time.Millisecond)
	}
	for _, want := range []string{"Running: plan live-page, step 2 of about 2", "Steps done: 1 of about 2. ETA:", `http-equiv="refresh"`, "<caption>Fixed rates</caption>"} {
		if !strings.Contains(during, want) {
			t.Errorf("during the run the page lacks %q", want)
		}
	}
	// a row's label may carry a mark (†: the shared machine made the
	// generator late)
	row := func(profile string) *regexp.Regexp {
		return regexp.MustCompile(`<td>` + profile + `( [^<]*)?</td><td>300</td>`)
	}
	if !row("nginx-stock").MatchString(during) || row("nginx-keepalive").MatchString(during) {
		t.Errorf("during the second step the page should have nginx-stock's row and not yet nginx-keepalive's")
	}
	waitFor(t, progress, "loadlab: serving the final report at", done)
	final := dom()
	if !strings.Contains(final, "Run finished at") || !row("nginx-stock").MatchString(final) || !row("nginx-keepalive").MatchString(final) {
		t.Errorf("after the run the page lacks the banner or a row")
	}
	if t.Failed() {
		b, _ := os.ReadFile(filepath.Join(dir, "out", "results.json"))
		t.Logf("%s", regexp.MustCompile(`"(id|status|interrupted|verdict|phase|reason)": [^,]*`).FindAllString(string(b), -1))
		t.Logf("rows: %q\n%s", regexp.MustCompile(`<tr>.*?</tr>|<li>.*?</li>`).FindAllString(final, -1), progress.text())
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(page), `http-equiv="refresh"`) {
		t.Error("the final page still reloads itself")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fit, err := browser.FitHTML(ctx, page, browser.Options{Width: 1400})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range fit.Overflows() {
		t.Errorf("table %q is %.0f px wide on a %.0f px page", tb.Caption, tb.Width, fit.PageWidth)
	}
	cmd.Process.Signal(syscall.SIGINT) // ends the linger
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit within 30 s of SIGINT during the linger:\n%s", progress.text())
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit %d after the run finished and the linger was cut short, want 0:\n%s", code, progress.text())
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the page is still served after the process exited")
	}
}

// waitFor waits (up to 90 s) until the process's stderr shows want.
func waitFor(t *testing.T, progress *lineWatcher, want string, done chan error) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(progress.text(), want) {
		select {
		case err := <-done:
			t.Fatalf("ended before %q: %v\n%s", want, err, progress.text())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q within 90 s:\n%s", want, progress.text())
		}
	}
}

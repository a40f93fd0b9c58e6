package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The live page is the report's own HTML with a banner and a meta
// refresh on top; the final report has neither.
func TestLiveHTMLIsTheReportWithABanner(t *testing.T) {
	r, _ := build(t, fullFile(t))
	final, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	live, err := r.LiveHTML(&Live{Refresh: 5 * time.Second, Title: "Running", Lines: []string{"keepalive-1k on nginx-stock <now>"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<meta http-equiv="refresh" content="5">`, `<div class="live" id="live"><strong>Running</strong><br>keepalive-1k on nginx-stock &lt;now&gt;</div>`} {
		if !strings.Contains(string(live), want) {
			t.Errorf("live page lacks %s", want)
		}
		if strings.Contains(string(final), want) {
			t.Errorf("final report has %s", want)
		}
	}
	if strings.Contains(string(final), `http-equiv="refresh"`) || strings.Contains(string(final), `class="live"`) {
		t.Error("the final report reloads itself or has a live banner")
	}
	// the rest of the page is the same report
	i := bytes.Index(live, []byte("<h1>"))
	j := bytes.Index(final, []byte("<h1>"))
	if i < 0 || j < 0 || !bytes.Equal(live[i:], final[j:]) {
		t.Error("the live page's report differs from the final report's")
	}
	still, err := r.LiveHTML(&Live{Title: "Finished"})
	if err != nil || strings.Contains(string(still), `http-equiv="refresh"`) {
		t.Errorf("a live page without Refresh reloads itself (%v)", err)
	}
}

package report

import (
	"bytes"
	"time"
)

// Live is the head of the page `lab run --serve` serves while a run goes:
// the same report as the final one, with what runs now above it. The
// final report (report.html) has none.
type Live struct {
	Refresh time.Duration // the page reloads itself this often (a meta refresh); 0: it does not
	Title   string        // the banner's first line: "Running", "Finished", ...
	Lines   []string      // what runs now and where the run stands, in words
}

// page is what the HTML template executes on: the report and, on the
// live page, its head.
type page struct {
	*Report
	Live *Live
}

// LiveHTML renders the report as HTML() does, with live's banner at the
// top and, when live.Refresh is set, a meta refresh.
func (r *Report) LiveHTML(live *Live) ([]byte, error) {
	var b bytes.Buffer
	if err := htmlPage.Execute(&b, page{Report: r, Live: live}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

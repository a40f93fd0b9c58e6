package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"
	"github.com/loadlab/loadlab/lab/report"
	"github.com/loadlab/loadlab/lab/results"
)

// finishedQuick is lab/scenario's recorded finished quick run (every unit
// and every round's remeasure recorded; see its test there).
const finishedQuick = "scenario/testdata/finished-quick.json.gz"

// make lab on the directory of a finished quick run re-renders it and
// measures nothing: no session opens, results.json stays byte for byte as
// it was, and the report's header still says finished. (The old code
// resumed it: "resuming the run in results/quick (24 units recorded)",
// then measured each round's next-noisiest unit and the later rounds of
// the units that set back, as issue 45 saw.)
func TestRunFinishedRerendersMeasuresNothing(t *testing.T) {
	var log bytes.Buffer
	o := RunOptions{Plan: "quick", Out: t.TempDir(), StepScale: 1, Quiet: true, Stdout: io.Discard, Log: &log}
	p, err := preparePlan(o)
	if err != nil {
		t.Fatal(err)
	}
	var f results.File
	if err := json.Unmarshal(testutil.Gunzip(t, finishedQuick), &f); err != nil {
		t.Fatal(err)
	}
	// The plan as this command makes it: resuming is refused for another.
	f.Plan, f.PlanHash, f.Options = p, results.Hash(p, results.RunOptions{}), results.RunOptions{}
	b, err := json.MarshalIndent(&f, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(o.Out, results.FileName)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// A run that measured would take minutes: a minute bounds it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = Run(ctx, o)
	if err != nil && strings.Contains(err.Error(), "installed") {
		t.Skipf("no proxy of the plan installed: %v", err)
	}
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	if got, _ := os.ReadFile(file); !bytes.Equal(got, b) {
		t.Fatalf("results.json changed:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "is finished (24 units recorded): re-rendering its report, measuring nothing") || strings.Contains(log.String(), "lab session ready") {
		t.Fatalf("progress:\n%s", log.String())
	}
	md, err := os.ReadFile(filepath.Join(o.Out, report.MarkdownFile))
	if err != nil || !bytes.Contains(md, []byte("finished")) || bytes.Contains(md, []byte("not finished")) {
		t.Fatalf("report.md (%v) does not say finished", err)
	}
}

package report

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/loadlab/loadlab/internal/atomicfile"
	"github.com/loadlab/loadlab/lab/results"
)

// Output file names in the run directory.
const (
	MarkdownFile = "report.md"
	HTMLFile     = "report.html"
	ChartsDir    = "charts"
)

// Render builds the report from f and writes DIR/report.md,
// DIR/report.html and the charts under DIR/charts/ (PNG, linked from the
// Markdown; the HTML embeds them).
func Render(f *results.File, dir string) (*Report, error) {
	r, err := Build(f)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, ChartsDir), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %v", filepath.Join(dir, ChartsDir), err)
	}
	for _, s := range r.Sections {
		for _, c := range s.Charts {
			if err := atomicfile.WriteFile(filepath.Join(dir, c.File), c.PNG, 0o644); err != nil {
				return nil, err
			}
		}
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, MarkdownFile), r.Markdown(), 0o644); err != nil {
		return nil, err
	}
	page, err := r.HTML()
	if err != nil {
		return nil, fmt.Errorf("render HTML: %v", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, HTMLFile), page, 0o644); err != nil {
		return nil, err
	}
	return r, nil
}

// RenderDir re-renders DIR's report from DIR/results.json.
func RenderDir(dir string) (*Report, error) {
	f, err := results.Load(dir)
	if err != nil {
		return nil, err
	}
	return Render(f, dir)
}

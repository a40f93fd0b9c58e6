package lab

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/loadlab/loadlab/lab/report"
	"github.com/loadlab/loadlab/lab/results"
)

// ResultsFile is the name of a run's results in its directory.
const ResultsFile = results.FileName

// Rerender renders dir's report again from dir's results.json: the
// Markdown tables (also written to tables, unless nil), the offline HTML
// page and the charts; log says where they went. A dir that is not a run's
// directory is a UsageError.
func Rerender(dir string, tables, log io.Writer) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usagef("%s is not a directory: give the --out directory of loadlab lab run", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, results.FileName)); errors.Is(err, os.ErrNotExist) {
		return usagef("%s has no %s: run loadlab lab run --out %s first", dir, results.FileName, dir)
	}
	r, err := report.RenderDir(dir)
	if err != nil {
		return err
	}
	if tables != nil {
		_, _ = tables.Write(r.MarkdownTables()) // stdout: nothing to do about a failed write
	}
	fmt.Fprintf(log, "loadlab: wrote %s and %s\n", filepath.Join(dir, report.MarkdownFile), filepath.Join(dir, report.HTMLFile))
	return nil
}

package lab

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/loadlab/loadlab/lab/proxy"
)

// ProxyRow is one profile of `loadlab lab proxies`. The JSON names are a
// contract.
type ProxyRow struct {
	Name        string         `json:"name"`
	Proxy       string         `json:"proxy"`
	Role        string         `json:"role"` // proxy (forwards to the backend) or origin (serves the lab's files itself)
	Found       bool           `json:"found"`
	Path        string         `json:"path,omitempty"`
	Version     string         `json:"version,omitempty"`
	Features    proxy.Features `json:"features"`
	Description string         `json:"description"`
	File        string         `json:"file,omitempty"` // the profile file, for a profile not built in
	Error       string         `json:"error,omitempty"`
}

// ProxyRows finds the binary of every profile of list (comma-separated
// names and profile files; empty: every built-in), with --bin's binaries,
// and asks its version (once per binary). A profile not installed is a
// row with Found false, not an error; a bad name or profile file is a
// UsageError.
func ProxyRows(list string, bins []string) ([]ProxyRow, error) {
	_, profiles, err := profileSet(list, bins)
	if err != nil {
		return nil, err
	}
	var rows []ProxyRow
	versions := map[string]string{} // binary path -> version, asked once
	for _, p := range profiles {
		r := ProxyRow{Name: p.Name, Proxy: p.Proxy, Role: p.Role, Features: p.Features, Description: p.Description, File: p.Source.File}
		path, err := p.Find()
		switch {
		case errors.Is(err, proxy.ErrNotFound):
			// Not installed is an answer, not an error.
		case err != nil:
			r.Error = err.Error()
		default:
			r.Found, r.Path = true, path
			v, ok := versions[path]
			if !ok {
				v, err = p.Version(path)
				if err != nil {
					r.Error = err.Error()
				}
				versions[path] = v
			}
			r.Version = v
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// WriteProxyTable writes rows as an aligned table.
func WriteProxyTable(w io.Writer, rows []ProxyRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tPROXY\tROLE\tSTATUS\tVERSION\tFEATURES\tDESCRIPTION")
	for _, r := range rows {
		status, version := "not found", "-"
		if r.Found {
			status = "found " + r.Path
			version = r.Version
		}
		if r.Error != "" {
			version = "error: " + r.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Proxy, r.Role, status, version, r.Features, r.Description)
	}
	return tw.Flush()
}

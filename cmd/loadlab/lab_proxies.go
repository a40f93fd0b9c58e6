package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/spf13/cobra"
)

// proxyRow is one profile in `loadlab lab proxies` output.
type proxyRow struct {
	Name        string         `json:"name"`
	Proxy       string         `json:"proxy"`
	Role        string         `json:"role"` // proxy (forwards to the backend) or origin (serves the lab's files itself)
	Found       bool           `json:"found"`
	Path        string         `json:"path,omitempty"`
	Version     string         `json:"version,omitempty"`
	Features    proxy.Features `json:"features"`
	Description string         `json:"description"`
	Error       string         `json:"error,omitempty"`
}

func newLabProxiesCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "proxies",
		Short: "List the proxy and origin profiles, whether each binary is installed, its version and features",
		Long: `List the profiles the lab can run: one row per profile with the server, its
role (proxy: forwards to the lab's backend; origin: serves the lab's files
itself), where its binary was found (or not), its version, the protocols its
config serves on its TLS listener (tls, h2, h3; every profile also serves
plain HTTP) and what the profile reproduces.

Binaries are searched in $LOADLAB_PROXY_BIN, the project's .cache/bin (filled
by scripts/install-proxies.sh), PATH and /usr/sbin.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rows := proxyRows()
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(rows)
			}
			return writeProxyTable(cmd.OutOrStdout(), rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array instead of a table")
	return cmd
}

// proxyRows finds every profile's binary and version.
func proxyRows() []proxyRow {
	var rows []proxyRow
	versions := map[string]string{} // binary path -> version, asked once
	for _, p := range proxy.All() {
		r := proxyRow{Name: p.Name, Proxy: p.Proxy, Role: p.Role, Features: p.Features, Description: p.Description}
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
	return rows
}

func writeProxyTable(w io.Writer, rows []proxyRow) error {
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

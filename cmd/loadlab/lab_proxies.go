package main

import (
	"encoding/json"

	"github.com/loadlab/loadlab/lab"
	"github.com/spf13/cobra"
)

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
			rows := lab.ProxyRows()
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(rows)
			}
			return lab.WriteProxyTable(cmd.OutOrStdout(), rows)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array instead of a table")
	return cmd
}

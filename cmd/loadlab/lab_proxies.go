package main

import (
	"encoding/json"

	"github.com/loadlab/loadlab/lab"
	"github.com/spf13/cobra"
)

func newLabProxiesCmd() *cobra.Command {
	var asJSON bool
	var profiles string
	var bins []string
	cmd := &cobra.Command{
		Use:   "proxies",
		Short: "List the proxy and origin profiles, whether each binary is installed, its version and features",
		Long: `List the profiles the lab can run: one row per profile with the server, its
role (proxy: forwards to the lab's backend; origin: serves the lab's files
itself), where its binary was found (or not), its version, the protocols its
config serves on its TLS listener (tls, h2, h3; every profile also serves
plain HTTP) and what the profile reproduces.

Binaries are searched in $LOADLAB_PROXY_BIN, the project's .cache/bin (filled
by scripts/install-proxies.sh), PATH and /usr/sbin. --profiles lists only the
profiles named, built-ins and profile files (./my-nginx.yaml); --bin
NAME=PATH shows profile NAME with another binary.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rows, err := lab.ProxyRows(profiles, bins)
			if err != nil {
				return err
			}
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
	cmd.Flags().StringVar(&profiles, "profiles", "", "only these profiles, comma-separated: built-in names and profile files (./my-nginx.yaml)")
	cmd.Flags().StringArrayVar(&bins, "bin", nil, "NAME=PATH: profile NAME runs the binary at PATH (repeatable)")
	return cmd
}

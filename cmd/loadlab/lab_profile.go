package main

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/lab"
	"github.com/spf13/cobra"
)

func newLabProfileCmd() *cobra.Command {
	profileCmd := &cobra.Command{
		Use:   "profile",
		Short: "Show a profile file and its templates, or copy them to edit (bring your own server)",
		Args:  cobra.NoArgs,
	}
	var out, name string
	show := &cobra.Command{
		Use:   "show NAME|FILE [--out DIR [--name NEW]]",
		Short: "Print a profile file and its config templates; --out writes them into DIR, ready to edit",
		Long: `Print a profile file and the config templates it renders (a built-in as
shipped; see loadlab lab proxies for the names). With --out DIR the files are
written into DIR instead, ready to edit: the copy is named --name (default
NAME-copy), so it can run beside the original:

  loadlab lab profile show nginx-keepalive --out my --name nginx-keepalive2
  sed -i 's/keepalive 32;/keepalive 2;/' my/nginx-keepalive.conf.tmpl
  loadlab lab run --plan quick --profiles nginx-keepalive,./my/nginx-keepalive2.yaml --scenarios sustained-pool

The fields and template parameters are in docs/lab.md (Profile files).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("profile show takes one profile name or file")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				if name != "" {
					return usagef("--name goes with --out")
				}
				text, err := lab.ShowProfile(args[0])
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(text)
				return err
			}
			path, err := lab.CopyProfile(args[0], out, name)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "loadlab: wrote %s and its templates; run it with --profiles %s\n", path, dotSlash(path))
			return nil
		},
	}
	show.Flags().StringVar(&out, "out", "", "write the profile file and its templates into this directory instead of printing them")
	show.Flags().StringVar(&name, "name", "", "the copy's name (default NAME-copy)")
	profileCmd.AddCommand(show)
	return profileCmd
}

// dotSlash makes a relative path look like one on a command line.
func dotSlash(p string) string {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, ".") {
		return p
	}
	return "./" + p
}

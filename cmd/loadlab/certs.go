package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/spf13/cobra"
)

// certsFlags holds the flags of `loadlab certs`.
type certsFlags struct {
	out      string
	key      string
	names    []string
	validity time.Duration
}

// newCertsCmd builds `loadlab certs`.
func newCertsCmd() *cobra.Command {
	var f certsFlags
	cmd := &cobra.Command{
		Use:   "certs --out DIR [--key p256|rsa2048|rsa4096|all] [--name N ...]",
		Short: "Create or reuse a local CA and a leaf certificate per key type",
		Long: `Create (or reuse, when still valid) a local CA in DIR/ca and, for each key
type, DIR/<key>/ with cert.pem, key.pem, fullchain.pem, ca.pem and
cert+key.pem (HAProxy's format). Leaves are regenerated when expiring within
24h, when their key or CA does not match, or when a --name is missing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCerts(cmd.OutOrStdout(), f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.out, "out", "", "directory for the CA and certificates (required)")
	fl.StringVar(&f.key, "key", "all", "key types: p256, rsa2048, rsa4096 (comma list) or all")
	fl.StringSliceVar(&f.names, "name", nil, "DNS name or IP for the certificate; repeat or comma-separate (default localhost,127.0.0.1,::1)")
	fl.DurationVar(&f.validity, "validity", certs.DefaultValidity, "leaf certificate lifetime")
	return cmd
}

// runCerts validates the flags, runs certs.EnsureResult, and prints the outcome.
func runCerts(w io.Writer, f certsFlags) error {
	if strings.TrimSpace(f.out) == "" {
		return usagef("--out is required: give a directory such as ./certs")
	}
	keys, err := certs.ParseKeyTypes(f.key)
	if err != nil {
		return usagef("--key: %v", err)
	}
	o := certs.Options{Dir: f.out, Keys: keys, Names: f.names, Validity: f.validity}
	if err := o.Validate(); err != nil {
		return usageError{err}
	}
	r, err := certs.EnsureResult(o)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "CA %s: %s\n", r.CA.Cert, describeAction(r.CAAction, r.CAReason))
	for _, k := range r.Keys {
		l := r.Leaves[k]
		fmt.Fprintf(w, "%s: %s\n", k.ServerKeyName(), describeAction(l.Action, l.Reason))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  cert\t%s\n", l.Paths.Cert)
		fmt.Fprintf(tw, "  key\t%s\n", l.Paths.Key)
		fmt.Fprintf(tw, "  fullchain\t%s\n", l.Paths.FullChain)
		fmt.Fprintf(tw, "  ca\t%s\n", l.Paths.CA)
		fmt.Fprintf(tw, "  cert+key\t%s\n", l.Paths.Combined)
		tw.Flush()
	}
	return nil
}

// describeAction renders "created (missing)" or "reused".
func describeAction(a certs.Action, reason string) string {
	if reason == "" {
		return string(a)
	}
	return fmt.Sprintf("%s (%s)", a, reason)
}

package check

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints one row per profile: found and version, TLS, h2 and h3
// verified, the websocket route (WS), h3 advertised (ALT-SVC), idle memory, restart seconds, certificate unchanged and
// byte-identical bodies; then the first failure of each failed row.
func (r Report) WriteTable(w io.Writer) {
	cg := "cgroups"
	if !r.Cgroups {
		cg = "no cgroups (affinity only)"
	}
	keys := make([]string, len(r.Keys))
	for i, k := range r.Keys {
		keys[i] = string(k)
	}
	fmt.Fprintf(w, "lab check: net %s, %s, proxy cpus %s, proxies run as %s, keys %s\n", r.Net, cg, r.Plan.Server, r.ProxyUser, strings.Join(keys, ","))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tVERSION\tTLS\tHTTP\tH2\tH3\tWS\tALT-SVC\tIDLE ANON+KERNEL\tPAGE CACHE\tMEMORY.CURRENT\tRESTART\tCERT\tBODIES")
	for _, row := range r.Rows {
		if !row.Found {
			fmt.Fprintf(tw, "%s\tnot installed\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n", row.Profile)
			continue
		}
		need, file, total, restart, cert := "-", "-", "-", "-", "-"
		if row.IdleMemory > 0 {
			need, file, total = mib(row.IdleNeed), mib(row.IdleFile), mib(row.IdleMemory)
		}
		if row.RestartSeconds > 0 {
			restart = fmt.Sprintf("%.2fs", row.RestartSeconds)
			cert = map[bool]string{true: "unchanged", false: "CHANGED"}[row.CertUnchanged]
		}
		bodies := map[bool]string{true: "identical", false: "DIFFER"}[row.ByteIdentical]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Profile, row.Version,
			mark(true, row.TLS), mark(true, row.HTTP), mark(row.Features.H2, row.H2), mark(row.Features.H3, row.H3), mark(row.Role != "origin", row.WebSocket), mark(row.Features.H3, row.H3Advertised),
			need, file, total, restart, cert, bodies)
	}
	tw.Flush()
	for _, row := range r.Rows {
		if !row.Found {
			fmt.Fprintf(w, "%s: not installed: install it with %s\n", row.Profile, row.Install)
		}
		if row.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", row.Profile, row.Error)
		}
	}
	if len(r.Rows) > 0 {
		fmt.Fprintln(w, "idle: anon+kernel is what the proxy needs (memory.stat, kmem); page cache is charged to whichever cgroup first read a file; memory.current is both (the seeds' number)")
	}
	if r.Interrupted {
		fmt.Fprintln(w, "interrupted: profiles not listed were not checked")
	}
}

// mib writes bytes as MiB with one decimal.
func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// mark is "ok", "FAIL", or "-" for a protocol the profile does not
// serve.
func mark(served, ok bool) string {
	switch {
	case !served:
		return "-"
	case ok:
		return "ok"
	}
	return "FAIL"
}

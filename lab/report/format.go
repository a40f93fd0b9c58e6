package report

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/internal/units"
	"github.com/loadlab/loadlab/lab/plan"
)

// fmtRate and fmtInt are the project's one number format.
var (
	fmtRate = units.Rate
	fmtInt  = units.Int
)

// fmtLatency writes a latency in microseconds; "-" in a table cell
// without one.
func fmtLatency(us int64) string {
	if us <= 0 {
		return "-"
	}
	return units.Micros(us)
}

// fmtMiB writes bytes as MiB with one decimal.
func fmtMiB(b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

// fmtPct writes a fraction as a percentage: 0.0123 -> "1.23%".
func fmtPct(f float64) string {
	switch {
	case f == 0:
		return "0%"
	case f < 0.0001:
		return "<0.01%"
	case f < 0.1:
		return fmt.Sprintf("%.2f%%", f*100)
	}
	return fmt.Sprintf("%.1f%%", f*100)
}

// fmtCores writes CPU use in cores.
func fmtCores(c float64, samples int) string {
	if samples == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f cores", c)
}

// fmtFactor writes a ratio: 3.8x.
func fmtFactor(f float64) string { return fmt.Sprintf("%.1fx", f) }

// keyName is the way the seeds name key types.
func keyName(k string) string {
	switch k {
	case "p256":
		return "ECDSA P-256"
	case "rsa2048":
		return "RSA 2048"
	case "rsa4096":
		return "RSA 4096"
	}
	return k
}

// mdEscape keeps table cells on one line and pipes out of the syntax.
func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	return strings.ReplaceAll(s, "\n", " ")
}

func joinInts(v []int) string {
	var s []string
	for _, n := range v {
		s = append(s, fmt.Sprint(n))
	}
	return strings.Join(s, ", ")
}

func cpuWords(n int) string {
	if n == 1 {
		return "1 server CPU"
	}
	return fmt.Sprintf("%d server CPUs", n)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// sizeWords is a size in the seed's words: 1k -> "1 KB".
func sizeWords(size string) string {
	switch size {
	case "1k":
		return "1 KB"
	case "100k":
		return "100 KB"
	case "1m":
		return "1 MB"
	}
	return size
}

// schemeWords names a scheme in prose: "plain HTTP" or "HTTPS".
func schemeWords(scheme string) string {
	if scheme == plan.SchemeHTTP {
		return "plain HTTP"
	}
	return "HTTPS"
}

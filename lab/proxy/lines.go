package proxy

import (
	"bytes"
	"sort"
)

// ConfigLines counts the lines of a rendered config that are neither blank
// nor a comment (after leading white space, a line starting with '#': the
// comment of every syntax the profiles render, nginx, Caddyfile, HAProxy,
// YAML, Apache and lighttpd alike). Seed 001 compares proxies by the lines
// they need for five host names; the count is what a person maintains.
func ConfigLines(data []byte) int {
	n := 0
	for _, l := range bytes.Split(data, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) > 0 && l[0] != '#' {
			n++
		}
	}
	return n
}

// FileLines is one rendered file and its ConfigLines.
type FileLines struct {
	Name  string `json:"name"`  // path relative to the profile's directory
	Lines int    `json:"lines"` // neither blank nor a comment
}

// CountLines is ConfigLines of every rendered file, by name, and their
// sum.
func CountLines(files map[string][]byte) (per []FileLines, total int) {
	for name, data := range files {
		n := ConfigLines(data)
		per = append(per, FileLines{Name: name, Lines: n})
		total += n
	}
	sort.Slice(per, func(i, j int) bool { return per[i].Name < per[j].Name })
	return per, total
}

package report

import (
	"fmt"
	"path"

	"github.com/loadlab/loadlab/lab/results"
)

// ConfigLink is one rendered config file the run copied under its
// directory: the report links it.
type ConfigLink struct {
	Profile string
	Name    string // the file's name in the server's run directory
	Path    string // relative to the run directory (and the report)
	SHA256  string
}

// profilesTable says what ran for each profile: its profile file, binary
// and config, each with its SHA-256 (short), and the rendered config
// files copied under the run directory; false when the run recorded none
// (results of older versions).
func profilesTable(f *results.File) (Table, []ConfigLink, bool) {
	if len(f.Profiles) == 0 {
		return Table{}, nil, false
	}
	t := Table{Caption: "Profiles: what ran", Header: []string{"Profile", "Version", "Binary", "Binary SHA-256", "Profile file", "File SHA-256", "Config SHA-256", "Config files"}}
	var links []ConfigLink
	for _, p := range f.Profiles {
		file := "built-in"
		if p.File != "" {
			file = p.File
		}
		if p.Extends != "" {
			file += " (extends " + p.Extends + ")"
		}
		var names string
		for i, c := range p.Configs {
			if i > 0 {
				names += ", "
			}
			names += c.Path
			links = append(links, ConfigLink{Profile: p.Name, Name: path.Base(c.Path), Path: c.Path, SHA256: c.SHA256})
		}
		t.Rows = append(t.Rows, []string{p.Name, orDash(p.Version), orDash(p.Binary), orDash(shortSum(p.BinarySHA256)), file, shortSum(p.SHA256), shortSum(p.ConfigSHA256), orDash(names)})
		t.Marks = append(t.Marks, "")
	}
	t.Footnotes = append(t.Footnotes, fmt.Sprintf("SHA-256 shown to %d hex digits (results.json has them whole). The config's SHA-256 is over the profile's templates; the files rendered from them (copied from each profile's first start) differ from run to run by ports and paths only.", shortLen))
	return t, links, true
}

// shortLen is how many hex digits of a SHA-256 the report shows.
const shortLen = 12

func shortSum(s string) string {
	if len(s) > shortLen {
		return s[:shortLen]
	}
	return s
}

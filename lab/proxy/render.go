package proxy

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"text/template"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

// templates holds one template file per proxy, parameterized by the
// profile's options.
var templates = template.Must(template.New("").Option("missingkey=error").ParseFS(templateFS, "templates/*.tmpl"))

// base is the data every template gets.
type base struct {
	Params
	Profile     string // profile name
	Description string // profile description
	HTTPListen  string // ListenHost:HTTPPort, IPv6 bracketed
	HTTPSListen string // ListenHost:HTTPSPort, IPv6 bracketed
	Backend     string // BackendHost:BackendPort, IPv6 bracketed
	MaxConnN    int    // MaxConn or DefaultMaxConn
}

func newBase(name, desc string, p Params) base {
	return base{
		Params:      p,
		Profile:     name,
		Description: desc,
		HTTPListen:  hostPort(p.ListenHost, p.HTTPPort),
		HTTPSListen: hostPort(p.ListenHost, p.HTTPSPort),
		Backend:     hostPort(p.BackendHost, p.BackendPort),
		MaxConnN:    p.maxConn(),
	}
}

// execTemplate runs the named template with data.
func execTemplate(name string, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, data); err != nil {
		return nil, fmt.Errorf("rendering %s: %v", name, err)
	}
	return b.Bytes(), nil
}

// WriteConfig renders prof for p and writes the files into p.Dir (created
// 0700 if missing; files 0600). It returns the written paths, sorted.
func WriteConfig(prof Profile, p Params) ([]string, error) {
	files, err := prof.Render(p)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating run directory: %v", err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		if !filepath.IsLocal(name) {
			return nil, fmt.Errorf("profile %s rendered a file outside its directory: %q", prof.Name, name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var written []string
	for _, name := range names {
		path := filepath.Join(p.Dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("creating config directory: %v", err)
		}
		if err := os.WriteFile(path, files[name], 0o600); err != nil {
			return nil, fmt.Errorf("writing config: %v", err)
		}
		written = append(written, path)
	}
	return written, nil
}

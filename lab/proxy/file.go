package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"go.yaml.in/yaml/v3"
)

// A profile file is one YAML document that defines one profile; unknown
// fields are refused (docs/lab.md, "Profile files"):
//
//	name: my-nginx                 # unique: a built-in's name is refused
//	role: proxy                    # proxy or origin
//	description: my nginx.conf with keepalive 64
//	server: nginx                  # the server software (default: the binary's name)
//	binary: nginx                  # a name on PATH, a path relative to this file, or absolute
//	version: ["{{.Binary}}", "-v"] # argv; the first line it prints is the version (or a fixed string)
//	version_match: 'nginx/(\S+)'   # optional: the version is SERVER + its first group in the output
//	version_module: github.com/caddyserver/caddy/v2  # optional: a Go binary's module version, read from its build info first
//	command: ["{{.Binary}}", "-p", "{{.Dir}}", "-c", "{{.Dir}}/nginx.conf", "-g", "daemon off;"]
//	files:                         # rendered into the run directory
//	  nginx.conf: ./my-nginx.conf.tmpl  # a template beside this file, or {content: "..."}
//	features: [tls, h2]            # what its TLS listener serves: tls, h2, h3
//	user: lab                      # lab (default) or root (a master that keeps root)
//	fixed_body: hello              # origins only: the body it answers for every path
//	extends: nginx-stock           # optional: start from a profile, override what this file sets
type fileSpec struct {
	Name          string                `yaml:"name"`
	Role          string                `yaml:"role"`
	Description   string                `yaml:"description"`
	Server        string                `yaml:"server"`
	Binary        string                `yaml:"binary"`
	Version       versionField          `yaml:"version"`
	VersionMatch  string                `yaml:"version_match"`
	VersionModule string                `yaml:"version_module"`
	Command       []string              `yaml:"command"`
	Files         map[string]fileSource `yaml:"files"`
	Features      []string              `yaml:"features"`
	User          string                `yaml:"user"`
	FixedBody     string                `yaml:"fixed_body"`
	Extends       string                `yaml:"extends"`
}

// versionField is the file's version: an argv list or a fixed string.
type versionField struct {
	Args []string
	Text string
}

func (v *versionField) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Decode(&v.Text)
	case yaml.SequenceNode:
		return n.Decode(&v.Args)
	}
	return fmt.Errorf("line %d: version must be an argv list such as [\"{{.Binary}}\", \"-v\"] or a fixed string", n.Line)
}

// fileSource is one entry of files: a template file, or inline content.
type fileSource struct {
	Path    string
	Content *string
	Line    int
}

func (f *fileSource) UnmarshalYAML(n *yaml.Node) error {
	f.Line = n.Line
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Decode(&f.Path)
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value != "content" {
				return fmt.Errorf("line %d: field %s not found in type files entry (use a template path, or {content: \"...\"})", k.Line, k.Value)
			}
			var s string
			if err := v.Decode(&s); err != nil {
				return err
			}
			f.Content = &s
			f.Line = v.Line
		}
		if f.Content == nil {
			return fmt.Errorf("line %d: a files entry needs content: \"...\" or a template path", n.Line)
		}
		return nil
	}
	return fmt.Errorf("line %d: a files entry is a template path or {content: \"...\"}", n.Line)
}

// maxExtends bounds a chain of extends.
const maxExtends = 8

// IsFile reports whether a profile reference names a file rather than a
// profile: it has a path separator or a .yaml/.yml suffix.
func IsFile(ref string) bool {
	return strings.ContainsRune(ref, '/') || strings.HasSuffix(ref, ".yaml") || strings.HasSuffix(ref, ".yml")
}

// loadProfile parses one profile file from src.
func loadProfile(src source, file string, s *Set, depth int) (Profile, error) {
	data, err := src.read(file)
	if err != nil {
		return Profile{}, err
	}
	var spec fileSpec
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&spec); err != nil {
		if errors.Is(err, io.EOF) {
			return Profile{}, fmt.Errorf("%s:1: the profile file is empty: start from `loadlab lab profile show nginx-stock`", file)
		}
		return Profile{}, yamlError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return Profile{}, fmt.Errorf("%s:%d: more than one YAML document: keep one profile per file", file, extra.Line)
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Profile{}, yamlError(file, err)
	}
	l := &fileLines{file: file, doc: &doc}

	var p Profile
	sum := sha256.Sum256(data)
	if spec.Extends != "" {
		if depth >= maxExtends {
			return Profile{}, l.errorf("extends", "more than %d profiles extend one another: is there a loop?", maxExtends)
		}
		parent, err := parentOf(src, file, spec.Extends, s, depth)
		if err != nil {
			return Profile{}, l.errorf("extends", "%v", err)
		}
		p = parent
		p.files = slices.Clone(parent.files)
		// The parent's text is part of what this profile is.
		sum = sha256.Sum256(append(append(slices.Clone(data), "\nextends "...), parent.Source.SHA256...))
	}
	p.Source = Source{File: file, SHA256: hex.EncodeToString(sum[:]), Extends: spec.Extends, Text: data}
	if _, ok := src.(embedSource); ok {
		p.Source.File, p.Source.Builtin = "", true
	}
	set := func(key string) bool { return l.has(key) }

	if !set("name") || spec.Name == "" {
		return Profile{}, l.errorf("name", "name is missing: give the profile a name of its own, e.g. my-nginx")
	}
	if !validProfileName(spec.Name) {
		return Profile{}, l.errorf("name", "name %q: use letters, digits, '-', '_' and '.'", spec.Name)
	}
	p.Name = spec.Name
	if set("description") {
		if strings.ContainsAny(spec.Description, "\r\n") {
			return Profile{}, l.errorf("description", "description must be one line")
		}
		p.Description = strings.TrimSpace(spec.Description)
	}
	if set("role") || p.Role == "" {
		if p.Role, err = choice(l, "role", spec.Role, "proxy (in front of the lab's backend) or origin (serves the lab's files itself)", RoleProxy, RoleOrigin); err != nil {
			return Profile{}, err
		}
	}
	if set("user") || p.User == "" {
		if p.User, err = choice(l, "user", spec.User, "lab (the lab's unprivileged user) or root (a master that keeps root and switches users itself)", UserLab, UserRoot); err != nil {
			return Profile{}, err
		}
	}
	if set("binary") {
		b := strings.TrimSpace(spec.Binary)
		switch {
		case b == "":
			return Profile{}, l.errorf("binary", "binary is empty: give a name on PATH, a path relative to this file, or an absolute path")
		case filepath.IsAbs(b):
			b = filepath.Clean(b)
		case strings.Contains(b, "/"):
			if _, builtin := src.(embedSource); builtin {
				return Profile{}, l.errorf("binary", "a built-in profile names its binary by name")
			}
			b = filepath.Join(filepath.Dir(file), b)
			if !filepath.IsAbs(b) {
				if b, err = absPath(b); err != nil {
					return Profile{}, l.errorf("binary", "%v", err)
				}
			}
		}
		p.Binary = b
	}
	if p.Binary == "" {
		return Profile{}, l.errorf("binary", "binary is missing: give a name on PATH, a path relative to this file, or an absolute path")
	}
	switch {
	case set("server"):
		p.Proxy = strings.TrimSpace(spec.Server)
	case spec.Extends == "" || p.Proxy == "":
		p.Proxy = filepath.Base(p.Binary)
	}
	if !validProfileName(p.Proxy) {
		return Profile{}, l.errorf("server", "server %q: use letters, digits, '-', '_' and '.'", p.Proxy)
	}
	if set("features") {
		p.Features = Features{}
		for _, f := range spec.Features {
			switch f {
			case "tls":
				p.Features.TLS = true
			case "h2":
				p.Features.H2 = true
			case "h3":
				p.Features.H3 = true
			default:
				return Profile{}, l.errorf("features", "feature %q: use tls, h2 and h3 (what the TLS listener serves)", f)
			}
		}
		if (p.Features.H2 || p.Features.H3) && !p.Features.TLS {
			return Profile{}, l.errorf("features", "h2 and h3 are served on the TLS listener: add tls")
		}
	} else if spec.Extends == "" {
		p.Features = Features{TLS: true}
	}
	if set("fixed_body") {
		p.FixedBody = []byte(spec.FixedBody)
		if len(p.FixedBody) == 0 {
			p.FixedBody = nil
		}
	}
	if p.FixedBody != nil && p.Role != RoleOrigin {
		return Profile{}, l.errorf("fixed_body", "fixed_body is for origins (role: origin): a proxy answers with the backend's bytes")
	}
	if set("version") || set("version_match") || set("version_module") {
		if !set("version") {
			spec.Version = versionField{Args: argvOfTemplates(p.version.Args), Text: p.version.Text}
		}
		if p.version, err = parseVersion(l, spec); err != nil {
			return Profile{}, err
		}
	}
	if p.version.Text == "" && len(p.version.Args) == 0 && p.version.Module == "" {
		return Profile{}, l.errorf("version", `version is missing: give the argv that prints it, e.g. ["{{.Binary}}", "-v"], or a fixed string`)
	}
	if set("command") {
		if len(spec.Command) == 0 || spec.Command[0] != "{{.Binary}}" {
			return Profile{}, l.errorf("command", `command must start with "{{.Binary}}": the binary the lab checks, records and runs`)
		}
		p.command = nil
		for i, a := range spec.Command {
			t, err := parseArg(l, "command", i, a, reflect.TypeFor[Data]())
			if err != nil {
				return Profile{}, err
			}
			p.command = append(p.command, t)
		}
	}
	if len(p.command) == 0 {
		return Profile{}, l.errorf("command", `command is missing: give the argv that runs the server in the foreground, e.g. ["{{.Binary}}", "-c", "{{.Dir}}/my.conf"]`)
	}
	if set("files") {
		names := make([]string, 0, len(spec.Files))
		for name := range spec.Files {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			cf, err := loadTemplate(src, l, file, name, spec.Files[name])
			if err != nil {
				return Profile{}, err
			}
			p.files = slices.DeleteFunc(p.files, func(f configFile) bool { return f.Name == name })
			p.files = append(p.files, cf)
		}
		slices.SortFunc(p.files, func(a, b configFile) int { return strings.Compare(a.Name, b.Name) })
	}
	if err := p.trial(); err != nil {
		return Profile{}, fmt.Errorf("%s: %v", file, err)
	}
	return p, nil
}

// choice is a field's value among choices, the first when it is empty; an
// error at the field's line names them (hint) otherwise.
func choice(l *fileLines, field, v, hint string, choices ...string) (string, error) {
	if v == "" {
		return choices[0], nil
	}
	if slices.Contains(choices, v) {
		return v, nil
	}
	return "", l.errorf(field, "%s %q: use %s", field, v, hint)
}

// parentOf is the profile named by extends: a file relative to file, or a
// profile of s.
func parentOf(src source, file, ref string, s *Set, depth int) (Profile, error) {
	if IsFile(ref) {
		if _, builtin := src.(embedSource); builtin {
			return Profile{}, fmt.Errorf("a built-in extends built-ins only")
		}
		return loadProfile(src, src.join(src.dir(file), ref), s, depth+1)
	}
	return s.Get(ref)
}

// parseVersion checks the version fields.
func parseVersion(l *fileLines, spec fileSpec) (versionSpec, error) {
	var v versionSpec
	switch {
	case spec.Version.Text != "" && len(spec.Version.Args) > 0:
		return v, l.errorf("version", "version is an argv list or a fixed string, not both")
	case spec.Version.Text != "":
		v.Text = strings.TrimSpace(spec.Version.Text)
	default:
		if len(spec.Version.Args) > 0 && spec.Version.Args[0] != "{{.Binary}}" {
			return v, l.errorf("version", `version must start with "{{.Binary}}" (or be a fixed string)`)
		}
		for i, a := range spec.Version.Args {
			t, err := parseArg(l, "version", i, a, reflect.TypeFor[versionData]())
			if err != nil {
				return v, err
			}
			v.Args = append(v.Args, t)
		}
	}
	if spec.VersionMatch != "" {
		re, err := regexp.Compile(spec.VersionMatch)
		if err != nil {
			return v, l.errorf("version_match", "version_match: %v", err)
		}
		v.Match = re
	}
	v.Module = strings.TrimSpace(spec.VersionModule)
	return v, nil
}

// argvOfTemplates gives back the source of parsed argv templates.
func argvOfTemplates(ts []*template.Template) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Root.String())
	}
	return out
}

// parseArg parses one argv element as a template over data of type typ.
func parseArg(l *fileLines, field string, i int, text string, typ reflect.Type) (*template.Template, error) {
	line := l.itemLine(field, i)
	name := fmt.Sprintf("%s:%d: %s[%d]", l.file, line, field, i)
	t, err := template.New(name).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s", argError(err, name))
	}
	if err := checkParams(t, typ); err != nil {
		return nil, fmt.Errorf("%s", argError(err, name))
	}
	return t, nil
}

// argError says an argv element's template error once: "FILE:LINE:
// command[2]: unknown parameter .Foo", without the template's own
// position inside the element.
func argError(err error, name string) string {
	s := trimTemplateErr(err)
	if rest, ok := strings.CutPrefix(s, name); ok {
		rest = strings.TrimLeft(rest, ":0123456789")
		return name + ":" + rest
	}
	return name + ": " + s
}

// loadTemplate reads and checks one files entry.
func loadTemplate(src source, l *fileLines, file, name string, fs fileSource) (configFile, error) {
	if !filepath.IsLocal(name) || name != filepath.Clean(name) {
		return configFile{}, fmt.Errorf("%s:%d: files: %q must be a plain path inside the run directory", file, fs.Line, name)
	}
	cf := configFile{Name: name}
	if fs.Content != nil {
		cf.Source = fmt.Sprintf("%s (files.%s)", file, name)
		cf.Text = []byte(*fs.Content)
	} else {
		if strings.TrimSpace(fs.Path) == "" {
			return configFile{}, fmt.Errorf("%s:%d: files.%s: give a template path or {content: \"...\"}", file, fs.Line, name)
		}
		cf.Source = src.join(src.dir(file), fs.Path)
		b, err := src.read(cf.Source)
		if err != nil {
			return configFile{}, fmt.Errorf("%s:%d: files.%s: the template cannot be read: %v", file, fs.Line, name, err)
		}
		cf.Text = b
	}
	t, err := template.New(cf.Source).Option("missingkey=error").Parse(string(cf.Text))
	if err != nil {
		return configFile{}, fmt.Errorf("%s", trimTemplateErr(err))
	}
	if err := checkParams(t, reflect.TypeFor[Data]()); err != nil {
		return configFile{}, err
	}
	cf.tmpl = t
	return cf, nil
}

// trial renders the profile's files and command once with sample
// parameters of its role, so a template that cannot run fails at load.
func (p Profile) trial() error {
	prm := Params{
		Binary: "/usr/sbin/" + p.Proxy, Dir: "/run/loadlab/" + p.Name, ListenHost: "127.0.0.1", HTTPPort: 40080, HTTPSPort: 40443,
		BackendHost: "127.0.0.1", BackendPort: 40900,
		CertFile: "/run/loadlab/fullchain.pem", KeyFile: "/run/loadlab/key.pem", CombinedPEM: "/run/loadlab/combined.pem",
		CAFile: "/run/loadlab/ca.pem", KeyType: "p256", ServerName: "bench.lab", Workers: 1, User: "loadlab",
	}
	if p.IsOrigin() {
		prm.Root = prm.Dir + "/www"
	}
	d, err := p.data(prm)
	if err != nil {
		return err
	}
	if _, err := p.render(d); err != nil {
		return err
	}
	_, err = p.argv(d)
	return err
}

// validProfileName reports a name of letters, digits, '-', '_' and '.'.
func validProfileName(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for _, r := range s {
		ok := r == '.' || r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// fileLines finds where fields are in a profile file, for errors.
type fileLines struct {
	file string
	doc  *yaml.Node
}

// key returns the value node of a top-level key, or nil.
func (l *fileLines) key(name string) (k, v *yaml.Node) {
	n := l.doc
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == name {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

func (l *fileLines) has(name string) bool {
	k, _ := l.key(name)
	return k != nil
}

// line is the line of a top-level key (1 when absent).
func (l *fileLines) line(name string) int {
	if k, _ := l.key(name); k != nil {
		return k.Line
	}
	return 1
}

// itemLine is the line of item i of a top-level list.
func (l *fileLines) itemLine(name string, i int) int {
	if _, v := l.key(name); v != nil && v.Kind == yaml.SequenceNode && i < len(v.Content) {
		return v.Content[i].Line
	}
	return l.line(name)
}

// errorf is an error at field's line: "FILE:LINE: message".
func (l *fileLines) errorf(field, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", l.file, l.line(field), fmt.Sprintf(format, args...))
}

// yamlLineRe finds "line N: " in yaml's errors.
var yamlLineRe = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// unknownFieldRe is yaml's message for a field the type lacks.
var unknownFieldRe = regexp.MustCompile(`^field (\S+) not found in type \S+$`)

// yamlError turns a yaml error into one line, "FILE:LINE: what", for the
// first problem it names.
func yamlError(file string, err error) error {
	msgs := []string{err.Error()}
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msgs = te.Errors
	}
	m := strings.TrimSpace(msgs[0])
	line := 1
	if sm := yamlLineRe.FindStringSubmatch(m); sm != nil {
		line, _ = strconv.Atoi(sm[1])
		m = sm[2]
	}
	m = strings.TrimPrefix(m, "yaml: ")
	if sm := unknownFieldRe.FindStringSubmatch(m); sm != nil {
		m = fmt.Sprintf("unknown field %s: a profile file has %s", sm[1], strings.Join(specFields(), ", "))
	}
	return fmt.Errorf("%s:%d: %s", file, line, strings.ReplaceAll(m, "\n", "; "))
}

// specFields lists a profile file's fields.
func specFields() []string {
	var out []string
	t := reflect.TypeFor[fileSpec]()
	for i := range t.NumField() {
		out = append(out, strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0])
	}
	return out
}

// nameLine is the line of a profile file's name field.
func nameLine(p Profile) int {
	var doc yaml.Node
	if yaml.Unmarshal(p.Source.Text, &doc) != nil {
		return 1
	}
	return (&fileLines{doc: &doc}).line("name")
}

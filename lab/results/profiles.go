package results

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// ProfileRecord is what ran for one profile: the profile file it came
// from, the binary that served, and the config it rendered (copied under
// the run directory). Two runs whose records of a profile match ran the
// same file, binary and templates.
type ProfileRecord struct {
	Name        string `json:"name"`
	Proxy       string `json:"proxy"` // the server software (the file's server)
	Role        string `json:"role"`
	Description string `json:"description,omitempty"`
	// FixedBody is what an origin that serves no file answers for every
	// path (caddy-respond); "" for the others.
	FixedBody string `json:"fixed_body,omitempty"`
	// File is the profile file as it was named ("" for a built-in),
	// SHA256 its SHA-256 (with extends, over the file and the SHA-256 of
	// the profile it extends), Extends the profile it starts from.
	File    string `json:"file,omitempty"`
	Builtin bool   `json:"builtin,omitempty"`
	Extends string `json:"extends,omitempty"`
	SHA256  string `json:"sha256"`
	// ConfigSHA256 identifies the config templates (their names and
	// texts); the rendered files differ from run to run by ports and
	// paths only.
	ConfigSHA256 string `json:"config_sha256"`
	// The binary that served: its path, version and SHA-256.
	Binary       string `json:"binary"`
	Version      string `json:"version"`
	BinarySHA256 string `json:"binary_sha256"`
	// Configs are the rendered config files of the profile's first start,
	// copied under the run directory.
	Configs []ConfigCopy `json:"configs,omitempty"`
}

// ServesFiles reports whether the profile answered the lab's paths with
// their bytes (no fixed body).
func (r *ProfileRecord) ServesFiles() bool { return r.FixedBody == "" }

// ConfigCopy is one rendered config file copied under the run directory.
type ConfigCopy struct {
	Path   string `json:"path"` // relative to the run directory: configs/PROFILE/FILE
	SHA256 string `json:"sha256"`
}

// ConfigDir is where a profile's rendered configs are copied, relative to
// the run directory.
func ConfigDir(profile string) string { return "configs/" + profile }

// Profile returns the record of profile name, or nil.
func (f *File) Profile(name string) *ProfileRecord {
	for i := range f.Profiles {
		if f.Profiles[i].Name == name {
			return &f.Profiles[i]
		}
	}
	return nil
}

// FileSHA256 is the SHA-256 of the file at path, hex.
func FileSHA256(path string) (string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return "", fmt.Errorf("%s: %v", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Identity is what a run must share with the results it resumes: the
// host, the loadlab binary, and each profile's file, templates and
// binary.
type Identity struct {
	Host          string
	LoadlabSHA256 string
	Profiles      []ProfileRecord
}

// short is the first 12 hex digits of a SHA-256.
func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// Changed says in one line what differs between the run recorded in f and
// id, for a resume: "" when nothing does. Only what both recorded is
// compared (results of older versions lack some of it).
func (f *File) Changed(id Identity) string {
	if h := f.Machine.Hostname; h != "" && id.Host != "" && h != id.Host {
		return fmt.Sprintf("the run was made on host %s, this is %s", h, id.Host)
	}
	if was := f.LoadlabSHA256; was != "" && id.LoadlabSHA256 != "" && was != id.LoadlabSHA256 {
		return fmt.Sprintf("the loadlab binary changed (SHA-256 %s, now %s)", short(was), short(id.LoadlabSHA256))
	}
	for _, now := range id.Profiles {
		was := f.Profile(now.Name)
		if was == nil {
			continue
		}
		where := "built-in"
		if now.File != "" {
			where = now.File
		}
		switch {
		case was.SHA256 != now.SHA256:
			return fmt.Sprintf("profile %s's file %s changed (SHA-256 %s, now %s)", now.Name, where, short(was.SHA256), short(now.SHA256))
		case was.ConfigSHA256 != now.ConfigSHA256:
			return fmt.Sprintf("profile %s's config templates changed (SHA-256 %s, now %s)", now.Name, short(was.ConfigSHA256), short(now.ConfigSHA256))
		case was.BinarySHA256 != "" && now.BinarySHA256 != "" && was.BinarySHA256 != now.BinarySHA256:
			return fmt.Sprintf("profile %s's binary changed: %s (SHA-256 %s), now %s (SHA-256 %s)", now.Name, was.Binary, short(was.BinarySHA256), now.Binary, short(now.BinarySHA256))
		}
	}
	return ""
}

// Record puts id's profile records into f: new ones added, known ones
// keep the configs copied already.
func (f *File) Record(id Identity) {
	if id.LoadlabSHA256 != "" {
		f.LoadlabSHA256 = id.LoadlabSHA256
	}
	for _, r := range id.Profiles {
		if was := f.Profile(r.Name); was != nil {
			r.Configs = was.Configs
			*was = r
			continue
		}
		f.Profiles = append(f.Profiles, r)
	}
}

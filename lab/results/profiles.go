package results

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

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

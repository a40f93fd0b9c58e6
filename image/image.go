// Package image builds the container image that Kubernetes runs a sharded
// load test from (package k8s): one layer holding a static loadlab binary
// at /loadlab, on no base image at all, written offline as an archive that
// container tools load. It needs no container engine; nothing here pushes
// or runs an image. It is a leaf package, imported by cmd alone.
//
// Imports: image is a leaf imported only by cmd/loadlab; it imports no other
// loadlab package.
package image

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Path is where the binary is in the image (the Job's command).
const Path = "/loadlab"

// User is the numeric user and group the image runs as: the image has no
// /etc/passwd, and loadlab gen needs no privilege.
const User = "65532:65532"

// Options describes the image.
type Options struct {
	Binary string // path of a static (CGO_ENABLED=0) loadlab binary for Linux
	// Path is where the binary goes in the image, its entrypoint; ""
	// gives Path (/loadlab, the Job's command). Another path makes
	// another program's image, such as the pod sandbox ("pause") image
	// of scripts/k8s-up.sh.
	Path string
	// Tag names the image in the archive, e.g. "loadlab:dev" or
	// "registry.example/loadlab:v1" (docker load, ctr import and
	// skopeo use it).
	Tag string
	// Created is the image's creation time; zero gives the Unix epoch, so
	// that one binary always gives the same image digest.
	Created time.Time
}

// CheckStatic reports whether path is a Linux ELF executable that needs
// no dynamic loader or shared library, and returns its GOARCH.
func CheckStatic(path string) (arch string, err error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s is not an ELF executable for Linux: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("%s is dynamically linked (it needs a loader): build it with CGO_ENABLED=0", path)
		}
	}
	if libs, err := f.ImportedLibraries(); err == nil && len(libs) > 0 {
		return "", fmt.Errorf("%s needs shared libraries (%s): build it with CGO_ENABLED=0", path, strings.Join(libs, ", "))
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return "", fmt.Errorf("%s is not an executable (ELF type %v)", path, f.Type)
	}
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	case elf.EM_386:
		return "386", nil
	case elf.EM_ARM:
		return "arm", nil
	case elf.EM_RISCV:
		return "riscv64", nil
	case elf.EM_S390:
		return "s390x", nil
	case elf.EM_PPC64:
		if f.ByteOrder.String() == "LittleEndian" {
			return "ppc64le", nil
		}
		return "ppc64", nil
	}
	return "", fmt.Errorf("%s is for %v, an architecture this image builder does not know", path, f.Machine)
}

// Build returns the image: the empty base, one layer with the binary at
// o.Path (default Path; mode 0755, owned by root), that path as the
// entrypoint, user User, OCI media types, and the binary's module version
// and VCS revision as labels.
func Build(o Options) (v1.Image, error) {
	at := o.Path
	if at == "" {
		at = Path
	}
	if !strings.HasPrefix(at, "/") || at == "/" || strings.HasSuffix(at, "/") || filepath.Clean(at) != at {
		return nil, fmt.Errorf("path in the image %q: give an absolute file path such as %s", at, Path)
	}
	arch, err := CheckStatic(o.Binary)
	if err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, err
	}
	created := o.Created
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	created = created.UTC()
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	if err := tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(at, "/"), Mode: 0o755, Size: int64(len(bin)),
		ModTime: created, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layerBytes := layerTar.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("image layer: %w", err)
	}
	img, err := mutate.Append(empty.Image, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: created}, CreatedBy: "loadlab k8s image", Comment: "static binary at " + at},
	})
	if err != nil {
		return nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", arch
	cfg.Created = v1.Time{Time: created}
	cfg.Config.Entrypoint = []string{at}
	cfg.Config.Cmd = nil
	cfg.Config.User = User
	cfg.Config.Labels = map[string]string{"org.opencontainers.image.title": filepath.Base(at)}
	if bi, err := buildinfo.ReadFile(o.Binary); err == nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			cfg.Config.Labels["org.opencontainers.image.version"] = v
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				cfg.Config.Labels["org.opencontainers.image.revision"] = s.Value
			}
		}
	}
	return mutate.ConfigFile(img, cfg)
}

// CheckTag reports whether tag is an image reference with a tag
// ("loadlab:dev", "registry.example/team/loadlab:v1"; no tag means latest).
func CheckTag(tag string) error {
	if _, err := name.NewTag(tag); err != nil {
		return fmt.Errorf("tag %q: %w", tag, err)
	}
	return nil
}

// ContainerdName is the name containerd gives ref, the one its CRI (the
// kubelet's runtime) looks an image up by: Docker Hub's names written out
// in full as docker.io/library/NAME:TAG (go-containerregistry's own
// ref.Name() says index.docker.io, a name under which `ctr images import`
// would store an image the kubelet then never finds), others as given.
func ContainerdName(ref name.Tag) string {
	reg := ref.RegistryStr()
	if reg == name.DefaultRegistry {
		reg = "docker.io"
	}
	return reg + "/" + ref.RepositoryStr() + ":" + ref.TagStr()
}

// Write writes img as one tar archive that is at once an OCI image layout
// (oci-layout, index.json, blobs/sha256/...: skopeo oci-archive:, podman
// load, ctr import, docker load since Docker 25) and a docker-archive
// (manifest.json naming the same blobs: older docker load, kind load
// image-archive), the way docker save writes since Docker 25. tag names
// the image in both.
func Write(path string, img v1.Image, tag string) error {
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("tag %q: %w", tag, err)
	}
	rawManifest, err := img.RawManifest()
	if err != nil {
		return err
	}
	manifest, err := img.Manifest()
	if err != nil {
		return err
	}
	rawConfig, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	mt, err := img.MediaType()
	if err != nil {
		return err
	}
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	blob := func(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

	index := v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: mt, Digest: digest, Size: int64(len(rawManifest)),
			Annotations: map[string]string{
				"org.opencontainers.image.ref.name": ref.TagStr(),
				"io.containerd.image.name":          ContainerdName(ref),
			},
		}},
	}
	rawIndex, err := json.Marshal(index)
	if err != nil {
		return err
	}
	type dockerEntry struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	docker := []dockerEntry{{Config: blob(manifest.Config.Digest), RepoTags: []string{ref.String()}}}
	for _, l := range manifest.Layers {
		docker[0].Layers = append(docker[0].Layers, blob(l.Digest))
	}
	rawDocker, err := json.Marshal(docker)
	if err != nil {
		return err
	}

	tmp, err := os.CreateTemp(filepath.Dir(path), ".loadlab-image-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	tw := tar.NewWriter(tmp)
	add := func(name string, r io.Reader, size int64) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: size, ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		n, err := io.Copy(tw, r)
		if err == nil && n != size {
			err = fmt.Errorf("%s: wrote %d of %d bytes", name, n, size)
		}
		return err
	}
	addBytes := func(name string, b []byte) error { return add(name, bytes.NewReader(b), int64(len(b))) }
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Name: d, Mode: 0o755, ModTime: time.Unix(0, 0), Typeflag: tar.TypeDir}); err != nil {
			return err
		}
	}
	err = errors.Join(
		addBytes("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)),
		addBytes("index.json", rawIndex),
		addBytes("manifest.json", rawDocker),
		addBytes(blob(digest), rawManifest),
		addBytes(blob(manifest.Config.Digest), rawConfig),
	)
	for _, l := range layers {
		if err != nil {
			break
		}
		var d v1.Hash
		var size int64
		var rc io.ReadCloser
		if d, err = l.Digest(); err != nil {
			break
		}
		if size, err = l.Size(); err != nil {
			break
		}
		if rc, err = l.Compressed(); err != nil {
			break
		}
		err = add(blob(d), rc, size)
		rc.Close()
	}
	if err == nil {
		err = tw.Close()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

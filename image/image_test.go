package image

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// staticProgram builds a small Go program with CGO off: a static binary.
func staticProgram(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport \"net\"\n\nfunc main() { _, _ = net.LookupHost(\"localhost\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "prog")
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false", "GO111MODULE=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestCheckStatic(t *testing.T) {
	arch, err := CheckStatic(staticProgram(t))
	if err != nil || arch != runtime.GOARCH {
		t.Fatalf("static Go program: %q, %v", arch, err)
	}
	// /bin/sh on Debian is dynamically linked.
	if _, err := CheckStatic("/bin/sh"); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Fatalf("/bin/sh: %v, want a dynamically-linked error", err)
	}
	text := filepath.Join(t.TempDir(), "x")
	os.WriteFile(text, []byte("#!/bin/sh\n"), 0o755)
	if _, err := CheckStatic(text); err == nil || !strings.Contains(err.Error(), "not an ELF") {
		t.Fatalf("script: %v", err)
	}
}

// ReadBack checks an archive written by Write with go-containerregistry's
// own readers, both as an OCI layout and as a docker-archive, and returns
// the binary the image holds.
func ReadBack(t *testing.T, archive, tag string) []byte {
	t.Helper()
	dir := t.TempDir()
	untar(t, archive, dir)
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("OCI layout: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != strings.SplitN(tag, ":", 2)[1] {
		t.Fatalf("index %+v", im)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate.Image(img); err != nil {
		t.Fatalf("OCI image does not validate: %v", err)
	}
	ref, _ := name.NewTag(tag)
	dimg, err := tarball.ImageFromPath(archive, &ref)
	if err != nil {
		t.Fatalf("docker-archive: %v", err)
	}
	if err := validate.Image(dimg); err != nil {
		t.Fatalf("docker-archive image does not validate: %v", err)
	}
	c1, _ := img.ConfigName()
	c2, _ := dimg.ConfigName()
	if c1 != c2 {
		t.Fatalf("OCI config %v, docker-archive config %v", c1, c2)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH || len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != Path || cfg.Config.User != User {
		t.Fatalf("config %+v", cfg)
	}
	return binaryIn(t, img, Path)
}

// binaryIn returns the file at path in the image's only layer, which
// holds that file only, root's and mode 0755.
func binaryIn(t *testing.T, img v1.Image, path string) []byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers, %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var bin []byte
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if "/"+h.Name != path || h.Mode != 0o755 || h.Uid != 0 {
			t.Fatalf("layer entry %s mode %o uid %d", h.Name, h.Mode, h.Uid)
		}
		bin, _ = io.ReadAll(tr)
	}
	return bin
}

func untar(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, h.Name)
		if h.Typeflag == tar.TypeDir {
			os.MkdirAll(p, 0o755)
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		b, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBuildWriteReadBack(t *testing.T) {
	bin := staticProgram(t)
	img, err := Build(Options{Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "img.tar")
	if err := Write(archive, img, "registry.example/loadlab:v1"); err != nil {
		t.Fatal(err)
	}
	got := ReadBack(t, archive, "registry.example/loadlab:v1")
	want, _ := os.ReadFile(bin)
	if !bytes.Equal(got, want) {
		t.Fatalf("the image holds %d bytes at %s, the binary has %d", len(got), Path, len(want))
	}
	// Reproducible: the same binary gives the same image.
	again, err := Build(Options{Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Fatalf("two builds of one binary: %v and %v", d1, d2)
	}
	if _, err := Build(Options{Binary: "/bin/sh"}); err == nil {
		t.Fatal("built an image around a dynamically linked binary")
	}
	if err := Write(archive, img, "Not A Tag!"); err == nil {
		t.Fatal("wrote an archive with a bad tag")
	}
}

// TestLoadlabImage builds loadlab itself as `make image` does (CGO off),
// checks that it is static, runs its `k8s image` command, reads the
// archive back and runs the binary taken out of the image. It leaves out
// make image's -trimpath: that only rewrites file names in the binary, and
// it changes every package's build key, so the test would compile the
// whole tree and the standard library again (about 75 s of make test's
// CPU on 2 cores) instead of only the packages CGO_ENABLED=0 changes.
func TestLoadlabImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "loadlab")
	build := exec.Command("go", "build", "-o", bin, "../cmd/loadlab")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if _, err := CheckStatic(bin); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "loadlab-image.tar")
	if out, err := exec.Command(bin, "k8s", "image", "-o", archive, "--tag", "registry.example/loadlab:test").CombinedOutput(); err != nil {
		t.Fatalf("loadlab k8s image: %v\n%s", err, out)
	}
	got := ReadBack(t, archive, "registry.example/loadlab:test")
	want, _ := os.ReadFile(bin)
	if !bytes.Equal(got, want) {
		t.Fatalf("the image holds %d bytes, the binary has %d", len(got), len(want))
	}
	extracted := filepath.Join(dir, "from-image")
	if err := os.WriteFile(extracted, got, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(extracted, "gen", "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--rate") {
		t.Fatalf("the image's binary does not run: %v\n%s", err, out)
	}
	// A dynamically linked binary is refused with what to do.
	out, err = exec.Command(bin, "k8s", "image", "--binary", "/bin/sh", "-o", filepath.Join(dir, "x.tar")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "CGO_ENABLED=0") {
		t.Fatalf("dynamic binary: %v\n%s", err, out)
	}
}

// TestContainerdName: the name `ctr images import` stores an image under
// must be the one containerd's CRI looks the Job's image up by, or the
// kubelet tries to pull it (and fails without a registry).
func TestContainerdName(t *testing.T) {
	for tag, want := range map[string]string{
		"loadlab:dev":                     "docker.io/library/loadlab:dev",
		"team/loadlab:v1":                 "docker.io/team/loadlab:v1",
		"docker.io/library/loadlab:v1":    "docker.io/library/loadlab:v1",
		"index.docker.io/team/loadlab:v1": "docker.io/team/loadlab:v1",
		"registry.example/loadlab:v1":     "registry.example/loadlab:v1",
		"localhost/loadlab/pause:v1":      "localhost/loadlab/pause:v1",
		"127.0.0.1:5000/loadlab:v1":       "127.0.0.1:5000/loadlab:v1",
		"loadlab":                         "docker.io/library/loadlab:latest",
	} {
		ref, err := name.NewTag(tag)
		if err != nil {
			t.Fatal(err)
		}
		if got := ContainerdName(ref); got != want {
			t.Errorf("%s: %s, want %s", tag, got, want)
		}
	}
	img, err := Build(Options{Binary: staticProgram(t)})
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(t.TempDir(), "img.tar")
	if err := Write(archive, img, "loadlab:dev"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	untar(t, archive, dir)
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if got := im.Manifests[0].Annotations["io.containerd.image.name"]; got != "docker.io/library/loadlab:dev" {
		t.Fatalf("io.containerd.image.name %q, want docker.io/library/loadlab:dev", got)
	}
}

// TestBuildPath: another path gives another program's image (the
// cluster's pause image): the file, the entrypoint and the title follow.
func TestBuildPath(t *testing.T) {
	bin := staticProgram(t)
	img, err := Build(Options{Binary: bin, Path: "/pause"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/pause" || cfg.Config.Labels["org.opencontainers.image.title"] != "pause" {
		t.Fatalf("entrypoint %q, labels %v", cfg.Config.Entrypoint, cfg.Config.Labels)
	}
	want, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if got := binaryIn(t, img, "/pause"); !bytes.Equal(got, want) {
		t.Fatalf("/pause in the layer: %d bytes, want the program's %d", len(got), len(want))
	}
	for _, bad := range []string{"pause", "/", "/a/", "/a/../b", "/a//b"} {
		if _, err := Build(Options{Binary: bin, Path: bad}); err == nil || !strings.Contains(err.Error(), "absolute file path") {
			t.Errorf("path %q: %v", bad, err)
		}
	}
}

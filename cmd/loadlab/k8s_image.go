package main

import (
	"fmt"
	"os"

	"github.com/loadlab/loadlab/image"
	"github.com/spf13/cobra"
)

type k8sImageFlags struct {
	binary, out, tag, path string
}

func newK8sImageCmd() *cobra.Command {
	f := &k8sImageFlags{}
	cmd := &cobra.Command{
		Use:   "image [-o FILE] [--tag TAG] [--binary PATH]",
		Short: "Write the container image the Job runs: a static loadlab binary on an empty base, as an OCI archive",
		Long: `image writes a container image holding a static loadlab binary at /loadlab
(entrypoint /loadlab, user 65532, no base image), built offline: no container
engine is needed or used. The archive is an OCI image layout and a
docker-archive at once, so every common tool loads it:

  skopeo copy oci-archive:loadlab-image.tar docker://registry.example/loadlab:v1
  docker load -i loadlab-image.tar          (or podman load)
  kind load image-archive loadlab-image.tar
  ctr -n k8s.io images import loadlab-image.tar

The binary must be static: build it with CGO_ENABLED=0 (make image does).
By default the image holds the running loadlab itself. --binary and --path
put another static program in an image of its own (scripts/k8s-up.sh writes
its cluster's pod sandbox image so).`,
		Example: `  CGO_ENABLED=0 go build -trimpath -o bin/loadlab-static ./cmd/loadlab
  bin/loadlab-static k8s image -o bin/loadlab-image.tar --tag registry.example/loadlab:v1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usagef("image takes no arguments (got %d)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runK8sImage(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.binary, "binary", "", "static loadlab binary to put in the image (default: this loadlab)")
	fl.StringVarP(&f.out, "output", "o", "loadlab-image.tar", "archive to write")
	fl.StringVar(&f.tag, "tag", "loadlab:dev", "image name and tag recorded in the archive")
	fl.StringVar(&f.path, "path", image.Path, "where the binary goes in the image, its entrypoint (the Job runs "+image.Path+")")
	return cmd
}

func runK8sImage(cmd *cobra.Command, f *k8sImageFlags) error {
	bin := f.binary
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find this loadlab binary: %v (give --binary)", err)
		}
		bin = exe
	}
	if err := image.CheckTag(f.tag); err != nil {
		return usageError{err}
	}
	if err := checkWritable(f.out); err != nil {
		return usagef("--output: %v", err)
	}
	img, err := image.Build(image.Options{Binary: bin, Path: f.path})
	if err != nil {
		return usageError{err}
	}
	if err := image.Write(f.out, img, f.tag); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: image %s (%s), %s from %s\n", f.out, f.tag, d, f.path, bin)
	return nil
}

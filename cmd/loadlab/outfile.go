package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// outFile is an output file (--json, --hdr-log) that is created on its
// first write. A run that fails before it starts (bad --ca, nothing
// listening) thus leaves no empty file behind and does not truncate the
// result of an earlier run.
type outFile struct {
	path string
	f    *os.File
	err  error
}

// Write creates the file on the first call.
func (o *outFile) Write(b []byte) (int, error) {
	if o.f == nil && o.err == nil {
		o.f, o.err = os.Create(o.path)
	}
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.f.Write(b)
	if err != nil && o.err == nil {
		o.err = err
	}
	return n, err
}

// Close closes the file if it was created and returns the first error of
// any write or of the close.
func (o *outFile) Close() error {
	if o.f != nil {
		if err := o.f.Close(); err != nil && o.err == nil {
			o.err = err
		}
		o.f = nil
	}
	return o.err
}

// openOut checks that path can be written and returns a writer for it
// that creates it on the first write; "-" is stdout and "" gives nil. The
// close function reports write errors.
func openOut(path string, stdout io.Writer) (io.Writer, func() error, error) {
	switch path {
	case "":
		return nil, func() error { return nil }, nil
	case "-":
		return stdout, func() error { return nil }, nil
	}
	if err := checkWritable(path); err != nil {
		return nil, nil, err
	}
	o := &outFile{path: path}
	return o, o.Close, nil
}

// checkWritable reports why path cannot be created or overwritten.
func checkWritable(path string) error {
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return fmt.Errorf("%s is a directory: give a file name", path)
		}
		if err := unix.Access(path, unix.W_OK); err != nil {
			return fmt.Errorf("cannot write %s: %v", path, err)
		}
		return nil
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("directory %s does not exist: create it or choose another path", dir)
	case err != nil:
		return fmt.Errorf("cannot use directory %s: %v", dir, err)
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return fmt.Errorf("cannot create files in %s: %v", dir, err)
	}
	return nil
}

// writeJSON writes v as indented JSON to w (from openOut) and closes it,
// the way every --json output is written.
func writeJSON(w io.Writer, closeW func() error, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON result: %v", err)
	}
	if err := closeW(); err != nil {
		return fmt.Errorf("write JSON result: %v", err)
	}
	return nil
}

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

	"github.com/loadlab/loadlab/internal/atomicfile"
)

// outFile is an output file (--json, --hdr-log) written atomically: its
// bytes go to a temporary file beside it, created on the first write,
// which Close renames over the path once they are all written and synced
// (internal/atomicfile). A run that fails before it starts (bad --ca,
// nothing listening) thus leaves no file behind, and a write that fails
// or a process killed midway leaves the result of an earlier run whole.
type outFile struct {
	path string
	f    *atomicfile.File
	err  error
}

// Write creates the temporary file on the first call.
func (o *outFile) Write(b []byte) (int, error) {
	if o.f == nil && o.err == nil {
		o.f, o.err = atomicfile.Create(o.path)
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

// Close puts the file in place if it was written and returns the first
// error of any write or of the commit; after an error the path keeps what
// it held.
func (o *outFile) Close() error {
	if o.f != nil {
		if o.err != nil {
			o.f.Abort()
		} else {
			o.err = o.f.Commit()
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

// checkWritable reports why path cannot be created or replaced (by a
// rename in its directory).
func checkWritable(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory: give a file name", path)
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

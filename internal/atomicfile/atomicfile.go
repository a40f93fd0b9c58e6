// Package atomicfile writes a file so that its readers see the old content
// or the whole new one, never a part: the bytes go to a temporary file in
// the same directory, which is synced, renamed over the path, and the
// directory synced. A write that fails, or a process that dies midway,
// leaves the old file as it was (and at worst a hidden temporary file).
//
// Imports: a leaf of internal/; it imports no other loadlab package.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File is a file being written; Commit puts it in place.
type File struct {
	path string
	f    *os.File
	err  error // the first write error
}

// Create starts a new content for path: a temporary file beside it,
// ".NAME.RANDOM.tmp", with the mode a new file would get (0666 less the
// umask).
func Create(path string) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	var b [6]byte
	for range 10 {
		rand.Read(b[:])
		tmp := filepath.Join(dir, "."+base+"."+hex.EncodeToString(b[:])+".tmp")
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		return &File{path: path, f: f}, nil
	}
	return nil, fmt.Errorf("write %s: no free temporary name in %s", path, dir)
}

// Write writes to the temporary file. The first error sticks: Commit
// returns it and leaves path as it was.
func (a *File) Write(b []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	n, err := a.f.Write(b)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the temporary file's name says nothing useful
		}
		a.err = fmt.Errorf("write %s: %w", a.path, err)
	}
	return n, a.err
}

// Commit syncs the new content, renames it over path and syncs the
// directory, so that the rename outlives a crash. After a write error, or
// if any step fails, it removes the temporary file, leaves path as it was
// and returns the error.
func (a *File) Commit() error {
	err := a.err
	if err == nil {
		if err = a.f.Sync(); err != nil {
			err = fmt.Errorf("write %s: %w", a.path, err)
		}
	}
	if cerr := a.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("write %s: %w", a.path, cerr)
	}
	if err == nil {
		if err = os.Rename(a.f.Name(), a.path); err != nil {
			err = fmt.Errorf("write %s: %w", a.path, err)
		}
	}
	if err != nil {
		os.Remove(a.f.Name())
		return err
	}
	return syncDir(filepath.Dir(a.path))
}

// syncDir is SyncDir, a variable for the test that sees it run after the
// rename.
var syncDir = SyncDir

// Abort drops the new content: path stays as it was.
func (a *File) Abort() {
	a.f.Close()
	os.Remove(a.f.Name())
}

// WriteFile writes data to path atomically, with permissions perm.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	a, err := Create(path)
	if err != nil {
		return err
	}
	if err := a.f.Chmod(perm); err != nil {
		a.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	a.Write(data) //nolint:errcheck // the first error sticks: Commit returns it
	return a.Commit()
}

// SyncDir syncs directory dir, so that the entries just created or
// renamed in it survive a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

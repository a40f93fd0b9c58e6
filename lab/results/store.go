package results

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/loadlab/loadlab/internal/atomicfile"
	"github.com/loadlab/loadlab/lab/plan"
	"golang.org/x/sys/unix"
)

// Hash identifies a plan and the run options for resuming: the same hash
// means the recorded steps were made by the same settings.
func Hash(p *plan.Plan, o RunOptions) string {
	type hashed struct {
		Plan    plan.Plan  `json:"plan"`
		Options RunOptions `json:"options"`
	}
	q := *p
	q.Notes = nil // notes say what happened, not what was asked
	q.Seeds = nil // citations of the seeds: what the report sets the results beside, not how they are measured
	b, err := json.Marshal(hashed{q, o})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// Load reads DIR/results.json.
func Load(dir string) (*File, error) {
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no %s in %s: run `loadlab lab run --out %s` first", FileName, dir, dir)
		}
		return nil, err
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: not a loadlab results file (%v)", filepath.Join(dir, FileName), err)
	}
	if f.Version != Version {
		return nil, fmt.Errorf("%s has format version %d; this loadlab reads version %d", filepath.Join(dir, FileName), f.Version, Version)
	}
	if f.Plan == nil {
		return nil, fmt.Errorf("%s has no plan: not a loadlab results file", filepath.Join(dir, FileName))
	}
	return &f, nil
}

// Store owns DIR/results.json during a run: it holds an exclusive lock on
// DIR/.lock and writes the file atomically on every Save.
type Store struct {
	dir  string
	lock *os.File
	mu   sync.Mutex
	F    *File
}

// Open locks dir (creating it) and loads its results.json, or starts a new
// file for plan p. An existing file made by another plan or other options
// is an error (resuming would mix them). resumed reports an existing file.
func Open(dir string, p *plan.Plan, o RunOptions) (s *Store, resumed bool, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, fmt.Errorf("create output directory: %v", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %v", dir, err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		return nil, false, fmt.Errorf("another `loadlab lab run` is writing %s: wait for it or use another --out", dir)
	}
	s = &Store{dir: dir, lock: lock}
	hash := Hash(p, o)
	if !fileExists(filepath.Join(dir, FileName)) {
		now := time.Now().UTC()
		s.F = &File{Version: Version, PlanHash: hash, Plan: p, Options: o, Started: now, Updated: now}
		return s, false, nil
	}
	f, err := Load(dir)
	if err != nil {
		s.Close()
		return nil, false, err
	}
	if f.PlanHash != hash {
		s.Close()
		return nil, false, fmt.Errorf("%s holds results of plan %s with other settings: use another --out, or remove %s to start over", dir, f.Plan.Name, filepath.Join(dir, FileName))
	}
	s.F = f
	return s, true, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Dir returns the output directory.
func (s *Store) Dir() string { return s.dir }

// Update runs fn on the file under the store's lock and saves it.
func (s *Store) Update(fn func(f *File)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s.F)
	return s.saveLocked()
}

// Save writes results.json atomically (internal/atomicfile: a temporary
// file, synced, renamed over it, the directory synced).
func (s *Store) Save() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saveLocked()
}

func (s *Store) saveLocked() error {
	s.F.Updated = time.Now().UTC()
	b, err := json.MarshalIndent(s.F, "", " ")
	if err != nil {
		return fmt.Errorf("encode results: %v", err)
	}
	return atomicfile.WriteFile(filepath.Join(s.dir, FileName), append(b, '\n'), 0o644)
}

// Close releases the directory lock.
func (s *Store) Close() error {
	if s.lock == nil {
		return nil
	}
	err := s.lock.Close()
	s.lock = nil
	return err
}

// Unit returns the unit with id, or nil.
func (f *File) Unit(id string) *Unit {
	for _, u := range f.Units {
		if u.ID == id {
			return u
		}
	}
	return nil
}

// Ceiling returns the generator ceiling with this ID, or nil.
func (f *File) Ceiling(id string) *Unit {
	for _, u := range f.Ceilings {
		if u.ID == id {
			return u
		}
	}
	return nil
}

// CeilingOf returns the generator ceiling measured for unit u's scenario,
// or nil.
func (f *File) CeilingOf(u *Unit) *Unit {
	if u == nil || u.Ceiling == "" {
		return nil
	}
	return f.Ceiling(u.Ceiling)
}

// CeilingRate is a ceiling's rate and whether the generator itself bounded
// it (else the reference target or the plan's max did, and the generator's
// own limit is higher). 0 when it was not measured.
func (u *Unit) CeilingRate() (rate float64, byGenerator bool) {
	if u == nil || u.Status != StatusDone || u.Search == nil || !u.Search.Confirmed {
		return 0, false
	}
	return u.Search.Rate, u.Search.GeneratorLimited
}

// ProxyInfo returns the record of profile with key on layout with the
// lab's one site, or nil.
func (f *File) ProxyInfo(layout, profile, key string) *ProxyInfo {
	return f.ProxyInfoRoutes(layout, profile, key, 0)
}

// ProxyInfoRoutes returns the record of profile with key on layout with
// routes host routes (0: the lab's one site), or nil.
func (f *File) ProxyInfoRoutes(layout, profile, key string, routes int) *ProxyInfo {
	for i := range f.Proxies {
		p := &f.Proxies[i]
		if p.Layout == layout && p.Profile == profile && p.Key == key && p.Routes == routes {
			return p
		}
	}
	return nil
}

// Layout returns the layout with id, or nil.
func (f *File) Layout(id string) *Layout {
	for i := range f.Layouts {
		if f.Layouts[i].ID == id {
			return &f.Layouts[i]
		}
	}
	return nil
}

// AddNote records a note once.
func (f *File) AddNote(n string) {
	for _, have := range f.Notes {
		if have == n {
			return
		}
	}
	f.Notes = append(f.Notes, n)
}

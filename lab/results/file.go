package results

import (
	"time"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/session"
)

// Version is the results.json format version.
const Version = 1

// FileName is the name of the results file in the output directory.
const FileName = "results.json"

// File is results.json. Field names are a contract: add, never rename.
type File struct {
	Version  int         `json:"version"`
	PlanHash string      `json:"plan_hash"` // what must match for a resume
	Plan     *plan.Plan  `json:"plan"`      // resolved, narrowed, scaled
	Options  RunOptions  `json:"options"`
	Started  time.Time   `json:"started"`
	Updated  time.Time   `json:"updated"`
	Finished bool        `json:"finished"`
	Machine  Machine     `json:"machine"`
	Layouts  []Layout    `json:"layouts"`
	Proxies  []ProxyInfo `json:"proxies"`
	// Profiles are what ran for each profile (profiles.go): its profile
	// file, binary and rendered config, one record per profile.
	Profiles []ProfileRecord `json:"profiles,omitempty"`
	// LoadlabSHA256 is the SHA-256 of the loadlab binary that started
	// the run: a resume with another binary is refused.
	LoadlabSHA256 string       `json:"loadlab_sha256,omitempty"`
	Checks        []ProxyCheck `json:"checks,omitempty"` // the checks of each profile and key type (checks.go): the report's Checks section
	// Configs5Hosts are the profiles' configs rendered for five host names
	// (seed 001's "lines for five hostnames"), one per profile of the
	// plan, kept under the run directory.
	Configs5Hosts []ConfigSize `json:"configs_5_hosts,omitempty"`
	Units         []*Unit      `json:"units"`
	// Ceilings are the generator's own limits: per search scenario, key
	// type and layout, the same rate search against loadlab serve on the
	// proxy's CPUs (no proxy), run before the first unit's search.
	Ceilings []*Unit `json:"ceilings,omitempty"`
	// Rounds are the plan's rounds in the order they ran: each round runs
	// every scenario's units once, scenario by scenario, the units of a
	// scenario in the order Order gives, shuffled from RoundSeed.
	RoundSeed uint64   `json:"round_seed,omitempty"`
	Rounds    []Round  `json:"rounds,omitempty"`
	Notes     []string `json:"notes,omitempty"` // what the run could not do as planned, and why
}

// Round is one round of a plan with rounds: the unit IDs in the order it
// ran them (Order), and whether it ran to its end (its remeasure
// included: a round done is never measured again).
type Round struct {
	Round int      `json:"round"` // 1..N
	Order []string `json:"order"`
	Done  bool     `json:"done"`
	// Remeasure are the units the round chose to measure again at its end
	// (its noisiest, at most scenario.MaxRemeasure), recorded before they
	// run: a resumed run finishes them and chooses no other.
	Remeasure []string `json:"remeasure,omitempty"`
	// Control is the round's control (plan control): the generator
	// against loadlab serve, no proxy, measured before the round's first
	// unit: its step at the control's fixed rate (run 1) and its closed
	// loop (run 2).
	Control *Unit `json:"control,omitempty"`
	// ControlAfter (the last round only) is the control measured after
	// the round's units: the end of the last round, as the next round's
	// control is the end of the others.
	ControlAfter *Unit `json:"control_after,omitempty"`
	// ControlMoved is how far the control's closed loop moved across the
	// round, from its control to the one that ended it: (end - start) /
	// start (0: not both measured). Beyond NoisyControl either way, every
	// step of the round is flagged noisy.
	ControlMoved float64 `json:"control_moved,omitempty"`
}

// RunOptions are the command-line settings outside the plan that change
// what is measured.
type RunOptions struct {
	NoCgroups bool `json:"no_cgroups"`
}

// ProxyInfo is one proxy profile with one key type on one layout: its
// version and idle memory (seed 001's method, measured after its first
// start).
type ProxyInfo struct {
	Layout  string `json:"layout"`
	Profile string `json:"profile"`
	Proxy   string `json:"proxy"`
	Key     string `json:"key"`
	Version string `json:"version"`
	// Routes is the number of host routes the proxy had (the scenario's
	// named backends, seed 001's twenty), 0 for the lab's one site: its
	// idle memory is measured once per number of routes.
	Routes      int      `json:"routes,omitempty"`
	IdleMemory  uint64   `json:"idle_memory"`  // median memory.current (v1 usage_in_bytes), page cache included: the seeds' total, bytes (0 = not measured)
	IdleSamples []uint64 `json:"idle_samples"` // every memory.current reading
	Error       string   `json:"error,omitempty"`

	// What the proxy needs idle (the headline): anonymous + kernel
	// memory from memory.stat and kmem, and the page cache charged to its
	// group, which depends on what read the binary's pages first.
	IdleNeed        uint64   `json:"idle_anon_kernel"`         // median, bytes
	IdleFile        uint64   `json:"idle_page_cache"`          // median, bytes
	IdleNeedSamples []uint64 `json:"idle_anon_kernel_samples"` // every reading
}

// ConfigSize is one profile's config rendered with five host routes
// (app01.lab.test to app05.lab.test, each to its own backend): the files,
// kept under Dir, and their lines that are neither blank nor a comment
// (proxy.ConfigLines), per file and summed.
type ConfigSize struct {
	Profile string            `json:"profile"`
	Dir     string            `json:"dir"` // relative to the run directory
	Files   []proxy.FileLines `json:"files"`
	Lines   int               `json:"config_lines_5_hosts"`
	Error   string            `json:"error,omitempty"` // the profile could not be rendered
}

// ConfigSize returns the five-host rendering of profile, or nil.
func (f *File) ConfigSize(profile string) *ConfigSize {
	for i := range f.Configs5Hosts {
		if f.Configs5Hosts[i].Profile == profile {
			return &f.Configs5Hosts[i]
		}
	}
	return nil
}

// ProxyCheck is one run of the checks (session.Checks: bodies per
// protocol, the WebSocket route, HTTP/3 served and advertised, a restart)
// through one proxy profile with one key type on one layout, made by `lab
// run` right after the profile's first start there (after its idle memory);
// the restart runs once per profile and layout.
type ProxyCheck struct {
	Layout  string `json:"layout"`
	Profile string `json:"profile"`
	Proxy   string `json:"proxy"`
	Key     string `json:"key"`
	session.Checks
}

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

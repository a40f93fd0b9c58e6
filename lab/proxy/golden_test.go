package proxy

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden from the profiles' rendering")

// goldenCase is one way the lab renders every profile: as root with the
// lab's proxy user, as root with proxy user root, without root, and on
// IPv6 addresses.
type goldenCase struct {
	name string
	user string // Params.User: the lab's proxy user as root, "" without root
	host string // listen and backend address
}

var goldenCases = []goldenCase{
	{name: "root", user: "loadlab", host: "127.0.0.1"},
	{name: "root-proxy-user-root", user: "root", host: "127.0.0.1"},
	{name: "nonroot", host: "127.0.0.1"},
	{name: "ipv6", user: "loadlab", host: "::1"},
}

// goldenParams are the fixed Params the golden configs are rendered with:
// what the lab's session passes (no MaxConn: the default), on fixed ports
// and paths.
func goldenParams(c goldenCase, prof Profile) Params {
	p := Params{
		Binary: "/usr/sbin/" + prof.Proxy,
		Dir:    "/run/loadlab/" + prof.Name + "-p256-1", ListenHost: c.host, HTTPPort: 40080, HTTPSPort: 40443,
		BackendHost: c.host, BackendPort: 40900,
		CertFile:    "/run/loadlab/" + prof.Name + "-p256-1/fullchain.pem",
		KeyFile:     "/run/loadlab/" + prof.Name + "-p256-1/key.pem",
		CombinedPEM: "/run/loadlab/" + prof.Name + "-p256-1/combined.pem",
		ServerName:  "bench.lab", Workers: 2,
	}
	if prof.IsOrigin() {
		p.Root = p.Dir + "/www"
	}
	p.User = c.user
	return p
}

// TestGoldenConfigs renders every built-in profile in every goldenCase and
// compares each file with testdata/golden/CASE/PROFILE/FILE byte for byte.
// The configs the lab runs are a contract of their own: a change is on
// purpose, regenerated with
//
//	go test ./lab/proxy -run TestGoldenConfigs -update
//
// and said in the commit.
func TestGoldenConfigs(t *testing.T) {
	// The goldens were rendered with an open-file limit of 20,000
	// (HAProxy's maxconn is not lowered below 4096 by it).
	defer func(f func() (uint64, error)) { openFileLimit = f }(openFileLimit)
	openFileLimit = func() (uint64, error) { return 20000, nil }
	n := 0
	for _, c := range goldenCases {
		for _, prof := range All() {
			files, err := prof.Render(goldenParams(c, prof))
			if err != nil {
				t.Fatalf("%s/%s: %v", c.name, prof.Name, err)
			}
			dir := filepath.Join("testdata", "golden", c.name, prof.Name)
			if *updateGolden {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			var names []string
			for name := range files {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				path := filepath.Join(dir, name)
				n++
				if *updateGolden {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { // conf.d/include/proxy.conf
						t.Fatal(err)
					}
					if err := os.WriteFile(path, files[name], 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Errorf("%s/%s: %v (regenerate with -update)", c.name, prof.Name, err)
					continue
				}
				if string(want) != string(files[name]) {
					t.Errorf("%s: rendered config differs from the golden file:\n--- want\n%s\n--- got\n%s", path, want, files[name])
				}
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != len(files) {
				t.Errorf("%s: %d golden files, %d rendered", dir, len(entries), len(files))
			}
		}
	}
	t.Logf("%d config files compared", n)
}

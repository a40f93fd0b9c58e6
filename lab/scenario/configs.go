package scenario

import (
	"fmt"
	"path/filepath"

	"github.com/loadlab/loadlab/lab/backend"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/results"
)

// ConfigHosts is how many host names the config-size rendering routes
// (seed 001: "lines for five hostnames").
const ConfigHosts = 5

// configsDir is the run directory's folder of the five-host renderings.
const configsDir = "configs-5-hosts"

// configSize renders prof with ConfigHosts routes (appNN.lab.test to
// backend NN, as a hosts scenario would run it) into
// DIR/configs-5-hosts/<profile>/ and counts the lines of each file that are
// neither blank nor a comment (proxy.ConfigLines). It renders without a
// user to switch to (the lab's running detail, not what a person writes)
// and needs no binary installed.
func configSize(runDir string, prof proxy.Profile) results.ConfigSize {
	rel := filepath.Join(configsDir, prof.Name)
	c := results.ConfigSize{Profile: prof.Name, Dir: rel}
	dir, err := filepath.Abs(filepath.Join(runDir, rel)) // templates want absolute paths; make lab's --out is relative
	if err != nil {
		c.Error = err.Error()
		return c
	}
	bin, ferr := prof.Find()
	if ferr != nil {
		bin = filepath.Join("/usr/sbin", filepath.Base(prof.Binary)) // the count needs a path, not the binary
	}
	prm := proxy.Params{
		Binary: bin, Dir: dir, ListenHost: "127.0.0.1", HTTPPort: 80, HTTPSPort: 443,
		BackendHost: "127.0.0.1", BackendPort: 8080,
		CertFile: filepath.Join(dir, "fullchain.pem"), KeyFile: filepath.Join(dir, "key.pem"),
		CombinedPEM: filepath.Join(dir, "combined.pem"), CAFile: filepath.Join(dir, "ca.pem"),
		KeyType: "p256", ServerName: "bench.lab", Workers: 1,
	}
	for i := 1; i <= ConfigHosts; i++ {
		prm.Routes = append(prm.Routes, proxy.Route{Host: backend.AppHost(i), Backend: fmt.Sprintf("127.0.0.1:%d", 8080+i-1)})
	}
	files, err := prof.Render(prm)
	if err == nil {
		_, err = proxy.WriteConfig(prof, prm)
	}
	if err != nil {
		c.Error = err.Error()
		return c
	}
	c.Files, c.Lines = proxy.CountLines(files)
	return c
}

// recordConfigSizes renders every proxy profile of the run's units with
// five host routes, once (a resumed run keeps what it recorded).
func (r *Runner) recordConfigSizes(f *results.File) {
	for _, u := range r.Units {
		prof := u.Profile
		if prof.IsOrigin() || f.ConfigSize(prof.Name) != nil {
			continue
		}
		f.Configs5Hosts = append(f.Configs5Hosts, configSize(r.Store.Dir(), prof))
	}
}

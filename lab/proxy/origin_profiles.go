package proxy

// The origin profiles: the server under test serves the lab's files
// itself (seed 003's "serving files on 2 cores"), with the same binaries,
// commands, certificates, cgroups and namespaces as the proxy profiles of
// the same server. Each listens on HTTPPort (plain HTTP) and HTTPSPort
// (TLS) and serves Params.Root at "/".

// caddyRespondBody is caddy-respond's answer to every request.
var caddyRespondBody = []byte("hello")

// nginxOriginData fills nginx-origin.conf.tmpl.
type nginxOriginData struct {
	base
	RunAs    string // user directive, set only when nginx starts as root
	Sendfile bool   // sendfile on: plain-HTTP bodies go from the page cache to the socket in the kernel
}

// caddyOriginData fills Caddyfile-origin.tmpl.
type caddyOriginData struct {
	base
	Respond string // respond "<Respond>" 200 instead of file_server
}

func originProfiles() []Profile {
	return []Profile{
		nginxOrigin("nginx-files", true,
			"nginx serving the lab's files itself as seed 003 did: sendfile on, access_log off, keepalive_timeout 65 (plain HTTP bodies leave by sendfile; over TLS nginx reads and encrypts them in userspace)"),
		nginxOrigin("nginx-files-nosendfile", false,
			"nginx-files with sendfile off: every body read into userspace and written (seed 003: 100 KB over HTTP fell from 69,989 to 27,989 req/s)"),
		caddyOrigin("caddy-files", "",
			"Caddy serving the lab's files with file_server, near stock (seed 003: 1 KB faster over HTTPS than over HTTP)"),
		caddyOrigin("caddy-respond", string(caddyRespondBody),
			`Caddy answering every request with respond "hello" 200, no file (seed 003: 63,045 req/s over HTTP, the file path was the slow part)`),
		h2oOrigin("h2o-files",
			"Debian h2o 2.2 serving the lab's files with file.dir, near stock; not in the seeds, a fast C reference"),
	}
}

// nginxOrigin is nginx's proxy profile with the origin config.
func nginxOrigin(name string, sendfile bool, desc string) Profile {
	p := nginxProfile(name, desc, nginxOptions{})
	p.Role = RoleOrigin
	p.Render = func(prm Params) (map[string][]byte, error) {
		if err := prm.validate(); err != nil {
			return nil, err
		}
		if err := prm.validateRoot(name); err != nil {
			return nil, err
		}
		d := nginxOriginData{base: newBase(name, desc, prm), Sendfile: sendfile}
		var err error
		if d.RunAs, err = prm.switchUser("nginx"); err != nil {
			return nil, err
		}
		conf, err := execTemplate("nginx-origin.conf.tmpl", d)
		if err != nil {
			return nil, err
		}
		return map[string][]byte{"nginx.conf": conf}, nil
	}
	return p
}

// caddyOrigin is Caddy's proxy profile with the origin config; respond
// set answers every request with it instead of serving files.
func caddyOrigin(name, respond, desc string) Profile {
	p := caddyProfile(name, desc, caddyOptions{})
	p.Role = RoleOrigin
	if respond != "" {
		p.FixedBody = []byte(respond)
		p.Ready = readyWith(p.FixedBody)
	}
	p.Render = func(prm Params) (map[string][]byte, error) {
		if err := prm.validate(); err != nil {
			return nil, err
		}
		if respond == "" {
			if err := prm.validateRoot(name); err != nil {
				return nil, err
			}
		}
		if err := prm.rejectOtherUser("caddy"); err != nil {
			return nil, err
		}
		conf, err := execTemplate("Caddyfile-origin.tmpl", caddyOriginData{newBase(name, desc, prm), respond})
		if err != nil {
			return nil, err
		}
		return map[string][]byte{"Caddyfile": conf}, nil
	}
	return p
}

// h2oOrigin is h2o's proxy profile with the origin config.
func h2oOrigin(name, desc string) Profile {
	p := h2oProfiles()[0]
	p.Name, p.Description, p.Role = name, desc, RoleOrigin
	p.Render = func(prm Params) (map[string][]byte, error) {
		if err := prm.validate(); err != nil {
			return nil, err
		}
		if err := prm.validateRoot(name); err != nil {
			return nil, err
		}
		d := h2oData{base: newBase(name, desc, prm)}
		var err error
		if d.RunAs, err = prm.switchUser("h2o"); err != nil {
			return nil, err
		}
		conf, err := execTemplate("h2o-origin.conf.tmpl", d)
		if err != nil {
			return nil, err
		}
		return map[string][]byte{"h2o.conf": conf}, nil
	}
	return p
}

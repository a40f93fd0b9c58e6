package proxy

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// checkArgs are the servers' config checks: argv that validates the
// rendered config in dir without serving.
var checkArgs = map[string]func(bin, dir string) []string{
	"nginx": func(bin, dir string) []string {
		return []string{bin, "-t", "-q", "-p", dir, "-c", dir + "/nginx.conf", "-g", "daemon off;"}
	},
	"haproxy": func(bin, dir string) []string { return []string{bin, "-c", "-q", "-f", dir + "/haproxy.cfg"} },
	"caddy": func(bin, dir string) []string {
		return []string{bin, "validate", "--config", dir + "/Caddyfile", "--adapter", "caddyfile"}
	},
	"h2o":      func(bin, dir string) []string { return []string{bin, "-t", "-c", dir + "/h2o.conf"} },
	"apache2":  func(bin, dir string) []string { return []string{bin, "-t", "-f", dir + "/httpd.conf"} },
	"lighttpd": func(bin, dir string) []string { return []string{bin, "-tt", "-f", dir + "/lighttpd.conf"} },
}

// Every rendered config passes the proxy's own checker (nginx -t,
// haproxy -c, caddy validate, h2o -t) when the proxy is installed.
func TestRenderedConfigsPassProxyCheck(t *testing.T) {
	certDir := t.TempDir()
	certs := map[string]testCert{"p256": writeTestCert(t, certDir, "p256"), "rsa2048": writeTestCert(t, certDir, "rsa2048")}
	for _, prof := range All() {
		t.Run(prof.Name, func(t *testing.T) {
			check := checkArgs[prof.Proxy]
			if check == nil {
				t.Skipf("%s has no config-check mode", prof.Proxy)
			}
			path := installed(t, prof)
			for kind, c := range certs {
				for _, host := range []string{"127.0.0.1", "::1"} {
					p := testParams(t, c, 9)
					p.ListenHost, p.BackendHost, p.Binary = host, host, path
					if _, err := WriteConfig(prof, p); err != nil {
						t.Fatal(err)
					}
					out, err := runCheck(check(path, p.Dir))
					if err != nil {
						t.Errorf("%s %s on %s: %s failed: %v\n%s", kind, prof.Name, host, strings.Join(check(path, p.Dir), " "), err, out)
					}
				}
			}
		})
	}
}

// A broken config fails the check, so the test above can fail.
func TestProxyCheckRejectsBrokenConfig(t *testing.T) {
	c := writeTestCert(t, t.TempDir(), "p256")
	for _, name := range []string{"nginx-stock", "haproxy", "caddy-stock", "h2o", "apache2", "lighttpd"} {
		prof, _ := Get(name)
		t.Run(name, func(t *testing.T) {
			path := installed(t, prof)
			p := testParams(t, c, 9)
			p.CertFile, p.CombinedPEM, p.Binary = p.Dir+"/missing-cert.pem", p.Dir+"/missing-combined.pem", path
			if _, err := WriteConfig(prof, p); err != nil {
				t.Fatal(err)
			}
			if out, err := runCheck(checkArgs[prof.Proxy](path, p.Dir)); err == nil {
				t.Errorf("%s accepted a config whose certificate file is missing:\n%s", name, out)
			}
		})
	}
}

func runCheck(args []string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	return string(out), err
}

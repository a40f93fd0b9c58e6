package proxy

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Every rendered config passes the proxy's own checker (nginx -t,
// haproxy -c, caddy validate, h2o -t) when the proxy is installed.
func TestRenderedConfigsPassProxyCheck(t *testing.T) {
	certDir := t.TempDir()
	certs := map[string]testCert{"p256": writeTestCert(t, certDir, "p256"), "rsa2048": writeTestCert(t, certDir, "rsa2048")}
	for _, prof := range All() {
		t.Run(prof.Name, func(t *testing.T) {
			if prof.Check == nil {
				t.Skipf("%s has no config-check mode", prof.Proxy)
			}
			path := installed(t, prof)
			for kind, c := range certs {
				for _, host := range []string{"127.0.0.1", "::1"} {
					p := testParams(t, c, 9)
					p.ListenHost, p.BackendHost = host, host
					if _, err := WriteConfig(prof, p); err != nil {
						t.Fatal(err)
					}
					out, err := runCheck(prof.Check(path, p))
					if err != nil {
						t.Errorf("%s %s on %s: %s failed: %v\n%s", kind, prof.Name, host, strings.Join(prof.Check(path, p), " "), err, out)
					}
				}
			}
		})
	}
}

// A broken config fails the check, so the test above can fail.
func TestProxyCheckRejectsBrokenConfig(t *testing.T) {
	c := writeTestCert(t, t.TempDir(), "p256")
	for _, name := range []string{"nginx-stock", "haproxy", "caddy-stock", "h2o"} {
		prof, _ := Get(name)
		t.Run(name, func(t *testing.T) {
			path := installed(t, prof)
			p := testParams(t, c, 9)
			p.CertFile, p.CombinedPEM = p.Dir+"/missing-cert.pem", p.Dir+"/missing-combined.pem"
			if _, err := WriteConfig(prof, p); err != nil {
				t.Fatal(err)
			}
			if out, err := runCheck(prof.Check(path, p)); err == nil {
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

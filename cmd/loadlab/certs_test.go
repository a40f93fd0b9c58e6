package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCertsCreateThenReuse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	code, out := pincertsRun(t, "certs", "--out", dir, "--key", "p256", "--name", "localhost", "--name", "127.0.0.1")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{"ca.pem: created (missing)", "ecdsa-p256: created (missing)", filepath.Join(dir, "p256", "cert+key.pem")} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "rsa-") {
		t.Errorf("--key p256 made RSA certificates:\n%s", out)
	}
	code, out = pincertsRun(t, "certs", "--out", dir, "--key", "ecdsa-p256", "--name", "localhost,127.0.0.1")
	if code != 0 || !strings.Contains(out, "ca.pem: reused") || !strings.Contains(out, "ecdsa-p256: reused") {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "p256", "key.pem")); err != nil {
		t.Fatal(err)
	}
}

func TestCertsUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--out", dir, "--key", "dsa"},
		{"--out", dir, "--key", ""},
		{"--key", "p256"},
		{"--out", dir, "--key", "p256", "--name", "a b"},
		{"--out", dir, "--key", "p256", "--validity", "1m"},
		{"--out", dir, "stray"},
	} {
		if code, out := pincertsRun(t, "certs", args...); code != exitUsage {
			t.Errorf("certs %v: exit %d, want %d\n%s", args, code, exitUsage, out)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("usage errors still wrote %d entries", len(ents))
	}
}

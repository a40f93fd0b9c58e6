package certs

import (
	"slices"
	"strings"
	"testing"
)

func TestParseKeyTypes(t *testing.T) {
	cases := []struct {
		in   string
		want []KeyType
	}{
		{"all", []KeyType{P256, RSA2048, RSA4096}},
		{"p256", []KeyType{P256}},
		{" RSA4096 , p256 ", []KeyType{RSA4096, P256}},
		{"ecdsa-p256,rsa-2048,rsa2048", []KeyType{P256, RSA2048}},
		{"rsa2048,all", []KeyType{RSA2048, P256, RSA4096}},
	}
	for _, c := range cases {
		got, err := ParseKeyTypes(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseKeyTypes(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "dsa", "p256,", "p384"} {
		if got, err := ParseKeyTypes(bad); err == nil || !strings.Contains(err.Error(), "p256, rsa2048, rsa4096 or all") {
			t.Errorf("ParseKeyTypes(%q) = %v, %v; want an error listing the choices", bad, got, err)
		}
	}
}

func TestServerKeyName(t *testing.T) {
	want := map[KeyType]string{P256: "ecdsa-p256", RSA2048: "rsa-2048", RSA4096: "rsa-4096"}
	for k, name := range want {
		if k.ServerKeyName() != name || !k.Valid() {
			t.Errorf("%s: %s", k, k.ServerKeyName())
		}
	}
	if KeyType("x").Valid() {
		t.Error("unknown key type is valid")
	}
}

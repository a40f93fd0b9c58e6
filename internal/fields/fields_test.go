package fields

import "testing"

func TestWords(t *testing.T) {
	flag := func(f string) string {
		return map[string]string{"TLS.Resume": "--resume", "NoCgroups": "--no-cgroups"}[f]
	}
	for _, tc := range []struct{ in, lib, cli string }{
		{"needs {TLS.Resume}", "needs TLS.Resume", "needs --resume"},
		{"use {NoCgroups}; GET /a/{id}", "use NoCgroups; GET /a/{id}", "use --no-cgroups; GET /a/{id}"},
		{"no braces", "no braces", "no braces"},
		{"open { and {Unclosed", "open { and {Unclosed", "open { and {Unclosed"},
		{"{a.B} {A..B} {A.b}", "{a.B} {A..B} {A.b}", "{a.B} {A..B} {A.b}"},
	} {
		if got := Words(tc.in, nil); got != tc.lib {
			t.Errorf("Words(%q, nil) = %q, want %q", tc.in, got, tc.lib)
		}
		if got := Words(tc.in, flag); got != tc.cli {
			t.Errorf("Words(%q, flag) = %q, want %q", tc.in, got, tc.cli)
		}
	}
}

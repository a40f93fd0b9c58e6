package proxy

import "testing"

func TestConfigLines(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"\n\n   \n\t\n", 0},
		{"# a comment\n  # indented comment\nlisten 80;\n", 1},
		{"app1.example.com {\n\treverse_proxy app1:80\n}\n\n", 3},
		{"set $x \"a#b\";  # trailing comment counts as a line\n", 1},
		{"no newline at the end", 1},
		{"a\r\n\r\n# c\r\nb\r\n", 2},
	} {
		if got := ConfigLines([]byte(c.text)); got != c.want {
			t.Errorf("ConfigLines(%q) = %d, want %d", c.text, got, c.want)
		}
	}
	per, total := CountLines(map[string][]byte{"b.conf": []byte("x\n#\ny\n"), "a.conf": []byte("z\n")})
	if total != 3 || len(per) != 2 || per[0] != (FileLines{"a.conf", 1}) || per[1] != (FileLines{"b.conf", 2}) {
		t.Errorf("CountLines = %v, %d; want a.conf 1, b.conf 2, 3", per, total)
	}
}

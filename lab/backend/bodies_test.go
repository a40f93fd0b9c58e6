package backend

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"
)

func TestBodiesExactSizeAndContent(t *testing.T) {
	// Golden hashes pin the content: changing a body changes what every
	// recorded benchmark transferred, so it must be deliberate.
	cases := []struct {
		path string
		size int
		sha  string
	}{
		{"/1k", Size1K, "1dac57d4dbec4c8fba5cca0274acea1ba1a5d5935fe8b5cd96fbfdb9492d2ef1"},
		{"/100k", Size100K, "de0d6f189953845d5a836c38c96497bddac91538dbc13d24b70f1efed8561cd6"},
		{"/1m", Size1M, "4763452f1770a43094e9832354e0f38f31852d955f9824efa9e145d10b27adce"},
	}
	for _, c := range cases {
		b := Body(c.path)
		if len(b) != c.size {
			t.Errorf("%s: %d bytes, want %d", c.path, len(b), c.size)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != c.sha {
			t.Errorf("%s: sha256 %s, want %s", c.path, got, c.sha)
		}
	}
	if Body("/echo") != nil {
		t.Error("Body(/echo) should be nil")
	}
}

func Test1kIsJSON(t *testing.T) {
	var v struct {
		Service string           `json:"service"`
		Size    int              `json:"size"`
		Items   []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(body1k, &v); err != nil {
		t.Fatalf("1k body is not JSON: %v", err)
	}
	if v.Size != Size1K || len(v.Items) != 8 || v.Service != "loadlab-backend" {
		t.Fatalf("unexpected 1k document: %+v", v)
	}
}

func TestPatternLines(t *testing.T) {
	for _, b := range [][]byte{body100k, body1m} {
		if len(b)%patternLine != 0 {
			t.Fatalf("size %d is not a multiple of %d", len(b), patternLine)
		}
		for i := 0; i < len(b)/patternLine; i += 997 { // sample lines
			line := b[i*patternLine : (i+1)*patternLine]
			want := fmt.Sprintf("loadlab %010d abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQR\n", i)
			if string(line) != want {
				t.Fatalf("line %d = %q, want %q", i, line, want)
			}
		}
	}
	if !bytes.Equal(body1m[:Size100K], body100k) {
		t.Error("/100k should be the first 100 KiB of /1m")
	}
}

func TestBodyReturnsCopy(t *testing.T) {
	b := Body("/1k")
	b[0] = 'X'
	if body1k[0] != '{' {
		t.Fatal("Body must not expose the served slice")
	}
}

package results

import (
	"encoding"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/results.schema from the types")

// TestSchemaGolden pins the schema of results.json: every field path the
// encoder can write, with its Go type and its omitempty/string options, as
// listed in testdata/results.schema. results.json is the contract the lab's
// reports, `loadlab merge` and users' scripts read, and its fields come
// from struct tags in several packages (results, gen, plan, search, pin),
// so a rename or a drop in any of them fails here.
//
// A commit that adds, renames or drops a field (or changes its type)
// regenerates the file in the same commit and says so, and adds new fields
// to the field list in docs/results.md (The lab's results.json):
//
//	go test ./lab/results -run TestSchemaGolden -update
//
// then review `git diff lab/results/testdata/results.schema`: a line that
// disappears is a field that readers of old files lose. Renames break
// readers; add a field instead (see File).
func TestSchemaGolden(t *testing.T) {
	got := schemaOf(reflect.TypeFor[File]())
	path := filepath.Join("testdata", "results.schema")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: create it with go test ./lab/results -run TestSchemaGolden -update", err)
	}
	if got == string(want) {
		return
	}
	gotSet, wantSet := lineSet(got), lineSet(string(want))
	var msg strings.Builder
	for _, l := range strings.Split(string(want), "\n") {
		if l != "" && !gotSet[l] {
			fmt.Fprintf(&msg, "  - %s\n", l)
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if l != "" && !wantSet[l] {
			fmt.Fprintf(&msg, "  + %s\n", l)
		}
	}
	t.Fatalf("results.json's schema differs from %s (- dropped or changed, + new):\n%sIf the change is meant, run go test ./lab/results -run TestSchemaGolden -update, commit the file with the change and update the field list in docs/results.md.", path, msg.String())
}

func lineSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		m[l] = true
	}
	return m
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// schemaOf lists the JSON field paths of t, one "path type [options]" line
// each, in field order: a.b for a field of an object, a[] for the elements
// of an array, a{} for the values of an object keyed by strings. A type
// with its own MarshalJSON or MarshalText is a leaf named by its Go type.
func schemaOf(t reflect.Type) string {
	var b strings.Builder
	walkSchema(&b, "", "", t, map[reflect.Type]bool{})
	return b.String()
}

func walkSchema(b *strings.Builder, path, opts string, t reflect.Type, seen map[reflect.Type]bool) {
	if opts != "" {
		opts = " [" + opts + "]"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if path != "" && (t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)) {
		fmt.Fprintf(b, "%s %s (marshals itself)%s\n", path, t, opts)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if seen[t] {
			fmt.Fprintf(b, "%s %s (recursive)%s\n", path, t, opts)
			return
		}
		seen[t] = true
		defer delete(seen, t)
		if path != "" {
			fmt.Fprintf(b, "%s object%s\n", path, opts)
		}
		walkFields(b, path, t, seen)
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			fmt.Fprintf(b, "%s []byte (base64)%s\n", path, opts)
			return
		}
		fmt.Fprintf(b, "%s array%s\n", path, opts)
		walkSchema(b, path+"[]", "", t.Elem(), seen)
	case reflect.Map:
		fmt.Fprintf(b, "%s object{%s}%s\n", path, t.Key(), opts)
		walkSchema(b, path+"{}", "", t.Elem(), seen)
	case reflect.Interface:
		fmt.Fprintf(b, "%s any%s\n", path, opts)
	default:
		fmt.Fprintf(b, "%s %s%s\n", path, t.Kind(), opts)
	}
}

// walkFields lists the fields of struct t the way encoding/json encodes
// them: exported fields, embedded structs without a name inlined.
func walkFields(b *strings.Builder, path string, t reflect.Type, seen map[reflect.Type]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			walkFields(b, path, ft, seen)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := name
		if path != "" {
			p = path + "." + name
		}
		walkSchema(b, p, opts, f.Type, seen)
	}
}

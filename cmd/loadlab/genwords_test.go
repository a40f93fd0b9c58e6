package main

import (
	"reflect"
	"testing"

	"github.com/loadlab/loadlab/gen"
)

// TestGenFlagNamesEveryField: each field a gen UsageError may name has the
// flag the CLI words it with.
func TestGenFlagNamesEveryField(t *testing.T) {
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Type == reflect.TypeFor[gen.TLSOptions]() {
				walk(prefix+f.Name+".", f.Type)
				continue
			}
			if _, ok := genFlag[prefix+f.Name]; !ok {
				t.Errorf("gen.Config field %s has no flag in genFlag", prefix+f.Name)
			}
		}
	}
	walk("", reflect.TypeFor[gen.Config]())
	err := &gen.UsageError{Field: "TLS.ZeroRTT", Msg: "needs {TLS.Resume}; {not a field} stays"}
	if got, want := genWords(err), "--0rtt: needs --resume; {not a field} stays"; got != want {
		t.Errorf("genWords = %q, want %q", got, want)
	}
}

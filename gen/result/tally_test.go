package result

import (
	"reflect"
	"testing"
)

// TestTallyAdd: the one sum keeps a class counted at 0, lets the first
// sample of a class win, and writes the TLS counts only into a result with
// TLS sessions.
func TestTallyAdd(t *testing.T) {
	var sum Tally
	sum.Add(Tally{Requests: 5, OK: 4, Status: map[string]uint64{"200": 4}, Errors: map[string]uint64{"timeout": 1, "reset": 0},
		Samples: map[string]string{"timeout": "first"}, BytesRead: 100, Handshakes: 2, Resumed: 1})
	sum.Add(Tally{Requests: 3, OK: 1, Status: map[string]uint64{"200": 1, "503": 1}, Errors: map[string]uint64{"timeout": 1},
		Samples: map[string]string{"timeout": "second"}, Retries: 1, BytesRead: 50, ZeroRTT: 2})
	want := Tally{Requests: 8, OK: 5, Status: map[string]uint64{"200": 5, "503": 1}, Errors: map[string]uint64{"timeout": 2, "reset": 0},
		Samples: map[string]string{"timeout": "first"}, Retries: 1, BytesRead: 150, Handshakes: 2, Resumed: 1, ZeroRTT: 2}
	if !reflect.DeepEqual(sum, want) {
		t.Fatalf("sum %+v\nwant %+v", sum, want)
	}

	plain := &Result{}
	sum.Set(plain)
	if plain.Requests != 8 || plain.OK != 5 || plain.Errors["reset"] != 0 || len(plain.Errors) != 2 || plain.TLS != nil {
		t.Fatalf("set %+v", plain)
	}
	if got := TallyOf(plain); !reflect.DeepEqual(got, Tally{Requests: 8, OK: 5, Status: want.Status, Errors: want.Errors, Samples: want.Samples, Retries: 1, BytesRead: 150, Handshakes: 2}) {
		t.Fatalf("read back %+v", got)
	}
	tls := &Result{TLS: &TLSInfo{Version: "TLS 1.3"}}
	sum.Set(tls)
	if tls.TLS.Resumed != 1 || tls.TLS.ZeroRTT != 2 || tls.TLS.Version != "TLS 1.3" {
		t.Fatalf("TLS %+v", tls.TLS)
	}
	var empty Tally
	empty.Set(plain)
	if plain.Status == nil || plain.Errors == nil {
		t.Fatal("an empty tally left nil maps in the result (JSON would say null)")
	}
}

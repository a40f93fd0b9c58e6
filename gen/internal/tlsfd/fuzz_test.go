package tlsfd

import (
	"bytes"
	"testing"
)

// fuzzRecords turns data into the records a server sends: a suite byte,
// then per record a content type, a 2-byte plaintext length and the
// plaintext. A type byte with its high bit set sends the record with one
// ciphertext byte flipped (a forged or corrupted record); type 0x7f sends
// the "plaintext" as raw bytes on the wire (any record header, any length,
// a record cut short).
func fuzzRecords(data []byte) (suite int, recs []fuzzRecord) {
	if len(data) == 0 {
		return 0, nil
	}
	suite, data = int(data[0])%len(allRecordSuites), data[1:]
	for len(data) >= 3 {
		r := fuzzRecord{typ: data[0] & 0x7f, corrupt: data[0]&0x80 != 0}
		n := min(int(data[1])<<8|int(data[2]), len(data)-3, maxPlaintext)
		r.plain, data = data[3:3+n], data[3+n:]
		recs = append(recs, r)
	}
	return suite, recs
}

// rawRecord is the fuzz type of bytes sent as they are.
const rawRecord = 0x7f

type fuzzRecord struct {
	typ     uint8
	corrupt bool
	plain   []byte
}

// seedRecords encodes records as fuzzRecords reads them.
func seedRecords(suite byte, recs ...fuzzRecord) []byte {
	b := []byte{suite}
	for _, r := range recs {
		t := r.typ
		if r.corrupt {
			t |= 0x80
		}
		b = append(b, t, byte(len(r.plain)>>8), byte(len(r.plain)))
		b = append(b, r.plain...)
	}
	return b
}

// FuzzRecordLayer sends the client's record layer what a server could:
// records of any content type and plaintext, sealed with the connection's
// keys (so the fuzzer reaches past the AEAD: alerts, post-handshake
// messages, KeyUpdate, padding-only TLS 1.3 records), some corrupted. The
// client must not panic, must deliver exactly the application data sealed
// before the first error, and must give the same bytes and the same error
// whether a record comes whole or in two pieces (the loop's carry).
func FuzzRecordLayer(f *testing.F) {
	app := func(s string) fuzzRecord { return fuzzRecord{typ: typeApplicationData, plain: []byte(s)} }
	hs := func(b ...byte) fuzzRecord { return fuzzRecord{typ: typeHandshake, plain: b} }
	for s := range allRecordSuites {
		f.Add(seedRecords(byte(s), app("hello"), app("")))
		f.Add(seedRecords(byte(s), app("a"), fuzzRecord{typ: typeAlert, plain: []byte{alertLevelWarning, alertCloseNotify}}, app("after")))
		f.Add(seedRecords(byte(s), fuzzRecord{typ: typeAlert, plain: []byte{2, 40}}))
		f.Add(seedRecords(byte(s), hs(hsNewSessionTicket, 0, 0, 4, 1, 2, 3, 4), app("x")))
		f.Add(seedRecords(byte(s), hs(hsKeyUpdate, 0, 0, 1, 1), app("after the update")))
		f.Add(seedRecords(byte(s), hs(hsNewSessionTicket, 0, 0, 8, 1), hs(2, 3, 4, 5, 6, 7, 8), app("split ticket")))
		f.Add(seedRecords(byte(s), hs(hsHelloRequest, 0, 0, 0)))
		f.Add(seedRecords(byte(s), fuzzRecord{typ: typeApplicationData, corrupt: true, plain: []byte("forged")}))
		f.Add(seedRecords(byte(s), fuzzRecord{typ: typeChangeCipherSpec, plain: []byte{1}}))
		f.Add(seedRecords(byte(s), fuzzRecord{typ: rawRecord, plain: []byte{23, 3, 3, 0xff, 0xff, 1, 2}}))
		f.Add(seedRecords(byte(s), fuzzRecord{typ: rawRecord, plain: []byte{23, 3, 3, 0, 2, 1, 2}}, app("then")))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		suite, recs := fuzzRecords(data)
		s := allRecordSuites[suite]
		whole, _ := feedRecords(t, s.vers, s.suite, recs, false)
		split, errSplit := feedRecords(t, s.vers, s.suite, recs, true)
		if !bytes.Equal(whole.data, split.data) || whole.err != split.err || errSplit != nil {
			t.Fatalf("whole: %q %v; in two pieces: %q %v (%v)", whole.data, whole.err, split.data, split.err, errSplit)
		}
	})
}

type fedResult struct {
	data []byte
	err  error
}

// feedRecords seals recs with a server layer and feeds them to a client
// layer, each record whole or cut in two (the first piece carried, as
// readRecords carries it), and checks what a record yields.
func feedRecords(t *testing.T, vers, suite uint16, recs []fuzzRecord, cut bool) (fedResult, error) {
	client, server := layerPair(t, vers, suite)
	var out fedResult
	var carry []byte
	rawSeen := false // after raw bytes the stream is anyone's: no record boundary to check
	for _, r := range recs {
		secret := client.in.secret
		raw := r.typ == rawRecord
		rawSeen = rawSeen || raw
		wire := append([]byte(nil), r.plain...) // corrupt flips a byte: not of recs
		if !raw {
			wire = server.sealOne(nil, r.typ, r.plain)
		}
		if r.corrupt && len(wire) > 0 {
			wire[len(wire)-1] ^= 1
		}
		pieces := [][]byte{wire}
		if cut && len(wire) > 0 {
			k := (len(r.plain)*7 + 3) % len(wire)
			pieces = [][]byte{wire[:k], wire[k:]}
		}
		for _, p := range pieces {
			src := append(carry, p...)
			dst := make([]byte, len(src))
			n, used, err := client.open(dst, src)
			if n > len(src) || used > len(src) || n < 0 || used < 0 {
				t.Fatalf("open: n %d used %d of %d bytes", n, used, len(src))
			}
			out.data = append(out.data, dst[:n]...)
			carry = append([]byte(nil), src[used:]...)
			if err != nil {
				out.err = err
				return out, nil //nolint:nilerr // the record layer's error is part of the output compared
			}
		}
		if rawSeen {
			continue
		}
		if len(carry) != 0 {
			t.Fatalf("a whole record left %d bytes unread", len(carry))
		}
		if r.typ == typeApplicationData && !r.corrupt {
			if !bytes.HasSuffix(out.data, r.plain) {
				t.Fatalf("application data %q not delivered", r.plain)
			}
		}
		if client.in.secret != secret {
			// The client took a KeyUpdate: the server's next records go
			// under its next secret too.
			if err := server.out.update(server.spec); err != nil {
				t.Fatal(err)
			}
		}
		client.reply = client.reply[:0] // answers the server does not read
	}
	return out, nil
}

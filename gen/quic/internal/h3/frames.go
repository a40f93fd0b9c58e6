package h3

import (
	"bytes"
	"errors"
	"io"

	"github.com/loadlab/loadlab/gen/quic/internal/wire"
)

// HTTP/3 frame and stream types (RFC 9114 §7.2, §6.2).
const (
	frameData     = 0x00
	frameHeaders  = 0x01
	frameSettings = 0x04

	streamControl = 0x00

	settingQPACKMaxTableCapacity = 0x01
	settingQPACKBlockedStreams   = 0x07
)

// H3NoError is the application error code of a clean close.
const H3NoError = 0x100

// AppendControlStream appends the client control stream's contents: its
// type and a SETTINGS frame with QPACK's table capacity and blocked
// streams 0 (the defaults, sent explicitly).
func AppendControlStream(b []byte) []byte {
	b = append(b, streamControl, frameSettings, 4)
	return append(b, settingQPACKMaxTableCapacity, 0, settingQPACKBlockedStreams, 0)
}

// AppendHeadersFrame appends a HEADERS frame holding section.
func AppendHeadersFrame(b, section []byte) []byte {
	b = wire.AppendVarint(b, frameHeaders)
	b = wire.AppendVarint(b, uint64(len(section)))
	return append(b, section...)
}

// maxHeaders bounds a HEADERS frame from the server.
const maxHeaders = 64 << 10

// Response errors.
var (
	ErrFrame        = errors.New("h3: malformed frame on the request stream")
	ErrHeadersSize  = errors.New("h3: the server sent a HEADERS frame larger than 64 KiB")
	ErrDataFirst    = errors.New("h3: the server sent DATA before HEADERS")
	ErrTruncated    = errors.New("h3: the request stream ended inside a frame or before the response")
	ErrForbiddenFrm = errors.New("h3: the server sent a frame not allowed on a request stream")
)

// Response parses the server's side of a request stream. Set Body to
// receive the DATA bytes (e.g. a hash); Reset before each response.
type Response struct {
	Status int   // final status, 0 until its HEADERS
	Bytes  int64 // DATA payload bytes
	Done   bool  // the stream ended after a complete response
	Body   io.Writer

	hdr     [16]byte // a frame header split across calls
	nhdr    int
	inFrame bool
	ftype   uint64
	remain  uint64
	headers []byte // the HEADERS payload being gathered
	huff    bytes.Buffer
}

// Reset prepares r for a new response, keeping its buffers and Body.
func (r *Response) Reset() {
	r.Status, r.Bytes, r.Done = 0, 0, false
	r.nhdr, r.inFrame, r.headers = 0, false, r.headers[:0]
}

// frameHeader parses a frame type and length at the start of b.
func frameHeader(b []byte) (t, l uint64, n int) {
	t, n1 := wire.ReadVarint(b)
	if n1 == 0 {
		return 0, 0, 0
	}
	l, n2 := wire.ReadVarint(b[n1:])
	if n2 == 0 {
		return 0, 0, 0
	}
	return t, l, n1 + n2
}

// Feed consumes the next in-order bytes of the request stream; fin says
// the stream ends after them.
func (r *Response) Feed(data []byte, fin bool) error {
	for len(data) > 0 {
		if !r.inFrame {
			var t, l uint64
			var n int
			if r.nhdr > 0 {
				k := copy(r.hdr[r.nhdr:], data)
				t, l, n = frameHeader(r.hdr[:r.nhdr+k])
				if n == 0 {
					if r.nhdr+k == len(r.hdr) {
						return ErrFrame
					}
					r.nhdr += k
					data = data[k:]
					continue
				}
				data = data[n-r.nhdr:]
				r.nhdr = 0
			} else {
				t, l, n = frameHeader(data)
				if n == 0 {
					r.nhdr = copy(r.hdr[:], data)
					break
				}
				data = data[n:]
			}
			if err := r.begin(t, l); err != nil {
				return err
			}
			if r.remain == 0 {
				if err := r.end(); err != nil {
					return err
				}
				continue
			}
		}
		k := int(min(r.remain, uint64(len(data))))
		switch r.ftype {
		case frameData:
			r.Bytes += int64(k)
			if r.Body != nil {
				_, _ = r.Body.Write(data[:k]) // the caller's sink (a hash, a counter): its errors are its own
			}
		case frameHeaders:
			r.headers = append(r.headers, data[:k]...)
		}
		data = data[k:]
		r.remain -= uint64(k)
		if r.remain == 0 {
			if err := r.end(); err != nil {
				return err
			}
		}
	}
	if fin {
		if r.inFrame || r.nhdr > 0 || r.Status == 0 {
			return ErrTruncated
		}
		r.Done = true
	}
	return nil
}

// begin starts a frame of type t and length l.
func (r *Response) begin(t, l uint64) error {
	switch t {
	case frameHeaders:
		if l > maxHeaders {
			return ErrHeadersSize
		}
		r.headers = r.headers[:0]
	case frameData:
		if r.Status == 0 {
			return ErrDataFirst
		}
	case frameSettings, 0x03, 0x07, 0x0d: // SETTINGS, CANCEL_PUSH, GOAWAY, MAX_PUSH_ID
		return ErrForbiddenFrm
	}
	r.inFrame, r.ftype, r.remain = true, t, l
	return nil
}

// end finishes the current frame.
func (r *Response) end() error {
	r.inFrame = false
	if r.ftype != frameHeaders {
		return nil
	}
	if r.Status != 0 {
		return nil // trailers
	}
	s, err := DecodeStatus(r.headers, &r.huff)
	if err != nil {
		return err
	}
	if s >= 200 {
		r.Status = s
	} // 1xx: informational, the final HEADERS follows
	return nil
}

package backend

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
)

// h3Handler answers the same endpoints as handleFast for net/http's
// servers, HTTP/3 and HTTP/2, from the same routing and bodies.
type h3Handler struct{ s *Server }

// ServeHTTP answers one HTTP/3 or HTTP/2 request.
func (h h3Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	s := h.s
	r := resolve(req.URL.Path)
	hdr := w.Header()
	if r.kind == kindStats {
		b := appendStats(make([]byte, 0, 96), s.Stats())
		writeFixed(w, http.StatusOK, ctJSON, b)
		return
	}
	s.requests.Add(1)
	done := req.Context().Done()
	s.stall.wait(done)

	switch r.kind {
	case kindBody:
		writeFixed(w, http.StatusOK, r.ctype, r.body)
	case kindClose:
		// Neither HTTP/2 nor HTTP/3 has a Connection header. x/net's HTTP/2
		// server reads "Connection: close" as: GOAWAY, then close once
		// idle; over HTTP/3 /close is plain /1k.
		if req.ProtoMajor == 2 {
			hdr.Set("Connection", "close")
		}
		writeFixed(w, http.StatusOK, r.ctype, r.body)
	case kindDelay:
		sleep(r.delay, done)
		s.stall.wait(done)
		writeFixed(w, http.StatusOK, r.ctype, r.body)
	case kindChunked:
		// No length: the body goes out as several DATA frames, one per flush.
		hdr.Set("Content-Type", r.ctype)
		w.WriteHeader(http.StatusOK)
		fl, _ := w.(http.Flusher)
		for off := 0; off < len(r.body); off += chunkSize {
			if _, err := w.Write(r.body[off:min(off+chunkSize, len(r.body))]); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		}
	case kindStatus:
		writeFixed(w, r.status, ctText, []byte(statusBody(r.status, http.StatusText(r.status))))
	case kindEcho:
		writeFixed(w, http.StatusOK, ctText, echoHTTP(req))
	case kindBad:
		writeFixed(w, http.StatusBadRequest, ctText, []byte(r.msg))
	case kindUpgrade:
		writeFixed(w, http.StatusBadRequest, ctText, []byte(upgradeOverH3))
	default:
		writeFixed(w, http.StatusNotFound, ctText, []byte(notFoundBody))
	}
}

// writeFixed answers status with a body of known length.
func writeFixed(w http.ResponseWriter, status int, ctype string, body []byte) {
	hdr := w.Header()
	hdr.Set("Content-Type", ctype)
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// echoHTTP builds the /echo body for a net/http request: Host first (net/http
// keeps it outside Header), then the headers sorted by name, one line per
// value.
func echoHTTP(req *http.Request) []byte {
	b := make([]byte, 0, 512)
	b = appendEchoHead(b, req.Method, req.RequestURI, req.Proto, req.RemoteAddr)
	if req.Host != "" {
		b = appendHeaderLine(b, "Host", req.Host)
	}
	for _, k := range slices.Sorted(maps.Keys(req.Header)) {
		for _, v := range req.Header[k] {
			b = appendHeaderLine(b, k, v)
		}
	}
	return b
}

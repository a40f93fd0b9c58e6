package result

import (
	"fmt"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// orWhole is s, or the whole run (shard 0 of 1) for nil.
func (s *ShardInfo) orWhole() ShardInfo {
	if s == nil {
		return ShardInfo{Index: 0, Count: 1}
	}
	return *s
}

// EncodeHist returns h in the V2 compressed encoding, base64.
func EncodeHist(h *hdr.Histogram) (string, error) {
	if h == nil {
		return "", nil
	}
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHist decodes a histogram written by EncodeHist (or any
// HdrHistogram V2 compressed base64 encoding); "" gives nil.
func DecodeHist(s string) (*hdr.Histogram, error) {
	if s == "" {
		return nil, nil
	}
	h, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	if h.TotalCount() < 0 {
		return nil, fmt.Errorf("decode histogram: negative total count")
	}
	return h, nil
}

package wire

// PacketNumberLen is the length of every packet number this client sends:
// four bytes, so that the header protection sample always starts right
// after it (RFC 9001 §5.4.2) and no acknowledgement state is needed to
// choose a shorter one.
const PacketNumberLen = 4

// DecodePacketNumber recovers a full packet number from its truncated
// value of n bytes, given the largest packet number received so far in
// its space (-1 if none), as RFC 9000 §A.3 does.
func DecodePacketNumber(largest int64, truncated uint64, n int) uint64 {
	expected := uint64(largest + 1)
	win := uint64(1) << (8 * n)
	hwin := win / 2
	mask := win - 1
	candidate := (expected &^ mask) | truncated
	switch {
	case candidate+hwin <= expected && candidate+win < 1<<62:
		return candidate + win
	case candidate > expected+hwin && candidate >= win:
		return candidate - win
	}
	return candidate
}

package gen

import (
	"fmt"
	"testing"
)

func TestShareSplitsRemainderToLowIndexes(t *testing.T) {
	var got []int
	for i := 0; i < 4; i++ {
		got = append(got, Shard{Index: i, Count: 4}.Share(50))
	}
	if fmt.Sprint(got) != "[13 13 12 12]" {
		t.Fatalf("50 over 4 shards: %v, want [13 13 12 12]", got)
	}
	if n := (Shard{}).Share(50); n != 50 {
		t.Fatalf("unsharded share %d, want 50", n)
	}
}

package gen

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/gen/result"
)

// TestResultWords: the generator's notes name Config fields as {Field};
// Words renders them with the caller's names (the CLI's flags), in the
// result's own generator and in every merged shard's, or as the plain
// field names with nil, and leaves other braces alone.
func TestResultWords(t *testing.T) {
	mk := func() *result.Result {
		r := &result.Result{}
		r.Generator.IONote = "epoll: {IO} auto fell back from io_uring"
		r.Generator.Notes = []string{"groups are the preset's, not {TLS.Curves}", "{not a field} stays"}
		r.Shards = []result.ShardSummary{{Generator: result.Generator{IONote: "asked for ({IO} epoll)"}}}
		return r
	}
	flag := map[string]string{"IO": "--io", "TLS.Curves": "--curves"}
	r := mk()
	r.Words(func(f string) string { return flag[f] })
	got := strings.Join(append([]string{r.Generator.IONote, r.Shards[0].Generator.IONote}, r.Generator.Notes...), " | ")
	if want := "epoll: --io auto fell back from io_uring | asked for (--io epoll) | groups are the preset's, not --curves | {not a field} stays"; got != want {
		t.Errorf("with flags:\n got %q\nwant %q", got, want)
	}
	r = mk()
	r.Words(nil)
	if r.Generator.IONote != "epoll: IO auto fell back from io_uring" || r.Generator.Notes[0] != "groups are the preset's, not TLS.Curves" {
		t.Errorf("with field names: %q, %q", r.Generator.IONote, r.Generator.Notes)
	}
}

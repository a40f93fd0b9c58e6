package h1

import (
	"testing"

	wire "github.com/loadlab/loadlab/gen/h1"
	"github.com/loadlab/loadlab/gen/internal/run"
)

// TestClassifyH1 checks that the HTTP/1 parser's errors land in their
// classes: a response cut short is closed, a malformed one parse.
func TestClassifyH1(t *testing.T) {
	if c := classify(wire.ErrClosedEarly); c != run.ClassClosed {
		t.Errorf("wire.ErrClosedEarly classifies as %v, want closed", c)
	}
	var p wire.Parser
	_, _, err := p.Feed([]byte("garbage\r\n\r\n"))
	if c := classify(err); err == nil || c != run.ClassParse {
		t.Errorf("a malformed status line (%v) classifies as %v, want parse", err, c)
	}
}

package gen

import (
	"testing"

	"github.com/loadlab/loadlab/gen/h1"
)

// TestClassifyH1 checks that the HTTP/1 parser's errors land in their
// classes: a response cut short is closed, a malformed one parse.
func TestClassifyH1(t *testing.T) {
	if c := classify(h1.ErrClosedEarly); c != ErrClosed {
		t.Errorf("h1.ErrClosedEarly classifies as %v, want closed", c)
	}
	var p h1.Parser
	_, _, err := p.Feed([]byte("garbage\r\n\r\n"))
	if c := classify(err); err == nil || c != ErrParse {
		t.Errorf("a malformed status line (%v) classifies as %v, want parse", err, c)
	}
}

package gen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/loadlab/loadlab/pin"
)

// TestRequestsBelowLoops: --requests smaller than the number of loops
// sends exactly that many and ends; the loops without a share once ran
// unlimited for the whole duration (58,172 requests for -n 1 on 2 CPUs).
func TestRequestsBelowLoops(t *testing.T) {
	cpus, err := pin.Allowed()
	if err != nil || len(cpus) < 2 {
		t.Skipf("needs 2 CPUs (have %v, %v)", cpus, err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	for _, rate := range []float64{0, 100} {
		start := time.Now()
		res, err := Run(context.Background(), Config{URL: srv.URL + "/", Connections: 2, CPUs: cpus[:2], Requests: 1, Rate: rate,
			Duration: 5 * time.Second, Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests != 1 || res.OK != 1 {
			t.Errorf("rate %g: -n 1 over 2 loops sent %d requests (%d ok), want 1", rate, res.Requests, res.OK)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("rate %g: the run took %v; it should end after its one request", rate, d.Round(time.Millisecond))
		}
	}
}

package backend

import (
	"strings"
	"testing"
	"time"
)

func TestStallRemaining(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := staller{start: t0, every: 5 * time.Second, dur: time.Second}
	cases := []struct {
		at   time.Duration
		want time.Duration
	}{
		{0, 0},                       // no window at k=0
		{500 * time.Millisecond, 0},  // still no window at k=0
		{4999 * time.Millisecond, 0}, // just before the first window
		{5 * time.Second, time.Second},
		{5300 * time.Millisecond, 700 * time.Millisecond},
		{5999 * time.Millisecond, time.Millisecond},
		{6 * time.Second, 0}, // window is half-open
		{9 * time.Second, 0},
		{10200 * time.Millisecond, 800 * time.Millisecond}, // k=2
		{-time.Second, 0},                                  // clock before start
	}
	for _, c := range cases {
		if got := s.remaining(t0.Add(c.at)); got != c.want {
			t.Errorf("remaining at start+%s = %s, want %s", c.at, got, c.want)
		}
	}
	off := staller{start: t0}
	if got := off.remaining(t0.Add(5 * time.Second)); got != 0 {
		t.Errorf("disabled staller waits %s", got)
	}
}

func TestSleepReturnsOnDone(t *testing.T) {
	done := make(chan struct{})
	close(done)
	t0 := time.Now()
	sleep(time.Hour, done)
	if time.Since(t0) > time.Minute {
		t.Fatal("sleep ignored done")
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string // substring of the error, "" for valid
	}{
		{Config{}, ""},
		{Config{StallEvery: 5 * time.Second, StallFor: time.Second}, ""},
		{Config{StallEvery: 5 * time.Second}, "both StallEvery and StallFor"},
		{Config{StallFor: time.Second}, "both StallEvery and StallFor"},
		{Config{StallEvery: time.Second, StallFor: time.Second}, "shorter than"},
		{Config{StallEvery: -time.Second, StallFor: -2 * time.Second}, "negative"},
		{Config{TLSCert: "c.pem"}, "both TLSCert and TLSKey"},
		{Config{H3: true}, "H3 requires"},
		{Config{H3: true, TLSCert: "c", TLSKey: "k"}, ""},
		{Config{Concurrency: -1}, "concurrency"},
		{Config{Apps: []string{"127.0.0.1:0", "127.0.0.1:0"}}, ""},
		{Config{Apps: []string{"127.0.0.1:0", " "}}, "address 2 is empty"},
		{Config{Apps: []string{"127.0.0.1:0"}, H2: true}, "plain HTTP/1.1"},
		{Config{Apps: make([]string, MaxApps+1)}, "at most"},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: unexpected error %v", c.cfg, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: error %v, want one containing %q", c.cfg, err, c.want)
		}
	}
}

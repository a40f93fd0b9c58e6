package result

// Tally is the part of a result that adds up: loop by loop within a run,
// and shard by shard across the shards of one. It holds the owed requests
// by outcome, the bytes read, the retries, the handshakes and the TLS
// resumptions. Add is the one sum both use: gen assembles a run's result
// from its loops' tallies, and Merger adds the shards' (TallyOf).
type Tally struct {
	Requests   uint64            // owed in the measured window: OK + non-2xx + errors
	OK         uint64            // 2xx
	Status     map[string]uint64 // by status code, measured window
	Errors     map[string]uint64 // by error class
	Samples    map[string]string // first message per error class: the first one added wins
	Retries    uint64
	BytesRead  uint64
	Handshakes uint64
	Resumed    uint64 // TLS sessions resumed
	ZeroRTT    uint64 // HTTP/3 requests sent as accepted 0-RTT early data
}

// Add adds o to t. A class or status that o has with a count of 0 is
// kept: it says the class was counted.
func (t *Tally) Add(o Tally) {
	t.Requests += o.Requests
	t.OK += o.OK
	t.Retries += o.Retries
	t.BytesRead += o.BytesRead
	t.Handshakes += o.Handshakes
	t.Resumed += o.Resumed
	t.ZeroRTT += o.ZeroRTT
	t.Status = addCounts(t.Status, o.Status)
	t.Errors = addCounts(t.Errors, o.Errors)
	for k, v := range o.Samples {
		if _, seen := t.Samples[k]; !seen {
			if t.Samples == nil {
				t.Samples = map[string]string{}
			}
			t.Samples[k] = v
		}
	}
}

// TallyOf reads r's tally.
func TallyOf(r *Result) Tally {
	t := Tally{
		Requests: r.Requests, OK: r.OK, Status: r.Status, Errors: r.Errors, Samples: r.ErrorSamples,
		Retries: r.Retries, BytesRead: r.BytesRead, Handshakes: r.Handshakes,
	}
	if r.TLS != nil {
		t.Resumed, t.ZeroRTT = r.TLS.Resumed, r.TLS.ZeroRTT
	}
	return t
}

// Set writes t into r: its counts, and the TLS resumptions when r has TLS
// sessions. The maps are shared with t; Status and Errors are never nil.
func (t Tally) Set(r *Result) {
	r.Requests, r.OK, r.Retries, r.BytesRead, r.Handshakes = t.Requests, t.OK, t.Retries, t.BytesRead, t.Handshakes
	r.Status, r.Errors, r.ErrorSamples = t.Status, t.Errors, t.Samples
	if r.Status == nil {
		r.Status = map[string]uint64{}
	}
	if r.Errors == nil {
		r.Errors = map[string]uint64{}
	}
	if r.TLS != nil {
		r.TLS.Resumed, r.TLS.ZeroRTT = t.Resumed, t.ZeroRTT
	}
}

func addCounts(sum, m map[string]uint64) map[string]uint64 {
	for k, v := range m {
		if sum == nil {
			sum = map[string]uint64{}
		}
		sum[k] += v
	}
	return sum
}

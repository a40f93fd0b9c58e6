package report

// Thresholds of the findings. A finding is written only when the measured
// numbers cross them; nothing here is printed regardless of the data.
const (
	exhaustedShare   = 0.8  // TIME_WAIT at or above this share of the port range counts as "reached the range"
	newConnPerReq    = 0.9  // backend connections per request at or above: "a new connection per request"
	reusedPerReq     = 0.1  // at or below: "connections reused"
	leakShare        = 0.3  // TIME_WAIT at or above this share of the range counts as a leak
	leakMinTimeWait  = 1000 // a pool leak: at least this many closed backend connections in TIME_WAIT
	slowdownRatio    = 0.75 // last third of a run below this share of the first third: "slowed down"
	cycleMinSeconds  = 3    // a working or failing stretch lasts at least this long
	keyCostRatio     = 2.0  // handshake rates differing by this factor or more
	queueingP50Us    = 50_000
	collapseShare    = 0.5 // delivered below this share of the last passing rate: "collapsed"
	scaleFlat        = 1.2 // less than this gain from more CPUs: "did not scale"
	scaleLinearShare = 0.85
	memGrowth        = 3.0 // memory under load at least this times idle...
	memGrowthMin     = 50 << 20
	tailRatio        = 20     // p95 at least this times p50...
	tailMinUs        = 50_000 // ...and at least this long
)

// knownFix names the profile that fixes a backend-connection problem of a
// profile, for when the run did not measure the fix itself.
var knownFix = map[string]string{
	"nginx-stock":      "nginx-keepalive",
	"nginx-stock-1.22": "nginx-keepalive",
	"nginx-npm":        "nginx-keepalive",
	"caddy-stock":      "caddy-pool128",
	"nginx-keepalive":  "nginx-keepalive128",
}

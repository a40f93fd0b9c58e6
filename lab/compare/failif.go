package compare

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/loadlab/loadlab/internal/units"
)

// String writes the rule as ParseRules reads it.
func (r Rule) String() string {
	s := strconv.FormatFloat(r.Percent, 'f', -1, 64)
	if r.Percent >= 0 {
		s = "+" + s
	}
	return string(r.Metric) + r.Op + s + "%"
}

// metricNames maps the names a rule may use to metrics.
var metricNames = map[string]Metric{
	"rate": Rate, "2xx/s": Rate, "p50": P50, "p99": P99, "p99.9": P999, "p999": P999,
	"errors": Errors, "cpu": CPU, "mem": Mem, "memory": Mem,
}

const ruleHelp = "want METRIC>+N% or METRIC<-N%, comma-separated, e.g. 'p99>+10%,rate<-5%' (metrics: rate, p50, p99, p99.9, errors, cpu, mem)"

// percentRE is a rule's number: an optional sign, digits, an optional
// fraction.
var percentRE = regexp.MustCompile(`^[+-]?[0-9]{1,7}(\.[0-9]{1,6})?$`)

// maxRules bounds a --fail-if list.
const maxRules = 64

// ParseRules reads a --fail-if list: rules separated by commas, each
// METRIC, > or <, and a signed percentage. Errors are one line.
func ParseRules(s string) ([]Rule, error) {
	var out []Rule
	parts := strings.Split(s, ",")
	if len(parts) > maxRules {
		return nil, inputErr("--fail-if: %d rules, at most %d", len(parts), maxRules)
	}
	for i, part := range parts {
		r, err := parseRule(strings.TrimSpace(part))
		if err != nil {
			return nil, inputErr("--fail-if rule %d %s: %v; %s", i+1, strconv.Quote(units.Clip(strings.TrimSpace(part), 43)), err, ruleHelp)
		}
		out = append(out, r)
	}
	return out, nil
}

func parseRule(s string) (Rule, error) {
	i := strings.IndexAny(s, "<>")
	if i < 0 {
		return Rule{}, fmt.Errorf("no > or <")
	}
	name := strings.ToLower(strings.TrimSpace(s[:i]))
	m, ok := metricNames[name]
	if !ok {
		if name == "" {
			return Rule{}, fmt.Errorf("no metric before %c", s[i])
		}
		return Rule{}, fmt.Errorf("unknown metric %s", strconv.Quote(units.Clip(strings.TrimSpace(name), 43)))
	}
	op := s[i : i+1]
	rest := strings.TrimSpace(s[i+1:])
	num, ok := strings.CutSuffix(rest, "%")
	if !ok {
		return Rule{}, fmt.Errorf("the threshold must be a percentage (%s)", strconv.Quote(units.Clip(strings.TrimSpace(rest), 43)))
	}
	num = strings.TrimSpace(num)
	if !percentRE.MatchString(num) {
		return Rule{}, fmt.Errorf("bad percentage %s", strconv.Quote(units.Clip(strings.TrimSpace(num), 43)))
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < -100 || v > 1e6 {
		return Rule{}, fmt.Errorf("bad percentage %s (want a number from -100 to 1000000)", strconv.Quote(units.Clip(strings.TrimSpace(num), 43)))
	}
	if v == 0 {
		v = 0 // no -0
	}
	return Rule{Metric: m, Op: op, Percent: v, Threshold: v / 100}, nil
}

// fires reports whether a metric's result breaks the rule: the
// comparison calls it different (the test found it significant and it
// exceeds the floor) and its change is beyond the threshold.
func (r Rule) fires(res Result) bool {
	if res.Metric != r.Metric || !res.Different {
		return false
	}
	c := res.Change()
	if r.Op == ">" {
		return c > r.Threshold
	}
	return c < r.Threshold
}

// Check applies rules to every row of the report, records what each
// found, and sets Failed when one fired.
func (rep *Report) Check(rules []Rule) {
	rep.Checks = nil
	rep.Failed = false
	for _, r := range rules {
		rr := RuleResult{Rule: r.String()}
		for _, row := range rep.Rows {
			for _, m := range row.Metrics {
				if r.fires(m) {
					rr.Failed = true
					rr.Rows = append(rr.Rows, fmt.Sprintf("%s: %s %s", row.Key, m.Metric, changeWords(m)))
				}
			}
		}
		rep.Failed = rep.Failed || rr.Failed
		rep.Checks = append(rep.Checks, rr)
	}
}

// changeWords writes a change as a signed percentage ("+12.3%", "+∞").
func changeWords(m Result) string {
	c := m.Change()
	if math.IsInf(c, 1) {
		return "+∞"
	}
	return fmt.Sprintf("%+.1f%%", 100*c)
}

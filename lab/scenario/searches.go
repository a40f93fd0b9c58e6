package scenario

import (
	"context"
	"errors"

	"github.com/loadlab/loadlab/internal/units"

	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
)

// searches runs the round's searches of the unit (the scenario's runs),
// each with its confirmations (in netns mode every step starts in fresh
// namespaces; in loopback mode a cool-down separates the searches), and
// records them: Search is the one whose rate found is the median over
// every round so far (the lower middle for an even count), Searches all
// of them with SearchRun the median's place. A unit of one search in all
// records Search alone, its steps untagged. A later round's searches
// start from the earlier rounds' bracket (priorBracket).
func (u *unitRun) searches(ctx context.Context, cfg search.Config) error {
	n := max(u.spec.Scenario.Runs, 1)
	total := u.allRuns()
	var all []search.Result
	if total > 1 {
		keep := min((max(u.round, 1)-1)*n, len(u.rec.Searches))
		for _, s := range u.rec.Searches[:keep] {
			all = append(all, *s)
		}
	}
	cfg.Prior = u.priorBracket()
	if cfg.Prior.Lo > 0 {
		u.r.prog.printf("    %s %s: round %d starts from the earlier rounds' bracket, %s to %s req/s", u.spec.Scenario.Name, u.spec.Profile.Name, u.round, units.Rate(cfg.Prior.Lo), units.Rate(cfg.Prior.Hi))
	}
	for i := 1; i <= n; i++ {
		tag := u.roundTag(i)
		if total == 1 {
			tag = 0
		}
		if i > 1 {
			u.r.prog.printf("    %s %s: search %d of %d", u.spec.Scenario.Name, u.spec.Profile.Name, tag, total)
			if err := u.cool(ctx, u.seq); err != nil {
				return err
			}
		}
		res, err := u.search(ctx, cfg, tag)
		var died errDied
		if errors.As(err, &died) {
			// The proxy or the backend died in a step: the unit's
			// search ends there (liveness.go); the row is marked.
			res.Note = died.msg + "; the search ended there"
			all = append(all, res)
			break
		}
		if err != nil {
			return err
		}
		all = append(all, res)
	}
	mid := search.Median(all)
	return u.r.Store.Update(func(*results.File) {
		med := all[mid]
		u.rec.Search = &med
		u.rec.Searches, u.rec.SearchRun = nil, 0
		if total > 1 {
			for i := range all {
				u.rec.Searches = append(u.rec.Searches, &all[i])
			}
			u.rec.SearchRun = mid + 1
		}
	})
}

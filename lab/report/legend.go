package report

// legend says once for the whole report what the tables' columns are,
// instead of under each table: the memory, knob, Limited by and headroom
// columns of the scenario tables, and Limited by of the files table.
func legend(r *Report) []string {
	if len(r.Sections) > 0 {
		return []string{memoryLegend, limitLegend, knobsLegend, headroomLegend}
	}
	if r.Files != nil || r.Scaling != nil || r.Protocols != nil {
		return []string{limitLegend}
	}
	return nil
}

package gen

// newEngine builds the engine of the run's protocol.
func newEngine(r *run) (engine, error) {
	switch {
	case r.cfg.HTTP3 && r.tls.Lean != nil:
		return asEngine(newH3LeanEngine(r))
	case r.cfg.HTTP3:
		return asEngine(newH3Engine(r))
	case r.cfg.HTTP2:
		return asEngine(newH2Engine(r))
	}
	return asEngine(newH1Engine(r))
}

// asEngine passes an engine constructor's result on as an engine (and a
// failed one as a nil interface, not a nil pointer in one).
func asEngine[E engine](e E, err error) (engine, error) {
	if err != nil {
		return nil, err
	}
	return e, nil
}

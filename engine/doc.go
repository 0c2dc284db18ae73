// Package engine runs a plan: setup, then each stage of the sweep with all
// its scenarios' virtual users at the same time, then teardown. It owns the
// goroutines of a run, paces them by the workload model, records every
// operation into metrics and stops cleanly on interrupt, running teardown
// and keeping everything measured so far.
package engine

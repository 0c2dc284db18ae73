//go:build race

package metrics

// The race detector drops what is put in a sync.Pool at random: counts of
// allocations that rely on a pool mean nothing under it.
func init() { raceEnabled = true }

//go:build !unix

package doctor

// fileLimit is not known off Unix.
func fileLimit() *Limit { return nil }

//go:build !linux

package engine

// readHostLimits knows no limits off Linux: none is checked.
func readHostLimits() hostLimits { return hostLimits{} }

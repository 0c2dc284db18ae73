//go:build !linux

package cede

import "time"

// A pauser off Linux sleeps on a Go timer.
type pauser struct{}

func newPauser() pauser { return pauser{} }

func (pauser) pause(d time.Duration) { time.Sleep(d) }

func (pauser) close() {}

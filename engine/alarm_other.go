//go:build !linux

package engine

import (
	"context"
	"time"
)

// An alarm wakes the arrival pacer at an iteration's due time; off Linux it
// is a Go timer.
type alarm struct {
	ctx   context.Context
	timer *time.Timer
}

func newAlarm(ctx context.Context, _ func() bool) *alarm {
	return &alarm{ctx: ctx, timer: time.NewTimer(time.Hour)}
}

// wait returns at t, at once if t has passed; false if the context ended first.
func (a *alarm) wait(t time.Time) bool { return sleepUntil(a.ctx, a.timer, t) }

func (a *alarm) close() { a.timer.Stop() }

package engine

import (
	"context"
	"time"
)

// sleepUntil waits on timer until t (at once if t has passed); false if ctx
// ended first. It is the alarm where no precise one can be had: a Go timer
// may wake up to a millisecond late (alarm_linux.go says why).
func sleepUntil(ctx context.Context, timer *time.Timer, t time.Time) bool {
	if wait := time.Until(t); wait > 0 {
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return false
		case <-timer.C:
		}
	}
	return ctx.Err() == nil
}

package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// signalMoment is how close together two stop signals are one request to
// stop: GNU timeout signals the process and then its process group, a
// supervisor may signal each process of a container, and the two arrive
// microseconds apart, or a moment apart on a busy machine.
const signalMoment = time.Second

// onStopSignals calls stop at the first SIGINT or SIGTERM, and quit at a
// later one that comes more than signalMoment after the first (a person
// pressing Ctrl-C again); signals within the moment are the first one
// again. Both get the signal. The returned function stops listening.
func onStopSignals(stop, quit func(os.Signal)) (cancel func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		var first time.Time
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				switch {
				case first.IsZero():
					first = time.Now()
					stop(sig)
				case time.Since(first) > signalMoment:
					quit(sig)
				}
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

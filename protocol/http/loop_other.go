//go:build !linux

package http

import (
	"errors"
	"time"
)

// Loop is the event loop of http.event_loop, which needs Linux's epoll.
type Loop struct{}

// Exchange is a VU's connection on a Loop.
type Exchange struct{}

// Timer calls a function on a Loop's goroutine.
type Timer struct{}

type loopTLS struct{}

// NewLoop fails on this system: http.event_loop needs Linux.
func (c *Client) NewLoop() (*Loop, error) {
	return nil, errors.New("http.event_loop needs Linux (epoll)")
}

func (l *Loop) Post(func())                                     {}
func (l *Loop) Stop()                                           {}
func (l *Loop) InFlight(time.Duration) int                      { return 0 }
func (l *Loop) Close()                                          {}
func (l *Loop) Run()                                            {}
func (l *Loop) NewTimer(func()) *Timer                          { return nil }
func (l *Loop) Schedule(*Timer, time.Duration)                  {}
func (l *Loop) ScheduleAt(*Timer, time.Time)                    {}
func (l *Loop) Cancel(*Timer) bool                              { return false }
func (l *Loop) NewExchange() *Exchange                          { return nil }
func (x *Exchange) Send(*Request, Vars, *Scratch, func(Result)) {}
func (x *Exchange) Close()                                      {}

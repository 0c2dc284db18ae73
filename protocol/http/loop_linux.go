//go:build linux

package http

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/perflab/perflab/internal/monoclock"
	"github.com/perflab/perflab/metrics"
)

// Loop runs the HTTP/1.1 exchanges of many virtual users on one goroutine
// over raw edge-triggered epoll (http.event_loop), the shape of wrk: no
// goroutine is parked and woken per response. Everything but Post runs on
// the loop's goroutine: Send, Schedule and the callbacks they lead to.
//
// A request is written as soon as it is built; its response is framed as
// its bytes arrive (wire.go) and judged by the step's checks like any
// other; its latency runs from just before the write (or the connect, for
// a new connection) to the read that completes it, as Client.Do's does.
//
// The loop waits in the Go runtime's own netpoller, on its epoll
// descriptor (an epoll set is itself pollable), never in a blocking system
// call: every system call of the loop is non-blocking and made raw, so the
// runtime has no P to take back from a thread stuck in the kernel, and its
// monitor thread (sysmon) sleeps instead of waking tens of thousands of
// times a second (bench/README.md measures what this saves).
type Loop struct {
	c       *Client
	view    view // what finish judges a response on
	ep, efd int
	xs      []*Exchange
	events  []syscall.EpollEvent
	timers  timerHeap
	epoch   time.Time
	// anchor is a recent time.Now and anchorAt its now(): request starts
	// are stamped from it, and it is taken again every second so that the
	// wall clock's corrections reach requests.csv.
	anchor   time.Time
	anchorAt int64
	rbuf     []byte // reads land here when the response's buffer is short of room
	// bufs are response buffers no exchange holds: an HTTP/1.1 exchange
	// takes one as its response begins and gives it back once the
	// response is judged, so that a VU in think time holds none.
	bufs  [][]byte
	done  []*Exchange
	spare []*Exchange
	// later are exchanges whose reads were put off (readLater).
	later, laterSpare []*Exchange
	stopped           bool
	// busy counts exchanges with a request in flight, for the timeout scan;
	// due is the earliest deadline among them (or earlier: one of a request
	// that has completed since), and the scan runs at the later of due and
	// nextScan. The loop's wait is thus bounded by the requests' timeouts,
	// not by the scan's period: in a virtual machine each wait that ends
	// before the next scheduler tick costs the kernel two reprogrammings of
	// the timer hardware, each an exit to the hypervisor (bench/README.md).
	busy     int
	due      int64
	nextScan int64
	addrs    map[string]syscall.Sockaddr
	noPwait2 bool
	// HTTP/2's header names and values, made strings once (Loop.h2name).
	h2names, h2values map[string]string
	// The timers' alarm: a timerfd in the epoll set, armed for the
	// earliest timer (tAt, in now() nanoseconds; -1 when disarmed or
	// fired). A timer is thus woken for by the kernel's high-resolution
	// timer, to within microseconds, where a wait in the runtime's
	// netpoller ends on a whole millisecond: an arrival-rate model would
	// start its iterations up to 1 ms late, on a 1 ms grid. tfd is -1
	// where no timerfd could be made; the timers then bound the wait.
	tfd       int
	tAt       int64
	monoEpoch int64 // CLOCK_MONOTONIC at epoch (monoclock.Now)
	// wakeLate is how late the alarm's wake-ups come, on average (a
	// moving mean, at most maxWakeLate): on a virtual machine whose idle
	// CPU the hypervisor parks, tens of microseconds. A timer due further
	// ahead than twice that is woken for that much early (earlyFor is its
	// time), and the loop polls, without waiting, until it is due: the
	// wake-up's latency no longer delays it, and the polling lasts only
	// as long as a wake-up came sooner than on average.
	wakeLate, earlyFor int64

	// The epoll set as a file registered with the runtime's netpoller
	// (nil where it cannot be: the loop then blocks in epoll_pwait2).
	epf     *os.File
	epc     syscall.RawConn
	pollFn  func(uintptr) bool
	polled  int // events pollFn found
	pollErr error
	// The read deadline of epf, in now() nanoseconds, when armed (it may
	// have passed).
	deadline int64
	armed    bool

	mu     sync.Mutex
	posted []func()
	closed bool // the eventfd is closed: its number may be another file's now
}

// timeoutScan is how often requests in flight are checked against their
// deadlines: a timeout is reported at most this late.
const timeoutScan = 2 * time.Millisecond

// NewLoop returns an event loop sending with c's options. Run it on a
// goroutine of its own.
func (c *Client) NewLoop() (*Loop, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	efd, _, errno := syscall.Syscall(syscall.SYS_EVENTFD2, 0, syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if errno != 0 {
		syscall.Close(ep)
		return nil, errno
	}
	l := &Loop{c: c, ep: ep, efd: int(efd), events: make([]syscall.EpollEvent, 512),
		rbuf: make([]byte, 64<<10), addrs: map[string]syscall.Sockaddr{}}
	// The timerfd's clock and now()'s, read as one (monoclock.Now): an
	// allocation between the two reads above, which met a collection,
	// once made every alarm of a run ring 100-500 µs late.
	l.epoch, l.monoEpoch = monoclock.Now()
	l.anchor = l.epoch
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: evPosted}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, l.efd, &ev); err != nil {
		syscall.Close(ep)
		syscall.Close(l.efd)
		return nil, err
	}
	l.tfd, l.tAt = -1, -1
	if !GoTimers { // else the timers bound the wait, as before the timerfd
		l.openAlarm()
	}
	l.pollFn = func(uintptr) bool {
		l.polled, l.pollErr = l.poll()
		return l.polled > 0 || l.pollErr != nil
	}
	if syscall.SetNonblock(ep, true) == nil {
		f := os.NewFile(uintptr(ep), "epoll")
		// A file the netpoller did not take refuses deadlines.
		if f.SetReadDeadline(time.Time{}) == nil {
			if rc, err := f.SyscallConn(); err == nil {
				l.epf, l.epc = f, rc
			}
		}
		if l.epf == nil {
			syscall.SetNonblock(ep, false) //nolint:errcheck // epoll_wait ignores the flag
			// f owns ep now: keep it so that its finalizer cannot close ep.
			l.epf = f
			l.epc = nil
		}
	}
	return l, nil
}

// now is monotonic nanoseconds since the loop was made.
func (l *Loop) now() int64 { return int64(time.Since(l.epoch)) }

// Post runs f on the loop's goroutine soon; it may be called from any
// goroutine. After Run has returned, f is dropped.
func (l *Loop) Post(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.posted = append(l.posted, f)
	one := uint64(1)
	syscall.Write(l.efd, (*[8]byte)(unsafe.Pointer(&one))[:]) //nolint:errcheck // a full counter still wakes the loop
}

// InFlight is the number of exchanges with a request in flight, read on
// the loop's own thread; 0 for a loop that has ended (it closed its
// connections) or does not answer within timeout.
func (l *Loop) InFlight(timeout time.Duration) int {
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return 0
	}
	ch := make(chan int, 1)
	l.Post(func() { ch <- l.busy })
	select {
	case n := <-ch:
		return n
	case <-time.After(timeout):
		return 0
	}
}

// Stop makes Run return after the callbacks it is running.
func (l *Loop) Stop() { l.stopped = true }

// Run waits for events, timers and posted functions and runs their
// callbacks until Stop. It closes every connection before it returns.
func (l *Loop) Run() {
	defer l.close()
	for !l.stopped {
		var n int
		var err error
		if len(l.done) > 0 || len(l.later) > 0 {
			n, err = l.poll()
		} else {
			at := int64(-1) // when the loop must wake, in now() nanoseconds
			spin := false
			if len(l.timers) > 0 {
				top := l.timers[0].at
				switch now := l.now(); {
				case l.tfd < 0 || top <= now:
					at = top
				case l.earlyFor == top && top-now <= l.wakeLate:
					spin = true // woken early, as asked: poll until the timer is due
				case top-now > 2*l.wakeLate:
					l.earlyFor = top
					l.alarm(top - l.wakeLate)
				default:
					l.alarm(top)
				}
			}
			if l.busy > 0 {
				if scan := max(l.due, l.nextScan); at < 0 || scan < at {
					at = scan
				}
			}
			if spin {
				n, err = l.poll()
			} else {
				n, err = l.wait(at)
			}
		}
		if err != nil && !errors.Is(err, syscall.EINTR) {
			panic("perflab: epoll_wait: " + err.Error()) // a bad descriptor: a bug, not a load condition
		}
		for _, ev := range l.events[:max(n, 0)] {
			switch ev.Fd {
			case evPosted:
				l.runPosted()
				continue
			case evTimer:
				if l.tAt >= 0 {
					late := min(l.now()-l.tAt, maxWakeLate)
					l.wakeLate += (late - l.wakeLate) / 16
				}
				l.tAt = -1
				continue
			}
			l.xs[ev.Fd].event(ev)
		}
		l.readOn()
		l.runDone()
		now := l.now()
		if now-l.anchorAt > int64(time.Second) {
			l.anchor, l.anchorAt = time.Now(), l.now()
		}
		for len(l.timers) > 0 && l.timers[0].at <= now {
			t := heap.Pop(&l.timers).(*Timer)
			t.f()
		}
		l.runDone()
		if l.busy > 0 && now >= l.due && now >= l.nextScan {
			l.scan(now)
			l.runDone()
		}
	}
}

// maxWakeLate bounds how early the loop wakes for a timer (Loop.wakeLate).
const maxWakeLate = int64(100 * time.Microsecond)

// Epoll events of the loop's own descriptors (a connection's is its
// exchange's index).
const (
	evPosted = -1 // the eventfd of Post
	evTimer  = -2 // the timerfd of the timers
)

// openAlarm adds a timerfd to the epoll set for the timers; without one
// (none could be made) they bound the loop's wait instead.
func (l *Loop) openAlarm() {
	tfd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return
	}
	// Edge-triggered: every expiry is an event, unread.
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | -syscall.EPOLLET, Fd: evTimer}
	if syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, tfd, &ev) != nil {
		syscall.Close(tfd)
		return
	}
	l.tfd = tfd
}

// alarm arms the timerfd for at (in now() nanoseconds), unless it is
// armed for an earlier time already: an alarm that comes early for a timer
// since cancelled costs one more turn of Run, which arms it again.
func (l *Loop) alarm(at int64) {
	if l.tAt >= 0 && l.tAt <= at {
		return
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(l.monoEpoch + at)}
	_, _, errno := syscall.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(l.tfd), unix.TFD_TIMER_ABSTIME, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	if errno != 0 { // not seen; the timers bound the wait instead
		syscall.Close(l.tfd)
		l.tfd = -1
		return
	}
	l.tAt = at
}

// poll returns the events ready now, without waiting.
func (l *Loop) poll() (int, error) {
	n, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_WAIT, uintptr(l.ep), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), 0, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// wait returns the events that are ready, waiting for one until at (in
// now() nanoseconds; -1: no limit). It parks the goroutine in the runtime's
// netpoller until the epoll set is readable or the set's read deadline
// passes. The deadline is moved only when it would wake the loop too late,
// or has passed: a wake that comes early costs one more turn of Run, while
// each move costs a runtime timer update.
func (l *Loop) wait(at int64) (int, error) {
	if l.epc == nil {
		ns := int64(-1)
		if at >= 0 {
			ns = max(at-l.now(), 0)
		}
		return l.waitSyscall(ns)
	}
	if at >= 0 || l.armed {
		now := l.now()
		if at >= 0 && at <= now {
			return l.poll()
		}
		passed := l.armed && l.deadline <= now // Read would fail at once
		switch {
		case at >= 0 && (!l.armed || passed || at < l.deadline):
			l.epf.SetReadDeadline(l.epoch.Add(time.Duration(at))) //nolint:errcheck // the netpoller took the file in NewLoop
			l.deadline, l.armed = at, true
		case at < 0 && passed:
			l.epf.SetReadDeadline(time.Time{}) //nolint:errcheck // as above
			l.armed = false
		}
	}
	if err := l.epc.Read(l.pollFn); err != nil {
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, err
		}
		return l.poll() // pollFn may not have run
	}
	return l.polled, l.pollErr
}

// waitSyscall is epoll_pwait2 (a timeout in nanoseconds), else epoll_wait
// (milliseconds, rounded up), for a loop whose epoll set the netpoller
// could not take.
func (l *Loop) waitSyscall(ns int64) (int, error) {
	if !l.noPwait2 {
		var ts *syscall.Timespec
		if ns >= 0 {
			t := syscall.NsecToTimespec(ns)
			ts = &t
		}
		n, _, errno := syscall.Syscall6(sysEpollPwait2, uintptr(l.ep), uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), uintptr(unsafe.Pointer(ts)), 0, 0)
		// ENOSYS: before Linux 5.11; EPERM: a seccomp profile that does
		// not know the call (older container runtimes).
		if errno != syscall.ENOSYS && errno != syscall.EPERM {
			if errno != 0 {
				return 0, errno
			}
			return int(n), nil
		}
		l.noPwait2 = true
	}
	ms := -1
	if ns >= 0 {
		ms = int((ns + 999_999) / 1_000_000)
	}
	return syscall.EpollWait(l.ep, l.events, ms)
}

// sysEpollPwait2 is epoll_pwait2's number on every Linux architecture
// (5.11 and later).
const sysEpollPwait2 = 441

func (l *Loop) runPosted() {
	var b [8]byte
	syscall.Read(l.efd, b[:]) //nolint:errcheck // emptied; EAGAIN when already
	l.mu.Lock()
	fs := l.posted
	l.posted = nil
	l.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// runDone runs the callbacks of the exchanges that completed, except those
// that complete meanwhile (they run on the next round, after epoll has been
// asked again, so that a VU whose requests fail at once cannot starve the
// loop).
func (l *Loop) runDone() { drain(&l.done, &l.spare, handOver) }

// handOver calls the callback of an exchange that completed.
func handOver(x *Exchange) {
	f := x.then
	x.then = nil
	f(*x.res)
}

// drain calls f for each exchange of *list, which it empties first, and
// keeps the list's array in *spare for the next round: the exchanges that
// f adds to *list wait for the next call.
func drain(list, spare *[]*Exchange, f func(*Exchange)) {
	if len(*list) == 0 {
		return
	}
	batch := *list
	*list = (*spare)[:0]
	for _, x := range batch {
		f(x)
	}
	clear(batch)
	*spare = batch[:0]
}

// scan fails the requests in flight past their deadline and finds the
// earliest deadline of the others.
func (l *Loop) scan(now int64) {
	l.nextScan = now + int64(timeoutScan)
	l.due = math.MaxInt64 // lowered by the requests that failures' callbacks send
	due := int64(math.MaxInt64)
	for _, x := range l.xs {
		switch {
		case x.state == stateIdle:
		case x.state == stateResolving || x.state == stateConnecting:
			if now < x.connDeadline {
				due = min(due, x.connDeadline)
			} else if x.state == stateResolving {
				x.fail(metrics.DNS, "dns: timeout")
			} else {
				x.fail(metrics.Connect, "connect: timeout") // as the pooled client's dialer
			}
		case now >= x.deadline:
			x.fail(metrics.Timeout, "timeout")
		default:
			due = min(due, x.deadline)
		}
	}
	l.due = min(l.due, due)
}

// Close releases a loop that was never run.
func (l *Loop) Close() { l.close() }

func (l *Loop) close() {
	for _, x := range l.xs {
		x.closeConn()
	}
	if l.epf != nil {
		l.epf.Close() // it owns l.ep
	} else {
		syscall.Close(l.ep)
	}
	if l.tfd >= 0 {
		syscall.Close(l.tfd)
		l.tfd = -1
	}
	l.mu.Lock()
	l.closed = true
	syscall.Close(l.efd)
	l.mu.Unlock()
}

// Timer calls its function on the loop's goroutine when scheduled.
type Timer struct {
	at  int64
	idx int // in the heap; -1 when not scheduled
	f   func()
}

// NewTimer returns a timer that calls f.
func (l *Loop) NewTimer(f func()) *Timer { return &Timer{f: f, idx: -1} }

// Schedule (re)arms t to fire after d.
func (l *Loop) Schedule(t *Timer, d time.Duration) { l.schedule(t, l.now()+int64(d)) }

func (l *Loop) schedule(t *Timer, at int64) {
	t.at = at
	if t.idx >= 0 {
		heap.Fix(&l.timers, t.idx)
		return
	}
	heap.Push(&l.timers, t)
}

// ScheduleAt (re)arms t to fire at a time (with a monotonic reading, as
// time.Now gives: no clock is read).
func (l *Loop) ScheduleAt(t *Timer, at time.Time) { l.schedule(t, int64(at.Sub(l.epoch))) }

// Cancel disarms t; it reports whether t was armed.
func (l *Loop) Cancel(t *Timer) bool {
	if t.idx < 0 {
		return false
	}
	heap.Remove(&l.timers, t.idx)
	return true
}

type timerHeap []*Timer

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*Timer)
	t.idx = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	t.idx = -1
	*h = old[:len(old)-1]
	return t
}

const (
	stateIdle = iota
	stateResolving
	stateConnecting
	stateHandshaking // TLS (loop_tls.go)
	stateWriting
	stateReading
)

// Exchange is one VU's connection on a loop and the request it has in
// flight, if any.
type Exchange struct {
	l         *Loop
	id        int32
	gen       int32 // the connection's generation, in its epoll events
	fd        int   // -1 with no connection
	authority []byte
	lastUsed  int64
	state     uint8
	readable  bool   // data or a close arrived while the request was still being written
	later     bool   // in the loop's later
	inflight  bool   // counted in the loop's busy
	sending   bool   // inside Send: a result is queued, not handed over
	seq       uint64 // counts requests, for a name lookup that returns late

	req          *Request
	vars         Vars
	scr          *Scratch
	wbuf         []byte
	built        *Request // whose bytes wbuf holds
	url          []byte   // the URL of the request in flight
	originLen    int      // the length of its origin, which starts it
	wpos         int
	resp         response
	start        time.Time // when the step's first request was sent
	sent         time.Time // when the request in flight was sent
	deadline     int64
	connDeadline int64
	// res is a result queued for the callback (complete while sending):
	// made the first time one is (120 bytes an exchange otherwise).
	res  *Result
	then func(Result)
	hdr  func(string) ([]byte, bool)

	// tls is the connection's TLS when its origin (authority, as
	// scheme://host[:port]) is https (loop_tls.go).
	tls *tlsConn
	// h2 is the connection's HTTP/2 with http.version 2 (loop_h2.go).
	h2 *h2Conn
}

// NewExchange returns an exchange with no connection yet.
func (l *Loop) NewExchange() *Exchange {
	x := &Exchange{l: l, id: int32(len(l.xs)), fd: -1}
	x.hdr = x.resp.header
	l.xs = append(l.xs, x)
	return x
}

// maxIdle matches the pooled client's MaxIdleConnDuration: a connection
// idle longer is closed before the next request rather than reused.
const maxIdle = 4 * time.Second

// Send writes the request for vars and calls then with its result, on the
// loop's goroutine, once the response is whole or the request failed; the
// redirects and digest challenges it follows are sent on x in turn (on a
// connection to their origin). Nothing may be sent on x until then.
func (x *Exchange) Send(r *Request, vars Vars, s *Scratch, then func(Result)) {
	l := x.l
	x.req, x.vars, x.scr, x.then = r, vars, s, then
	x.seq++
	x.sending = true
	defer func() { x.sending = false }()
	s.begin()
	if err := x.build(); err != nil {
		x.queue(Result{Err: notSentKind(err), Detail: err.Error()})
		return
	}
	// One clock read: the wall time is the anchor's plus the monotonic time
	// since (time.Now reads both clocks).
	now := l.now()
	x.start = l.anchor.Add(time.Duration(now - l.anchorAt))
	x.sent = x.start
	x.deadline = now + int64(r.timeout)
	x.inflight = true
	if l.busy++; l.busy == 1 {
		l.nextScan = now + int64(timeoutScan)
		l.due = x.deadline
	} else {
		l.due = min(l.due, x.deadline)
	}
	x.transmit(now)
}

// build writes the exchange's next request into wbuf. A literal request's
// bytes are those of the last time, unless the VU has cookies or the
// request is a hop.
func (x *Exchange) build() error {
	r, s := x.req, x.scr
	cacheable := r.literal && s.jar == nil && s.ex.url == nil
	if cacheable && x.built == r {
		return nil
	}
	var origin []byte
	var err error
	x.wbuf, origin, err = x.l.c.appendRequest(x.wbuf[:0], r, x.vars, s)
	x.built = nil
	if err != nil {
		return err
	}
	if cacheable {
		x.built = r
	}
	x.url, x.originLen = append(x.url[:0], s.buf...), len(origin)
	return nil
}

// transmit sends the request in wbuf: on the connection x has, if it is to
// the request's origin and not idle too long, else on a new one.
func (x *Exchange) transmit(now int64) {
	x.wpos, x.readable = 0, false
	_, keep := x.l.c.bodyLimit(x.req)
	x.resp.reset(bytes.Equal(x.req.methodOf(x.scr), []byte("HEAD")), keep)
	origin := x.url[:x.originLen]
	if x.fd >= 0 && (!bytes.Equal(origin, x.authority) || now-x.lastUsed > int64(maxIdle) || x.h2spent()) {
		x.closeConn()
	}
	if x.fd < 0 {
		x.connect(origin, now)
		return
	}
	x.state = stateWriting
	x.write()
}

func (x *Exchange) connect(auth []byte, now int64) {
	l := x.l
	x.connDeadline = x.deadline
	if ct := l.c.opts.ConnectTimeout; ct > 0 {
		x.connDeadline = min(x.deadline, now+int64(ct))
		l.due = min(l.due, x.connDeadline)
	}
	if sa, ok := l.addrs[string(auth)]; ok {
		x.dial(sa, auth)
		return
	}
	a := string(auth)
	if host, _, err := net.SplitHostPort(hostPort(a)); err != nil || net.ParseIP(strings.Trim(host, "[]")) != nil {
		sa, kind, err := lookup(a, 0) // an address already: nothing to wait for
		if err != nil {
			x.fail(kind, err.Error())
			return
		}
		l.addrs[a] = sa
		x.dial(sa, auth)
		return
	}
	// A name is looked up on a goroutine of its own, so that a slow or
	// failing resolver holds up this request only; the timeout scan ends
	// it at its deadline like a connect.
	x.state = stateResolving
	seq, wait := x.seq, time.Duration(x.connDeadline-now)
	go func() {
		sa, kind, err := lookup(a, wait)
		l.Post(func() {
			if err == nil {
				l.addrs[a] = sa
			}
			if x.seq != seq || x.state != stateResolving {
				return // the request timed out meanwhile
			}
			if err != nil {
				x.fail(kind, err.Error())
				return
			}
			x.dial(sa, []byte(a))
		})
	}()
}

// dial opens a non-blocking connection to sa for the request in flight.
func (x *Exchange) dial(sa syscall.Sockaddr, auth []byte) {
	l := x.l
	family := syscall.AF_INET
	if _, ok := sa.(*syscall.SockaddrInet6); ok {
		family = syscall.AF_INET6
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		x.fail(connectKind(err), "connect: socket: "+err.Error())
		return
	}
	// Raw system calls (rawsys_linux.go), as the loop's reads and writes.
	rawSetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1) //nolint:errcheck // as Go's net package
	if err := rawConnect(fd, sa); err != nil && !errors.Is(err, syscall.EINPROGRESS) {
		rawClose(fd) //nolint:errcheck // a socket never connected
		x.fail(connectKind(err), "connect: "+err.Error())
		return
	}
	x.gen++
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLOUT | syscall.EPOLLRDHUP | -syscall.EPOLLET, Fd: x.id, Pad: x.gen}
	if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		rawClose(fd) //nolint:errcheck // as above
		x.fail(connectKind(err), "connect: "+err.Error())
		return
	}
	x.fd = fd
	x.authority = append(x.authority[:0], auth...)
	x.state = stateConnecting
	if isHTTPS(auth) {
		x.tls = x.newTLS(sa, auth)
	}
	if l.c.opts.HTTP2 {
		x.openH2()
	}
}

// lookup returns the socket address of host:port (the first IPv4 address
// of a name, else its first); wait bounds a name's lookup. Loops cache
// what it returns for the run.
func lookup(auth string, wait time.Duration) (syscall.Sockaddr, metrics.ErrKind, error) {
	host, port, err := net.SplitHostPort(hostPort(auth))
	if err != nil {
		return nil, metrics.NotSent, err
	}
	pn, err := strconv.Atoi(port)
	if err != nil || pn <= 0 || pn > 65535 {
		return nil, metrics.NotSent, errors.New("bad port in " + strconv.Quote(auth))
	}
	ctx, cancel := context.WithTimeout(context.Background(), max(wait, time.Millisecond))
	defer cancel()
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, strings.Trim(host, "[]"))
	if err != nil || len(ips) == 0 {
		if err == nil {
			err = errors.New("no address for " + host)
		}
		return nil, lookupKind(err), err
	}
	ip := ips[0].IP
	for _, a := range ips { // IPv4 first, as the pooled client dials
		if a.IP.To4() != nil {
			ip = a.IP
			break
		}
	}
	var sa syscall.Sockaddr
	if v4 := ip.To4(); v4 != nil {
		s := &syscall.SockaddrInet4{Port: pn}
		copy(s.Addr[:], v4)
		sa = s
	} else {
		s := &syscall.SockaddrInet6{Port: pn}
		copy(s.Addr[:], ip.To16())
		sa = s
	}
	return sa, metrics.OK, nil
}

func (x *Exchange) event(ev syscall.EpollEvent) {
	if ev.Pad != x.gen || x.fd < 0 {
		return // an event of a connection closed since
	}
	in := ev.Events&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0
	if x.h2on() {
		x.h2event(ev.Events, in)
		return
	}
	switch x.state {
	case stateConnecting:
		if ev.Events&(syscall.EPOLLOUT|syscall.EPOLLERR|syscall.EPOLLHUP) == 0 {
			return
		}
		errno, err := rawGetsockoptInt(x.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
		if err == nil && errno != 0 {
			err = syscall.Errno(errno)
		}
		if err != nil {
			x.fail(connectKind(err), "connect: "+err.Error())
			return
		}
		if x.tls != nil {
			x.tls.handshake(in)
			return
		}
		x.state = stateWriting
		x.readable = in
		x.write()
	case stateHandshaking:
		x.tls.event(ev.Events, in)
	case stateWriting:
		x.readable = x.readable || in
		if ev.Events&(syscall.EPOLLOUT|syscall.EPOLLERR) != 0 {
			x.write()
		}
	case stateReading:
		if in {
			x.read()
		}
	case stateIdle:
		if in { // the server closed a kept-alive connection between requests
			x.closeConn()
		}
	}
}

func (x *Exchange) write() {
	if x.h2 != nil {
		x.h2write()
		return
	}
	if x.tls != nil {
		x.writeTLS()
		return
	}
	for x.wpos < len(x.wbuf) {
		n, err := rawWrite(x.fd, x.wbuf[x.wpos:])
		switch {
		case err == nil:
		case errors.Is(err, syscall.EAGAIN):
			return // the next EPOLLOUT goes on
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			x.fail(metrics.Write, "write: "+err.Error())
			return
		}
		x.wpos += n
	}
	x.state = stateReading
	if x.readable {
		x.read()
	}
}

func (x *Exchange) read() {
	if x.h2 != nil {
		x.h2read()
		return
	}
	read := 0
	for {
		// Straight into the response's buffer when it has room and the
		// bytes are to be kept, else into the loop's (the bytes of a body
		// over its limit are counted there and dropped).
		p := &x.resp
		if cap(p.buf) == 0 {
			p.buf = x.l.takeBuf()
		}
		rb := x.l.rbuf
		if free := cap(p.buf) - len(p.buf); free >= 512 && (p.headEnd == 0 || int64(p.bodyEnd-p.headEnd) < p.limit) {
			rb = p.buf[len(p.buf):cap(p.buf)]
		}
		n, kind, err := x.readConn(rb)
		switch {
		case err == nil && n > 0:
		case err == syscall.EAGAIN: //nolint:errorlint // readConn returns it as is
			return
		case err != nil:
			x.fail(kind, "read: "+err.Error())
			return
		case n == 0:
			if p.eof() {
				x.finish()
			} else {
				x.closedEarly(len(p.buf) > 0)
			}
			return
		}
		done, err := p.feed(rb[:n])
		if err != nil {
			x.fail(metrics.Read, err.Error())
			return
		}
		if done {
			x.finish()
			return
		}
		// A server that sends faster than the loop reads would hold it
		// here: after readTurn bytes the other connections, the timers
		// and the timeout scan have their turn, and the read goes on in
		// the loop's next round.
		if read += n; read >= readTurn {
			x.l.readLater(x)
			return
		}
	}
}

// takeBuf is a response buffer for an exchange whose response begins.
func (l *Loop) takeBuf() []byte {
	if n := len(l.bufs); n > 0 {
		b := l.bufs[n-1]
		l.bufs[n-1] = nil
		l.bufs = l.bufs[:n-1]
		return b
	}
	return make([]byte, 0, 1<<10)
}

// giveBuf gives x's response buffer back to its loop once the response
// has been judged (HTTP/2's are its own). A large one is dropped: one
// large response does not pin its memory.
func (x *Exchange) giveBuf() {
	p := &x.resp
	if x.h2 != nil || cap(p.buf) == 0 {
		return
	}
	if cap(p.buf) <= 64<<10 {
		x.l.bufs = append(x.l.bufs, p.buf[:0])
	}
	p.buf = nil
}

// closedEarly fails the request in flight whose connection the server
// closed before its response was whole: connection_reset before the
// response began, read once it had.
func (x *Exchange) closedEarly(begun bool) {
	if !begun {
		x.fail(metrics.ConnReset, "the server closed the connection before responding")
		return
	}
	x.fail(metrics.Read, "the server closed the connection mid-response")
}

// readConn reads what the connection has into rb, as plaintext (over its
// TLS, if any): n bytes, 0 when the server has closed it; err is EAGAIN
// when nothing has come, else a failure of the kind kind.
func (x *Exchange) readConn(rb []byte) (n int, kind metrics.ErrKind, err error) {
	for {
		if x.tls == nil {
			n, err = rawRead(x.fd, rb)
		} else {
			n, err = x.tls.read(rb)
		}
		switch {
		case err == nil:
			return n, metrics.OK, nil
		case errors.Is(err, syscall.EAGAIN):
			return 0, metrics.OK, syscall.EAGAIN
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ECONNRESET):
			return 0, metrics.ConnReset, err
		case errors.Is(err, syscall.ETIMEDOUT): // keep-alive probes unanswered
			return 0, metrics.Timeout, err
		}
		return 0, readKind(err), err
	}
}

// readTurn is how much one connection reads before the loop's other work
// has its turn.
const readTurn = 1 << 20

// readLater reads x's connection again in the loop's next round, which
// waits for nothing meanwhile: its socket may stay readable without a new
// edge.
func (l *Loop) readLater(x *Exchange) {
	if !x.later {
		x.later = true
		l.later = append(l.later, x)
	}
}

// readOn goes on with the reads that readLater put off.
func (l *Loop) readOn() { drain(&l.later, &l.laterSpare, readOn) }

func readOn(x *Exchange) {
	x.later = false
	if x.state == stateReading && x.fd >= 0 {
		x.read()
	}
}

// finish judges a whole response, or sends the request that follows it
// (a redirect, a digest challenge answered).
func (x *Exchange) finish() {
	lat := time.Since(x.start)
	r, s, p := x.req, x.scr, &x.resp
	again, kind, detail := x.l.c.follow(r, s, x.url, p.status, p)
	if p.close || !x.l.c.keepAlive {
		x.closeConn()
	}
	x.lastUsed = int64(x.start.Sub(x.l.epoch) + lat)
	switch {
	case again:
		s.hop(Hop{Start: x.sent, Latency: x.start.Add(lat).Sub(x.sent), Status: p.status, Bytes: int(p.size), Auth: p.status == 401})
		if err := x.build(); err != nil {
			x.fail(notSentKind(err), err.Error())
			return
		}
		now := x.l.now()
		x.sent = x.l.anchor.Add(time.Duration(now - x.l.anchorAt))
		x.transmit(now)
	case kind != metrics.OK:
		res := s.failed(x.start, p.status, p.size, kind, detail)
		x.dump(&res)
		x.giveBuf()
		x.complete(res)
	default:
		res := Result{Start: x.start, Status: p.status, Bytes: int(p.size), Latency: lat}
		limit, _ := x.l.c.bodyLimit(r)
		v := &x.l.view // the loop judges one response at a time
		*v = view{body: p.body()}
		if r.reads&readsHeaders != 0 {
			v.headers = p.buf[:p.headEnd]
		}
		if r.reads&readsURL != 0 {
			v.url = x.url
		}
		x.l.c.settle(r, s, &res, v, x.hdr, x.vars, limit)
		*v = view{}
		x.dump(&res)
		x.giveBuf()
		x.complete(res)
	}
}

// fail ends the request in flight with an error and drops the connection.
func (x *Exchange) fail(kind metrics.ErrKind, detail string) {
	res := x.failure(kind, detail)
	x.closeConn()
	x.complete(res)
}

// failure is the result of the request in flight failing with an error.
func (x *Exchange) failure(kind metrics.ErrKind, detail string) Result {
	res := Result{Start: x.start, Latency: time.Since(x.start), Err: kind, Detail: detail}
	if x.scr != nil && len(x.scr.hops) > 0 {
		res.Hops = x.scr.hops
	}
	x.dump(&res)
	return res
}

// dump keeps a failed result's request and response for the failure
// log (Client.dump): the request as written, the response as far as it
// came.
func (x *Exchange) dump(res *Result) {
	if res.Err == metrics.OK || !x.l.c.opts.Failures.open() {
		return
	}
	p := &x.resp
	head, body := p.buf, []byte(nil)
	if p.headEnd > 0 {
		head, body = p.buf[:p.headEnd], p.buf[p.headEnd:p.bodyEnd]
	}
	x.l.c.dump(res, x.wbuf, head, body)
}

// complete hands the result to the exchange's callback: at once, so that
// the VU's next request goes out before the loop reads the next response
// of the batch, or, when the request failed inside Send, after Send has
// returned (a VU whose requests all fail at once must not recurse).
func (x *Exchange) complete(res Result) {
	if x.inflight {
		x.inflight = false
		x.l.busy--
	}
	x.state = stateIdle
	if x.sending {
		x.queue(res)
		return
	}
	f := x.then
	x.then = nil
	f(res)
}

// queue keeps res for the callback, which the loop calls on its next round.
func (x *Exchange) queue(res Result) {
	if x.res == nil {
		x.res = new(Result)
	}
	*x.res = res
	x.l.done = append(x.l.done, x)
}

func (x *Exchange) closeConn() {
	if x.fd >= 0 {
		if x.tls != nil {
			x.tls.close()
			x.tls = nil
		}
		rawClose(x.fd) //nolint:errcheck // as syscall.Close was
		x.fd = -1
	}
}

// rawRead and rawWrite are read(2) and write(2) on non-blocking sockets,
// which never block: they skip the runtime's bookkeeping for a system call
// that might (entersyscall/exitsyscall, 5-10% of the loop's CPU).
func rawRead(fd int, b []byte) (int, error) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func rawWrite(fd int, b []byte) (int, error) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// Close drops the exchange's connection.
func (x *Exchange) Close() { x.closeConn() }

//go:build linux

// Command floor measures how cheap a load generator written in Go can be,
// for bench/run.sh: it sends keep-alive GETs over N connections to a server
// on the loopback interface for a fixed time, with no HTTP library and no
// plan, in one of two shapes:
//
//	-mode goroutines  one goroutine per connection over net.Conn, the
//	                  shape of perflab's engine (a VU is a goroutine);
//	-mode loop        one event loop on raw epoll, the shape of wrk and
//	                  of perflab's http.event_loop: non-blocking raw system
//	                  calls, waiting in the runtime's netpoller.
//	-mode open        an arrival rate (-rate): each arrival, due at its
//	                  time from the start, is a new user on a goroutine of
//	                  its own that connects, sends one GET, reads the
//	                  response and closes (what an open model's iteration
//	                  is), -c bounding the users in flight; what a request
//	                  costs at a low rate against a high one, for
//	                  bench/idle.sh.
//	-mode paced       an arrival rate (-rate) over -c keep-alive
//	                  connections, each on a goroutine that sleeps until its
//	                  next arrival (every c-th), sends and reads the
//	                  response: an open model's iteration on a connection
//	                  kept open, what perflab's open models do, and the
//	                  least a request costs at a low rate on this machine
//	                  (each one wakes it from idle twice).
//
// Each response is framed by its Content-Length and its latency recorded
// in an HDR histogram, which is all that is left of a load generator's
// work. It prints "requests N errors N p50 Nus p99 Nus" on stderr.
// It refuses any address but 127.0.0.1.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18080", "server address (127.0.0.1 only)")
	conns := flag.Int("c", 50, "connections")
	dur := flag.Duration("d", 10*time.Second, "duration (at most 10 minutes)")
	mode := flag.String("mode", "goroutines", "goroutines, loop, open or paced")
	rate := flag.Float64("rate", 600, "arrivals a second (-mode open and paced)")
	flag.Parse()
	ta, err := net.ResolveTCPAddr("tcp4", *addr)
	if err != nil || !ta.IP.Equal(net.IPv4(127, 0, 0, 1)) || *dur > 10*time.Minute || *conns < 1 {
		fmt.Fprintln(os.Stderr, "floor: needs -addr 127.0.0.1:PORT, -c >= 1 and -d <= 10m")
		os.Exit(2)
	}
	req := []byte("GET / HTTP/1.1\r\nHost: " + *addr + "\r\nUser-Agent: floor\r\n\r\n")
	var r result
	switch *mode {
	case "goroutines":
		r = goroutines(ta, req, *conns, *dur)
	case "loop":
		r = loop(ta, req, *conns, *dur)
	case "open":
		r = open(ta, req, *conns, *rate, *dur)
	case "paced":
		r = paced(ta, req, *conns, *rate, *dur)
	default:
		fmt.Fprintln(os.Stderr, "floor: -mode goroutines, loop, open or paced")
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "requests %d errors %d p50 %dus p99 %dus dropped %d\n", r.h.TotalCount(), r.errors, r.h.ValueAtQuantile(50), r.h.ValueAtQuantile(99), r.dropped)
	if r.errors > 0 {
		os.Exit(1)
	}
}

type result struct {
	h       *hdr.Histogram
	errors  int64
	dropped int64 // arrivals that found every user in flight (-mode open)
}

func newHist() *hdr.Histogram { return hdr.New(1, 60_000_000, 3) }

var headEnd = []byte("\r\n\r\n")

// complete reports whether b holds a whole response framed by its
// Content-Length (nginx's static files always have one).
func complete(b []byte) bool {
	he := bytes.Index(b, headEnd)
	if he < 0 {
		return false
	}
	cl := 0
	if i := bytes.Index(b[:he], []byte("Content-Length: ")); i >= 0 {
		for _, ch := range b[i+len("Content-Length: "):] {
			if ch < '0' || ch > '9' {
				break
			}
			cl = cl*10 + int(ch-'0')
		}
	}
	return len(b) >= he+4+cl
}

// goroutines is a goroutine per connection: write, then read until the
// response is whole (the first read usually parks the goroutine in the
// runtime's poller).
func goroutines(addr *net.TCPAddr, req []byte, n int, d time.Duration) result {
	end := time.Now().Add(d)
	total := result{h: newHist()}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			r := result{h: newHist()}
			defer func() {
				mu.Lock()
				total.h.Merge(r.h)
				total.errors += r.errors
				mu.Unlock()
			}()
			c, err := net.DialTCP("tcp4", nil, addr)
			if err != nil {
				r.errors++
				return
			}
			defer c.Close()
			buf := make([]byte, 16<<10)
			for time.Now().Before(end) {
				start := time.Now()
				if _, err := c.Write(req); err != nil {
					r.errors++
					return
				}
				n := 0
				for !complete(buf[:n]) {
					m, err := c.Read(buf[n:])
					if err != nil {
						r.errors++
						return
					}
					n += m
				}
				r.h.RecordValue(int64(time.Since(start) / time.Microsecond))
			}
		})
	}
	wg.Wait()
	return total
}

// open starts an arrival every 1/rate s, each due at its time from the
// start (one that finds all n users in flight is dropped, as an open
// model's iteration with no VU free), on a goroutine that connects, sends req, reads the
// response to its end and closes; the latency is from when it was due.
func open(addr *net.TCPAddr, req []byte, n int, rate float64, d time.Duration) result {
	total := result{h: newHist()}
	var mu sync.Mutex
	var wg sync.WaitGroup
	free := make(chan struct{}, n)
	for range n {
		free <- struct{}{}
	}
	start := time.Now()
	for i := 0; ; i++ {
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		if due.Sub(start) >= d {
			break
		}
		time.Sleep(time.Until(due))
		select {
		case <-free:
		default:
			mu.Lock()
			total.dropped++
			mu.Unlock()
			continue
		}
		wg.Go(func() {
			defer func() { free <- struct{}{} }()
			ok := func() bool {
				c, err := net.DialTCP("tcp4", nil, addr)
				if err != nil {
					return false
				}
				defer c.Close()
				if _, err := c.Write(req); err != nil {
					return false
				}
				var buf [4 << 10]byte
				got := 0
				for !complete(buf[:got]) {
					m, err := c.Read(buf[got:])
					if err != nil {
						return false
					}
					got += m
				}
				return true
			}()
			mu.Lock()
			if ok {
				total.h.RecordValue(int64(time.Since(due) / time.Microsecond))
			} else {
				total.errors++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return total
}

// paced is an arrival rate over n keep-alive connections: connection k
// takes arrivals k, k+n, k+2n ..., each due at its time from the start;
// the latency is from when it was due.
func paced(addr *net.TCPAddr, req []byte, n int, rate float64, d time.Duration) result {
	total := result{h: newHist()}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for k := range n {
		wg.Go(func() {
			h, errs := newHist(), int64(0)
			defer func() {
				mu.Lock()
				total.h.Merge(h)
				total.errors += errs
				mu.Unlock()
			}()
			c, err := net.DialTCP("tcp4", nil, addr)
			if err != nil {
				errs++
				return
			}
			defer c.Close()
			var buf [4 << 10]byte
			for i := k; ; i += n {
				due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
				if due.Sub(start) >= d {
					return
				}
				time.Sleep(time.Until(due))
				if _, err := c.Write(req); err != nil {
					errs++
					return
				}
				got := 0
				for !complete(buf[:got]) {
					m, err := c.Read(buf[got:])
					if err != nil {
						errs++
						return
					}
					got += m
				}
				h.RecordValue(int64(time.Since(due) / time.Microsecond))
			}
		})
	}
	wg.Wait()
	return total
}

// loop is one goroutine on raw epoll, edge-triggered: on a whole response
// it records the latency and writes the next request at once (wrk instead
// waits for a writable event, two epoll_ctl calls more per request). Its
// reads and writes are raw system calls (non-blocking: the runtime need
// not know of them), and it waits with the epoll set parked in the Go
// runtime's netpoller, as perflab's event loop does.
func loop(addr *net.TCPAddr, req []byte, n int, d time.Duration) result {
	r := result{h: newHist()}
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		r.errors++
		return r
	}
	sa := &syscall.SockaddrInet4{Port: addr.Port}
	copy(sa.Addr[:], addr.IP.To4())
	type conn struct {
		fd      int
		started bool
		start   time.Time
		buf     []byte
		n       int
	}
	cs := make([]*conn, n)
	for i := range cs {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			r.errors++
			return r
		}
		defer syscall.Close(fd)
		syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1) //nolint:errcheck // as wrk
		if err := syscall.Connect(fd, sa); err != nil && !errors.Is(err, syscall.EINPROGRESS) {
			r.errors++
			return r
		}
		cs[i] = &conn{fd: fd, buf: make([]byte, 16<<10)}
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLOUT | -syscall.EPOLLET, Fd: int32(i)}
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			r.errors++
			return r
		}
	}
	send := func(c *conn) {
		c.start = time.Now()
		if w, err := rawWrite(c.fd, req); err != nil || w != len(req) {
			r.errors++
		}
	}
	events := make([]syscall.EpollEvent, 256)
	end := time.Now().Add(d)
	if err := syscall.SetNonblock(ep, true); err != nil {
		r.errors++
		return r
	}
	f := os.NewFile(uintptr(ep), "epoll") // f owns ep from here
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil || f.SetReadDeadline(end) != nil {
		r.errors++
		return r
	}
	var k int
	poll := func(fd uintptr) bool {
		k, err = epollWait(int(fd), events)
		return k > 0 || err != nil
	}
	for {
		if werr := rc.Read(poll); errors.Is(werr, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil && !errors.Is(err, syscall.EINTR) {
			r.errors++
			return r
		}
		for _, ev := range events[:k] {
			c := cs[ev.Fd]
			if !c.started {
				if ev.Events&syscall.EPOLLOUT != 0 { // connected
					c.started = true
					send(c)
				}
				continue
			}
			if ev.Events&syscall.EPOLLIN == 0 {
				continue
			}
			for { // edge-triggered: read until EAGAIN or a whole response
				m, err := rawRead(c.fd, c.buf[c.n:])
				if errors.Is(err, syscall.EAGAIN) {
					break
				}
				if err != nil || m == 0 {
					r.errors++
					return r
				}
				c.n += m
				if complete(c.buf[:c.n]) {
					r.h.RecordValue(int64(time.Since(c.start) / time.Microsecond))
					c.n = 0
					send(c)
					break
				}
			}
		}
	}
	return r
}

// epollWait returns the events ready now, without waiting.
func epollWait(ep int, ev []syscall.EpollEvent) (int, error) {
	n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_WAIT, uintptr(ep), uintptr(unsafe.Pointer(&ev[0])), uintptr(len(ev)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawRead(fd int, b []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

func rawWrite(fd int, b []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

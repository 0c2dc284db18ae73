package monitor

import (
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// probeEvery is how often the host monitor times a loopback round trip at
// most, and probeEveryMost at least.
const (
	probeEvery     = 50 * time.Millisecond
	probeEveryMost = 500 * time.Millisecond
)

// probesPerSample is how many round trips the probe times between two
// samples at least, when it can (at most every probeEvery): the 90th
// percentile of a sample is the 19th of 20, as it was of a sample of 1 s
// when the probe timed one every 50 ms whatever the sampling.
const probesPerSample = 20

// maxProbeRTTs bounds the round trips kept between two samples.
const maxProbeRTTs = 4096

// probe times the round trip of one byte over a loopback TCP connection
// to an echo of its own, at a steady pace: what a measured latency costs
// the generator's host alone (its network stack, its scheduler, its CPU's
// wake-ups), and how much that moves while a load runs. Its pace follows
// the sampling (paceTo): probesPerSample round trips a sample, one every
// 50 ms to 500 ms; each costs two goroutines' wake-ups and four raw
// system calls (rawIO), a few tens of microseconds of CPU on a virtual
// machine.
type probe struct {
	mu     sync.Mutex
	rtts   []time.Duration // since the last p90
	done   chan struct{}
	wg     sync.WaitGroup
	ln     net.Listener
	period atomic.Int64 // time.Duration between round trips
}

// byteIO moves a byte over a connection: rawIO where raw system calls can
// be made, else the connection's own Read and Write (connIO).
type byteIO interface {
	read(b []byte) error
	write(b []byte) error
}

type connIO struct{ c net.Conn }

func (c connIO) read(b []byte) error {
	_, err := c.c.Read(b)
	return err
}

func (c connIO) write(b []byte) error {
	_, err := c.c.Write(b)
	return err
}

// startProbe starts timing round trips every period; nil when no
// loopback connection can be made (a methods' nil probe does nothing).
func startProbe(period time.Duration) *probe {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		ln.Close()
		return nil
	}
	s, err := ln.Accept()
	if err != nil {
		c.Close()
		ln.Close()
		return nil
	}
	cio, err1 := newRawIO(c)
	sio, err2 := newRawIO(s)
	if err1 != nil || err2 != nil {
		c.Close()
		s.Close()
		ln.Close()
		return nil
	}
	p := &probe{done: make(chan struct{}), ln: ln}
	p.period.Store(int64(period))
	p.wg.Add(2)
	go func() { // the echo
		defer p.wg.Done()
		defer s.Close()
		b := make([]byte, 1)
		for {
			if err := sio.read(b); err != nil {
				return
			}
			if err := sio.write(b); err != nil {
				return
			}
		}
	}()
	go func() {
		defer p.wg.Done()
		defer c.Close()
		t := time.NewTicker(period)
		defer t.Stop()
		b := []byte{1}
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
			}
			if d := time.Duration(p.period.Load()); d != period {
				period = d
				t.Reset(d)
			}
			start := time.Now()
			c.SetDeadline(start.Add(10 * time.Second))
			if err := cio.write(b); err != nil {
				return
			}
			if err := cio.read(b); err != nil {
				return
			}
			rtt := time.Since(start)
			p.mu.Lock()
			if len(p.rtts) < maxProbeRTTs {
				p.rtts = append(p.rtts, rtt)
			}
			p.mu.Unlock()
		}
	}()
	return p
}

// paceTo sets the probe's pace for samples every: probesPerSample round
// trips a sample, at most one every probeEvery, at least one every
// probeEveryMost.
func (p *probe) paceTo(every time.Duration) {
	if p == nil || every <= 0 {
		return
	}
	p.period.Store(int64(min(max(every/probesPerSample, probeEvery), probeEveryMost)))
}

// p90 is the 90th percentile of the round trips since the last call;
// false when there was none.
func (p *probe) p90() (time.Duration, bool) {
	if p == nil {
		return 0, false
	}
	p.mu.Lock()
	rtts := p.rtts
	p.rtts = nil
	p.mu.Unlock()
	if len(rtts) == 0 {
		return 0, false
	}
	slices.Sort(rtts)
	return rtts[min(len(rtts)-1, len(rtts)*9/10)], true
}

// stop ends the probe and its echo.
func (p *probe) stop() {
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	close(p.done)
	p.ln.Close()
	p.wg.Wait()
}

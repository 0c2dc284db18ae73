package monitor

import (
	"net"
	"slices"
	"sync"
	"time"
)

// probeEvery is how often the host monitor times a loopback round trip.
const probeEvery = 50 * time.Millisecond

// maxProbeRTTs bounds the round trips kept between two samples.
const maxProbeRTTs = 4096

// probe times the round trip of one byte over a loopback TCP connection
// to an echo of its own, at a steady pace: what a measured latency costs
// the generator's host alone (its network stack, its scheduler, its CPU's
// wake-ups), and how much that moves while a load runs. Its cost is a
// round trip every 50 ms, a few microseconds of CPU.
type probe struct {
	mu   sync.Mutex
	rtts []time.Duration // since the last p90
	done chan struct{}
	wg   sync.WaitGroup
	ln   net.Listener
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
	p := &probe{done: make(chan struct{}), ln: ln}
	p.wg.Add(2)
	go func() { // the echo
		defer p.wg.Done()
		defer s.Close()
		b := make([]byte, 1)
		for {
			if _, err := s.Read(b); err != nil {
				return
			}
			if _, err := s.Write(b); err != nil {
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
			start := time.Now()
			c.SetDeadline(start.Add(10 * time.Second))
			if _, err := c.Write(b); err != nil {
				return
			}
			if _, err := c.Read(b); err != nil {
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

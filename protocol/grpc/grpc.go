// Package grpc makes a plan's gRPC calls: unary, server-streaming,
// client-streaming and bidirectional, of methods known only by their
// descriptors (package protoschema), with messages built from the plan's
// JSON templates (the protobuf JSON mapping) as dynamic messages. The VUs
// share a few HTTP/2 connections per target (grpc.connections), calls
// spread over them in turn.
package grpc

import (
	"crypto/tls"
	"fmt"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Options say how the client connects.
type Options struct {
	// Connections is how many connections to each target (at least 1).
	Connections int
	// TLS, if set, connects over TLS so configured; plaintext (h2c)
	// otherwise.
	TLS *tls.Config
	// UserAgent is sent with every call.
	UserAgent string
}

// Client holds the connections of a run's calls, by target.
type Client struct {
	o     Options
	creds credentials.TransportCredentials
	mu    sync.RWMutex
	pools map[string]*pool
}

// pool is a target's connections, used in turn.
type pool struct {
	conns []*grpc.ClientConn
	next  atomic.Uint64
}

// NewClient makes a client; it connects to a target on its first call.
func NewClient(o Options) *Client {
	c := &Client{o: o, creds: insecure.NewCredentials(), pools: map[string]*pool{}}
	if c.o.Connections < 1 {
		c.o.Connections = 1
	}
	if o.TLS != nil {
		c.creds = credentials.NewTLS(o.TLS)
	}
	return c
}

// Conn is a connection to target: the next of its pool.
func (c *Client) Conn(target string) (*grpc.ClientConn, error) {
	c.mu.RLock()
	p := c.pools[target]
	c.mu.RUnlock()
	if p == nil {
		var err error
		if p, err = c.newPool(target); err != nil {
			return nil, err
		}
	}
	return p.conns[p.next.Add(1)%uint64(len(p.conns))], nil
}

// newPool makes target's pool, unless another call just did.
func (c *Client) newPool(target string) (*pool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pools[target]
	if p == nil {
		p = &pool{}
		for range c.o.Connections {
			cc, err := grpc.NewClient(target,
				grpc.WithTransportCredentials(c.creds),
				grpc.WithUserAgent(c.o.UserAgent),
				grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
			if err != nil {
				for _, cc := range p.conns {
					cc.Close()
				}
				return nil, fmt.Errorf("grpc target %s: %w", target, err)
			}
			p.conns = append(p.conns, cc)
		}
		c.pools[target] = p
	}
	return p, nil
}

// Close closes every connection.
func (c *Client) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.pools {
		for _, cc := range p.conns {
			cc.Close()
		}
	}
	c.pools = map[string]*pool{}
}

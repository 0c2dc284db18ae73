// Package ws makes a plan's WebSocket steps: a VU's connections (one per
// URL, kept open across its iterations), messages sent from templates,
// and awaits of the message that matches a condition, timed from the send
// (or from the step's start) to the matching message's arrival.
//
// Each connection has a reader that stamps every message with its arrival
// and queues it, so that an await that times out leaves the connection
// usable, and a message that came while the VU was thinking is timed by
// its arrival, not by when the VU looked.
package ws

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// queued is how many arrived messages a connection keeps for its VU;
// beyond them its reader waits (the server's writes back up, as a slow
// client's would).
const queued = 32

// Message is one message received.
type Message struct {
	Data   []byte
	Binary bool
	At     time.Time // its arrival
}

// Conn is one WebSocket connection of a VU.
type Conn struct {
	c       *websocket.Conn
	in      chan Message
	done    chan struct{} // closed when the reader ends
	err     error         // why the reader ended, once done is closed
	writeMu sync.Mutex
}

// ErrTimeout is an await that ended without its message.
var ErrTimeout = errors.New("no matching message in time")

// CloseError is the connection closed by the server, or lost.
type CloseError struct{ Err error }

func (e *CloseError) Error() string { return "the connection closed: " + e.Err.Error() }
func (e *CloseError) Unwrap() error { return e.Err }

// Dialer opens connections.
type Dialer struct {
	d websocket.Dialer
}

// NewDialer makes a dialer: tlsConfig for wss URLs (nil: the system's
// defaults), timeout for the handshake.
func NewDialer(tlsConfig *tls.Config, timeout time.Duration) *Dialer {
	return &Dialer{d: websocket.Dialer{
		HandshakeTimeout: timeout,
		TLSClientConfig:  tlsConfig,
		// Small buffers: a plan may hold tens of thousands of idle
		// connections; the buffers grow for a large message.
		ReadBufferSize:  1024,
		WriteBufferSize: 1024,
		WriteBufferPool: &sync.Pool{},
	}}
}

// Dial opens a connection to url with headers and offered subprotocols.
// The response is the server's answer to the handshake, when there was
// one (a refusal's status).
func (d *Dialer) Dial(url string, header http.Header, subprotocols []string) (*Conn, *http.Response, error) {
	dd := d.d
	dd.Subprotocols = subprotocols
	c, resp, err := dd.Dial(url, header)
	if err != nil {
		return nil, resp, err
	}
	conn := &Conn{c: c, in: make(chan Message, queued), done: make(chan struct{})}
	go conn.read()
	return conn, resp, nil
}

// Subprotocol is the subprotocol the server chose ("" for none).
func (c *Conn) Subprotocol() string { return c.c.Subprotocol() }

func (c *Conn) read() {
	defer close(c.done)
	for {
		typ, data, err := c.c.ReadMessage()
		if err != nil {
			c.err = err
			return
		}
		c.in <- Message{Data: data, Binary: typ == websocket.BinaryMessage, At: time.Now()}
	}
}

// Send sends one message, text or binary.
func (c *Conn) Send(data []byte, binary bool) error {
	typ := websocket.TextMessage
	if binary {
		typ = websocket.BinaryMessage
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	return c.c.WriteMessage(typ, data)
}

// Next is the next message to arrive before the deadline: ErrTimeout
// after it, a *CloseError once the connection has closed and every
// message that came before is taken, ctx's error once ctx ends.
func (c *Conn) Next(ctx context.Context, deadline *time.Timer) (Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	default:
	}
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
		select {
		case m := <-c.in:
			return m, nil
		default:
		}
		return Message{}, &CloseError{c.err}
	case <-deadline.C:
		return Message{}, ErrTimeout
	case <-ctx.Done():
		return Message{}, ctx.Err()
	}
}

// Close closes the connection: a close frame, then the socket once the
// server answers it (or after a second).
func (c *Conn) Close() {
	c.writeMu.Lock()
	c.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	c.writeMu.Unlock()
	// Until the server answers the close (or a second passes), taking the
	// messages queued meanwhile: a reader waiting to queue one would not
	// read the answer.
	timeout := time.NewTimer(time.Second)
	defer timeout.Stop()
wait:
	for {
		select {
		case <-c.in:
		case <-c.done:
			break wait
		case <-timeout.C:
			break wait
		}
	}
	c.c.Close()
	// The reader may wait to queue a message nobody takes any more.
	for {
		select {
		case <-c.in:
		case <-c.done:
			return
		}
	}
}

// closeDetail says how a connection closed.
func closeDetail(err error) string {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return fmt.Sprintf("the server closed the connection (%d %s)", ce.Code, ce.Text)
	}
	return "the connection was lost: " + err.Error()
}

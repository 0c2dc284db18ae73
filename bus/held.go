package bus

import "time"

// heldMsg is a message that arrived before a waiter registered its key.
type heldMsg struct {
	key      string
	msg      Message
	deadline time.Time
	claimed  bool // taken by a waiter; still in the queue until it reaches the front
}

// heldBuffer keeps unmatched messages for a bounded time and count. Messages
// leave it in arrival order, and since they are all held for the same time,
// in deadline order too, so expiry only looks at the front of the queue.
// It is not safe for concurrent use; the Awaiter's mutex guards it.
type heldBuffer struct {
	queue []*heldMsg            // arrival order, claimed entries included
	byKey map[string][]*heldMsg // unclaimed entries per key, arrival order
	n     int                   // unclaimed entries
}

// put holds m under key until deadline. When max messages are already held
// it first drops the oldest, and reports that it did.
func (h *heldBuffer) put(key string, m Message, deadline time.Time, max int) (evicted bool) {
	if h.n >= max {
		h.dropOldest()
		evicted = true
	}
	e := &heldMsg{key: key, msg: m, deadline: deadline}
	h.queue = append(h.queue, e)
	if h.byKey == nil {
		h.byKey = make(map[string][]*heldMsg)
	}
	h.byKey[key] = append(h.byKey[key], e)
	h.n++
	return evicted
}

// take removes and returns the oldest message held under key.
func (h *heldBuffer) take(key string) (Message, bool) {
	es := h.byKey[key]
	if len(es) == 0 {
		return Message{}, false
	}
	e := es[0]
	h.unlink(e)
	e.claimed = true
	m := e.msg
	e.msg = Message{}
	return m, true
}

// expire drops the messages whose deadline is not after now and returns
// how many unclaimed ones it dropped.
func (h *heldBuffer) expire(now time.Time) (expired int) {
	for len(h.queue) > 0 {
		e := h.queue[0]
		if !e.claimed {
			if e.deadline.After(now) {
				break
			}
			h.unlink(e)
			expired++
		}
		h.pop()
	}
	return expired
}

// dropOldest drops the oldest unclaimed message.
func (h *heldBuffer) dropOldest() {
	for len(h.queue) > 0 {
		e := h.queue[0]
		h.pop()
		if !e.claimed {
			h.unlink(e)
			return
		}
	}
}

// unlink removes e, the oldest unclaimed message of its key, from byKey.
func (h *heldBuffer) unlink(e *heldMsg) {
	es := h.byKey[e.key]
	if len(es) == 1 {
		delete(h.byKey, e.key)
	} else {
		es[0] = nil
		h.byKey[e.key] = es[1:]
	}
	h.n--
}

// pop removes the front of the queue.
func (h *heldBuffer) pop() {
	h.queue[0] = nil
	h.queue = h.queue[1:]
	if len(h.queue) == 0 {
		h.queue = nil
	}
}

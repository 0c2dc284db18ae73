package http

import "strings"

// A flow's conditions may read the last response of a VU: its body
// (json(...), response.body) and headers (header("Name")). A request told
// to Keep them copies them into the VU's Scratch as it is judged, the same
// way on the three ways of sending; a request not told costs nothing more.

// Keep makes the request keep its response's body (up to the body limit)
// and the headers named, for the VU's next reads (Scratch.LastBody,
// LastHeader).
func (r *Request) Keep(body bool, headers []string) {
	r.keepBody = r.keepBody || body
	for _, h := range headers {
		if !containsFold(r.keepHeaders, h) {
			r.keepHeaders = append(r.keepHeaders, h)
		}
	}
	r.bodyUse, r.bodyVerb = r.readsBody()
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// kept is what the VU's last response left for the flow.
type kept struct {
	body   []byte
	names  []string
	values []string
	found  []bool
}

// keepLast copies what r keeps of a response into s.
func (r *Request) keepLast(s *Scratch, header func(string) ([]byte, bool), body []byte) {
	if !r.keepBody && len(r.keepHeaders) == 0 {
		return
	}
	if s.last == nil {
		s.last = &kept{}
	}
	k := s.last
	k.body = append(k.body[:0], body...)
	k.names, k.values, k.found = k.names[:0], k.values[:0], k.found[:0]
	for _, name := range r.keepHeaders {
		v, ok := header(name)
		k.names = append(k.names, name)
		k.values = append(k.values, string(v))
		k.found = append(k.found, ok)
	}
}

// ForgetLast clears what the last response kept, before a step whose
// response may keep nothing (it failed before one came, or it is no HTTP
// request).
func (s *Scratch) ForgetLast() {
	if s.last != nil {
		s.last.body = s.last.body[:0]
		s.last.names = s.last.names[:0]
	}
}

// LastBody is the body the VU's last response kept (nil if none).
func (s *Scratch) LastBody() []byte {
	if s.last == nil {
		return nil
	}
	return s.last.body
}

// LastHeader is a header the VU's last response kept.
func (s *Scratch) LastHeader(name string) (string, bool) {
	if s.last == nil {
		return "", false
	}
	for i, n := range s.last.names {
		if strings.EqualFold(n, name) {
			return s.last.values[i], s.last.found[i]
		}
	}
	return "", false
}

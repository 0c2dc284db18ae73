package sim

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxRequestBody is the most of a request body that ${body} reads; a larger
// body is answered 413.
const MaxRequestBody = 1 << 20

// ServeHTTP is the hot path: count, draw, sleep, answer. Per request it
// takes no lock; a literal body costs no allocation of its own.
func (rt *route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := rt.requests.Add(1)
	delay, fail := rt.draw(n)
	delay += rt.frozen()
	if delay > 0 && !sleep(r.Context(), delay) {
		rt.canceled.Add(1)
		return
	}
	h := w.Header()
	if fail {
		rt.injected.Add(1)
		if rt.errLen != nil {
			h["Content-Length"] = rt.errLen
		}
		w.WriteHeader(rt.errStatus)
		w.Write(rt.errBody)
		return
	}
	for _, kv := range rt.headers {
		h[kv.key] = kv.vals
	}
	if rt.vars == nil {
		if rt.staticLen != nil {
			h["Content-Length"] = rt.staticLen
		}
		w.WriteHeader(rt.status)
		w.Write(rt.static)
		return
	}
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	sc.vars = reqVars{rt: rt, r: r, n: n}
	if rt.readBody {
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBody))
		if err != nil {
			if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
				http.Error(w, "sim: request body over "+strconv.Itoa(MaxRequestBody)+" bytes", http.StatusRequestEntityTooLarge)
			}
			return // otherwise the client went away
		}
		sc.vars.body = string(b)
	}
	out, err := rt.body.AppendTo(sc.buf[:0], &sc.vars)
	sc.buf = out
	if err != nil { // compileRoute resolved every variable; never send a partial body
		http.Error(w, "sim: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h["Content-Length"] = []string{strconv.Itoa(len(out))}
	w.WriteHeader(rt.status)
	w.Write(out)
}

// sleep waits d, returning false early if ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		t.Stop()
		return false
	}
}

// scratch is the per-request state of a templated body, pooled.
type scratch struct {
	vars reqVars
	buf  []byte
}

var scratchPool = sync.Pool{New: func() any { return &scratch{buf: make([]byte, 0, 512)} }}

func (sc *scratch) release() {
	sc.vars = reqVars{}
	if cap(sc.buf) > 64<<10 {
		return // let a rare large buffer go
	}
	scratchPool.Put(sc)
}

// reqVars resolves a body template's variables for one request.
type reqVars struct {
	rt   *route
	r    *http.Request
	n    int64
	body string
}

// Lookup implements tmpl.Lookup.
func (v *reqVars) Lookup(name string) (string, bool) {
	ref, ok := v.rt.vars[name]
	if !ok {
		return "", false
	}
	switch ref.kind {
	case varMethod:
		return v.r.Method, true
	case varPath:
		return v.r.URL.Path, true
	case varBody:
		return v.body, true
	case varRoute:
		return v.rt.name, true
	case varCount:
		return strconv.FormatInt(v.n, 10), true
	case varPathValue:
		return v.r.PathValue(ref.arg), true
	case varQuery:
		val, found := queryFirst(v.r.URL.RawQuery, ref.arg)
		return val, found || !ref.absentUndefined
	case varHeader:
		if vals := v.r.Header[ref.arg]; len(vals) > 0 {
			return vals[0], true
		}
		return "", !ref.absentUndefined
	}
	return "", false
}

// queryFirst returns the first value of key in a raw query, and whether it is
// there, exactly as url.ParseQuery(raw) then Values.Get and Has would, but
// without building the map.
func queryFirst(raw, key string) (string, bool) {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		if strings.ContainsAny(k, "%+") {
			var err error
			if k, err = url.QueryUnescape(k); err != nil {
				continue
			}
		}
		if k != key {
			continue
		}
		if v, err := url.QueryUnescape(v); err == nil {
			return v, true
		}
	}
	return "", false
}

// rng is a pooled generator, reseeded for each request so that no lock is
// shared and the outcome of a route's n-th request is reproducible.
type rng struct {
	pcg rand.PCG
	r   *rand.Rand
}

var rngPool = sync.Pool{New: func() any {
	g := new(rng)
	g.r = rand.New(&g.pcg)
	return g
}}

func getRNG(seed, n uint64) *rng {
	g := rngPool.Get().(*rng)
	g.pcg.Seed(seed, mix64(n))
	return g
}

func putRNG(g *rng) { rngPool.Put(g) }

// mix64 is SplitMix64's finaliser: consecutive inputs give unrelated outputs.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// fnv64 is FNV-1a, to give each route its own random stream.
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

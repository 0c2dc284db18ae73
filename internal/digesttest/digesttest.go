// Package digesttest is an HTTP digest authentication server (RFC 7616)
// for the tests of perflab's client: written from the RFC, apart from the
// client's code, and checked against the RFC's worked examples (section
// 3.9.1). It challenges a request without credentials, checks every
// answer (user, realm, URI, nonce, a nonce count above the last, the
// response), and says stale=true when a nonce has been used the number of
// times it allows, as a server that expires its nonces does.
package digesttest

import (
	"crypto/md5" //nolint:gosec // RFC 7616's MD5
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Server guards a handler with digest authentication.
type Server struct {
	Realm, User, Password string
	// Algorithm is MD5 or SHA-256 (default MD5).
	Algorithm string
	// Uses is how many requests a nonce serves before the server says it
	// is stale (0: no limit).
	Uses int

	mu     sync.Mutex
	nonces map[string]int // the last nonce count of each nonce given
	counts Counts
}

// Counts are what a server did.
type Counts struct {
	// Challenges counts the 401s sent, Stale those that said stale=true;
	// Accepted the requests let through.
	Challenges, Stale, Accepted int
}

// Counts returns what the server did so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// H is the hash of the algorithm (RFC 7616 section 3.4.1), in hex.
func H(algorithm, data string) string {
	var h hash.Hash = md5.New() //nolint:gosec // the RFC's
	if strings.EqualFold(algorithm, "SHA-256") {
		h = sha256.New()
	}
	h.Write([]byte(data))
	return hex.EncodeToString(h.Sum(nil))
}

// Response is the response of RFC 7616 section 3.4.1 for qop=auth:
// KD(H(A1), nonce:nc:cnonce:qop:H(A2)), A1 = user:realm:password, A2 =
// method:uri.
func Response(algorithm, user, realm, password, method, uri, nonce, nc, cnonce string) string {
	ha1 := H(algorithm, user+":"+realm+":"+password)
	ha2 := H(algorithm, method+":"+uri)
	return H(algorithm, ha1+":"+nonce+":"+nc+":"+cnonce+":auth:"+ha2)
}

// Wrap returns next guarded by s.
func (s *Server) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch ok, stale := s.check(r); {
		case ok:
			next.ServeHTTP(w, r)
		default:
			s.challenge(w, stale)
		}
	})
}

func (s *Server) algorithm() string {
	if s.Algorithm == "" {
		return "MD5"
	}
	return s.Algorithm
}

// check reads the request's credentials: ok when they answer a nonce the
// server gave; stale when they answer it well but it is used up.
func (s *Server) check(r *http.Request) (ok, stale bool) {
	scheme, rest, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Digest") {
		return false, false
	}
	p := params(rest)
	if p["username"] != s.User || p["realm"] != s.Realm || p["uri"] != r.URL.RequestURI() || p["qop"] != "auth" ||
		!strings.EqualFold(p["algorithm"], s.algorithm()) {
		return false, false
	}
	if p["response"] != Response(s.algorithm(), s.User, s.Realm, s.Password, r.Method, p["uri"], p["nonce"], p["nc"], p["cnonce"]) {
		return false, false
	}
	nc, err := strconv.ParseUint(p["nc"], 16, 32)
	if err != nil || len(p["nc"]) != 8 {
		return false, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	last, known := s.nonces[p["nonce"]]
	switch {
	case !known:
		return false, false
	case int(nc) <= last: // a count used before: a replay
		return false, false
	case s.Uses > 0 && int(nc) > s.Uses:
		return false, true
	}
	s.nonces[p["nonce"]] = int(nc)
	s.counts.Accepted++
	return true, false
}

func (s *Server) challenge(w http.ResponseWriter, stale bool) {
	b := make([]byte, 16)
	rand.Read(b) //nolint:errcheck // never fails
	nonce := hex.EncodeToString(b)
	s.mu.Lock()
	if s.nonces == nil {
		s.nonces = map[string]int{}
	}
	s.nonces[nonce] = 0
	s.counts.Challenges++
	if stale {
		s.counts.Stale++
	}
	s.mu.Unlock()
	v := `Digest realm="` + s.Realm + `", qop="auth, auth-int", algorithm=` + s.algorithm() + `, nonce="` + nonce + `", opaque="` + H("MD5", nonce) + `"`
	if stale {
		v += ", stale=true"
	}
	w.Header().Add("WWW-Authenticate", `Basic realm="`+s.Realm+`"`) // a challenge of another scheme first, as servers offer several
	w.Header().Add("WWW-Authenticate", v)
	w.WriteHeader(http.StatusUnauthorized)
}

// params reads the name=value pairs of a header's credentials.
func params(s string) map[string]string {
	out := map[string]string{}
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimLeft(s, ", ") {
		name, rest, ok := strings.Cut(s, "=")
		if !ok {
			break
		}
		name = strings.ToLower(strings.TrimSpace(name))
		var v string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				break
			}
			v, s = rest[1:1+end], rest[2+end:]
		} else {
			v, s, _ = strings.Cut(rest, ",")
		}
		out[name] = strings.TrimSpace(v)
	}
	return out
}

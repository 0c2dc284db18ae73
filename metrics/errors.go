package metrics

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MaxMessages is the most distinct messages an operation keeps of each
// kind of error; the failures whose messages were not kept are counted
// together, as "other messages".
const MaxMessages = 20

// MaxMessage is the most bytes of a message kept, "..." included.
const MaxMessage = 200

// ErrorMessage is what failures of one kind said (MessageOf), and how many
// of them said it.
type ErrorMessage struct {
	Kind    string `json:"kind"`
	Message string `json:"message,omitempty"`
	// Other marks the failures of the kind whose messages were not kept:
	// those beyond the first MaxMessages distinct ones.
	Other bool  `json:"other,omitempty"`
	Count int64 `json:"count"`
	// First and Last are when failures of the message were seen, to
	// within an interval: the start of the first interval that had one,
	// the end of the last (summary.json's, from the intervals as they
	// were written); nil where not known.
	First *time.Time `json:"first,omitempty"`
	Last  *time.Time `json:"last,omitempty"`
}

// Messages counts an operation's failures by kind and message: the first
// MaxMessages distinct messages of each kind, the failures of the others
// as that kind's other messages. Every failure recorded with its words
// (AddResult) is counted once: the counts of a kind add up to its
// failures. The zero value is empty.
type Messages struct {
	counts map[msgKey]*int64
	kinds  map[ErrKind]*kindMessages
}

type msgKey struct {
	kind ErrKind
	text string
}

// kindMessages is how many distinct messages a kind has kept, and how many
// of its failures said another.
type kindMessages struct {
	kept  int
	other int64
}

// add counts n failures of kind k that said text; it reports whether
// text was new to k (kept or not).
func (m *Messages) add(k ErrKind, text string, n int64) bool {
	if c, ok := m.counts[msgKey{k, text}]; ok {
		*c += n
		return false
	}
	km := m.kind(k)
	if km.kept < MaxMessages {
		km.kept++
		c := new(int64)
		*c = n
		m.counts[msgKey{k, text}] = c
	} else {
		km.other += n
	}
	return true
}

// kind is k's entry, made if need be.
func (m *Messages) kind(k ErrKind) *kindMessages {
	if m.counts == nil {
		m.counts, m.kinds = map[msgKey]*int64{}, map[ErrKind]*kindMessages{}
	}
	km := m.kinds[k]
	if km == nil {
		km = &kindMessages{}
		m.kinds[k] = km
	}
	return km
}

// addOther counts n failures of kind k among its other messages.
func (m *Messages) addOther(k ErrKind, n int64) { m.kind(k).other += n }

// Merge adds o's counts into m. Within MaxMessages distinct messages of a
// kind the merge is exact, in any order; beyond, a message of o counted
// more often than m's least counted one takes its place, whose failures
// become other messages: the most frequent messages are kept, and each
// kind's total stays exact.
func (m *Messages) Merge(o Messages) {
	for _, e := range o.List() {
		k, _ := ParseErrKind(e.Kind)
		if e.Other {
			m.addOther(k, e.Count)
			continue
		}
		if km := m.kinds[k]; km != nil && km.kept >= MaxMessages && m.counts[msgKey{k, e.Message}] == nil {
			m.evict(k, e.Count)
		}
		m.add(k, e.Message, e.Count)
	}
}

// evict makes room among kind k's kept messages for one counted n times,
// if n is more than the least counted: that one's failures become other
// messages (of those counted least, the last in order goes).
func (m *Messages) evict(k ErrKind, n int64) {
	var least string
	var c int64 = -1
	for key, v := range m.counts {
		if key.kind == k && (c < 0 || *v < c || *v == c && key.text > least) {
			least, c = key.text, *v
		}
	}
	if c < 0 || c >= n {
		return
	}
	delete(m.counts, msgKey{k, least})
	km := m.kinds[k]
	km.kept--
	km.other += c
}

// Empty reports whether m counts nothing.
func (m *Messages) Empty() bool { return len(m.kinds) == 0 }

// List is m's counts: by kind (in the kinds' order), each kind's messages
// from the most frequent (ties in the messages' order), then its other
// messages.
func (m *Messages) List() []ErrorMessage {
	if len(m.kinds) == 0 {
		return nil
	}
	type entry struct {
		kind ErrKind
		ErrorMessage
	}
	var es []entry
	for key, n := range m.counts {
		es = append(es, entry{key.kind, ErrorMessage{Kind: key.kind.String(), Message: key.text, Count: *n}})
	}
	for k, km := range m.kinds {
		if km.other > 0 {
			es = append(es, entry{k, ErrorMessage{Kind: k.String(), Other: true, Count: km.other}})
		}
	}
	slices.SortFunc(es, func(a, b entry) int {
		if c := cmp.Compare(a.kind, b.kind); c != 0 {
			return c
		}
		if a.Other != b.Other {
			if a.Other {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	out := make([]ErrorMessage, len(es))
	for i, e := range es {
		out[i] = e.ErrorMessage
	}
	return out
}

// messagesOf reads a list back (Messages.List), as summary.json and
// totals.jsonl hold it: kinds that exist, positive counts, no message
// twice, at most errs[kind] failures of each kind.
func messagesOf(list []ErrorMessage, errs *[NumErrKinds]int64) (Messages, error) {
	var m Messages
	var sum [NumErrKinds]int64
	for _, e := range list {
		k, ok := ParseErrKind(e.Kind)
		switch {
		case !ok:
			return Messages{}, fmt.Errorf("messages: error kind %q: no such kind", e.Kind)
		case e.Count <= 0:
			return Messages{}, fmt.Errorf("messages: %s %q: count %d", e.Kind, e.Message, e.Count)
		case !e.Other && m.counts[msgKey{k, e.Message}] != nil:
			return Messages{}, fmt.Errorf("messages: %s %q twice", e.Kind, e.Message)
		}
		sum[k] += e.Count
		if sum[k] > errs[k] {
			return Messages{}, fmt.Errorf("messages: %d of %s, of %d failures", sum[k], e.Kind, errs[k])
		}
		if e.Other {
			m.addOther(k, e.Count)
			continue
		}
		m.add(k, e.Message, e.Count)
	}
	return m, nil
}

// AddResult records one operation as Add does and, if it failed, what it
// said: counted by its message (MessageOf), and kept as its kind's detail
// if it is the kind's first (AddDetail).
func (s *Stats) AddResult(lat, svc time.Duration, ek ErrKind, bytes int, detail string) {
	s.Add(lat, svc, ek, bytes)
	if ek != OK {
		s.addMessage(ek, MessageOf(ek, detail), detail)
	}
}

// addMessage counts a failure of kind ek by its message msg; the first
// of a kind also keeps its detail. A failure that was counted costs one
// map lookup.
func (s *Stats) addMessage(ek ErrKind, msg, detail string) {
	if s.Messages.add(ek, msg, 1) {
		s.AddDetail(ek, detail)
	}
}

// MessageOf is what a failure of kind k that said detail is counted as:
// its words without what varies from one request to the next, so that
// the same failure reads the same each time, on either engine.
//   - An unaccepted status reads as its status line: "status 503" is
//     "HTTP 503 Service Unavailable".
//   - A certificate's verification says what was wrong with it:
//     "x509: certificate signed by unknown authority".
//   - Network errors lose their addresses: "dial tcp 10.0.0.5:8080:
//     connect: connection refused" is "connect: connection refused";
//     "lookup db on 127.0.0.53:53: no such host" is "lookup db: no such
//     host".
//   - Values that identify a request are replaced: UUIDs ("<uuid>"), times
//     ("<time>"), numbers of four digits or more ("<n>") and runs of eight
//     hexadecimal digits or more ("<hex>"), alone or within a word
//     ("order-48213" is "order-<n>"). Numbers of up to three digits stay:
//     they are counts, codes and limits more often than identities.
//   - Control characters are spaces; the message is valid UTF-8 of at
//     most MaxMessage bytes.
func MessageOf(k ErrKind, detail string) string {
	if detail == "" {
		return k.String()
	}
	s, head := detail, ""
	if k >= HTTP1xx && k <= HTTP5xx && len(s) >= 10 && strings.HasPrefix(s, "status ") && isDigits(s[7:10]) && (len(s) == 10 || !isDigit(s[10])) {
		code := int(s[7]-'0')*100 + int(s[8]-'0')*10 + int(s[9]-'0')
		head, s = statusLine(code), s[10:]
		if s == "" {
			return head
		}
	}
	if k == TLS {
		if i := strings.Index(s, "x509: "); i >= 0 {
			s = s[i:]
		}
		s = strings.TrimPrefix(s, "tls handshake: ")
	}
	s = head + normalize(s)
	if len(s) > MaxMessage || !validText(s) {
		s = clip(s, MaxMessage)
	}
	return s
}

// statusLines are the status lines of the codes 100-599, made once.
var statusLines = func() []string {
	lines := make([]string, 600)
	for code := 100; code < 600; code++ {
		lines[code] = "HTTP " + strconv.Itoa(code)
		if t := http.StatusText(code); t != "" {
			lines[code] += " " + t
		}
	}
	return lines
}()

// statusLine is the status line of an HTTP status code, 100-599:
// "HTTP 503 Service Unavailable".
func statusLine(code int) string {
	if code >= 100 && code < 600 {
		return statusLines[code]
	}
	return "HTTP " + strconv.Itoa(code)
}

// clip is s as valid UTF-8 of at most n bytes, "..." ending it if cut.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n-3], "") + "..."
	}
	return s
}

// validText reports whether s is ASCII without control characters (the
// common case, which needs no copy).
func validText(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isAlnum(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// netOps are the operations of Go's *net.OpError, as its text begins:
// "dial tcp 10.0.0.5:8080: ...".
var netOps = []string{"dial ", "read ", "write ", "accept ", "close "}

// normalize takes out of s what varies from request to request
// (MessageOf); it copies s only if something does.
func normalize(s string) string {
	var b []byte // nil until s changes
	for i := 0; i < len(s); {
		c := s[i]
		// A network operation's addresses: "dial tcp 1.2.3.4:80->5.6.7.8:9: ".
		if (i == 0 || s[i-1] == ' ') && (c == 'd' || c == 'r' || c == 'w' || c == 'a' || c == 'c') && spaceAfterWord(s[i:]) {
			if n := netOpLen(s[i:]); n > 0 {
				b = grow(b, s, i)
				i += n
				// "connect: dial tcp ...: connect: refused" says connect once.
				i += repeated(b, s[i:])
				continue
			}
		}
		// A resolver's address: "lookup db on 127.0.0.53:53: no such host".
		if c == ' ' && strings.HasPrefix(s[i:], " on ") && lookupBefore(s, i) {
			if j := strings.Index(s[i+4:], ": "); j > 0 && !strings.Contains(s[i+4:i+4+j], " ") {
				b = grow(b, s, i)
				i += 4 + j
				continue
			}
		}
		if c < 0x20 || c == 0x7f {
			b = grow(b, s, i)
			b = append(b, ' ')
			i++
			continue
		}
		if !isAlnum(c) || i > 0 && isAlnum(s[i-1]) {
			if b != nil {
				b = append(b, c)
			}
			i++
			continue
		}
		// A word: letters and digits, with '-', '_', '.', ':' and '+'
		// inside.
		j, digits := i, false
		for j < len(s) && (isAlnum(s[j]) || (s[j] == '-' || s[j] == '_' || s[j] == '.' || s[j] == ':' || s[j] == '+') && j+1 < len(s) && isAlnum(s[j+1])) {
			digits = digits || isDigit(s[j])
			j++
		}
		w, r, ok := s[i:j], "", false
		if digits {
			r, ok = replaceWord(w)
		}
		b = emit(b, s, i, w, r, ok)
		i = j
	}
	if b == nil {
		return s
	}
	return string(b)
}

// lookupBefore reports whether the word "lookup" starts the phrase that
// s[i:] (" on ...") ends: "lookup db on 127.0.0.53:53".
func lookupBefore(s string, i int) bool {
	j := strings.LastIndex(s[:i], "lookup ")
	return j >= 0 && !strings.Contains(s[j+len("lookup "):i], " ")
}

// grow starts b as s's first i bytes, if b is not started yet.
func grow(b []byte, s string, i int) []byte {
	if b == nil {
		b = make([]byte, 0, len(s))
		b = append(b, s[:i]...)
	}
	return b
}

// spaceAfterWord reports whether s starts with a word of 4 to 6 lower-case
// letters and a space, as netOps are.
func spaceAfterWord(s string) bool {
	for i := 0; i < len(s) && i <= 6; i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return c == ' ' && i >= 4
		}
	}
	return false
}

// emit appends to b the word w of s at i, or r in its place if replace,
// b starting as a copy of s[:i] when r is the first change.
func emit(b []byte, s string, i int, w, r string, replace bool) []byte {
	switch {
	case replace:
		return append(grow(b, s, i), r...)
	case b != nil:
		return append(b, w...)
	}
	return nil
}

// netOpLen is the length of the *net.OpError prefix s starts with ("dial
// tcp 10.0.0.5:8080: "), or 0: an operation, a network, and optional
// addresses, up to ": ".
func netOpLen(s string) int {
	for _, op := range netOps {
		if !strings.HasPrefix(s, op) {
			continue
		}
		rest := s[len(op):]
		for _, nw := range []string{"tcp4 ", "tcp6 ", "tcp ", "udp4 ", "udp6 ", "udp ", "unix ", "tcp: ", "udp: "} {
			if !strings.HasPrefix(rest, nw) {
				continue
			}
			n := len(op) + len(nw)
			if strings.HasSuffix(nw, ": ") {
				return n
			}
			j := strings.Index(s[n:], ": ")
			if j < 0 || strings.Contains(s[n:n+j], " ") {
				return 0
			}
			return n + j + 2
		}
	}
	return 0
}

// repeated is the length of the word and ": " that rest starts with if b
// ends with the same ("connect: "), else 0.
func repeated(b []byte, rest string) int {
	s := string(b)
	if !strings.HasSuffix(s, ": ") {
		return 0
	}
	w := s[strings.LastIndex(s[:len(s)-2], " ")+1:]
	if strings.HasPrefix(rest, w) {
		return len(w)
	}
	return 0
}

// replaceWord is what a word of a message that has digits is counted as,
// and whether that differs from the word (MessageOf): a UUID, a time, or parts of it that
// are long numbers or long hexadecimal runs.
func replaceWord(w string) (string, bool) {
	if isUUID(w) {
		return "<uuid>", true
	}
	if isTime(w) {
		return "<time>", true
	}
	var b []byte
	for i := 0; i < len(w); {
		if !isAlnum(w[i]) {
			if b != nil {
				b = append(b, w[i])
			}
			i++
			continue
		}
		j := i
		for j < len(w) && isAlnum(w[j]) {
			j++
		}
		part, r := w[i:j], ""
		switch {
		case len(part) >= 4 && isDigits(part):
			r = "<n>"
		case len(part) >= 8 && isHexID(part):
			r = "<hex>"
		}
		b = emit(b, w, i, part, r, r != "")
		i = j
	}
	if b == nil {
		return w, false
	}
	return string(b), true
}

// isHexID reports whether s is hexadecimal digits, at least one a digit.
func isHexID(s string) bool {
	digit := false
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
		digit = digit || isDigit(s[i])
	}
	return digit
}

// isUUID reports whether s is a UUID: 8-4-4-4-12 hexadecimal digits.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}

// isTime reports whether s begins as an RFC 3339 date ("2026-11-25",
// "2026-11-25T10:00:00.123Z") or is a time of day ("10:00:00").
func isTime(s string) bool {
	date := len(s) >= 10 && isDigits(s[:4]) && s[4] == '-' && isDigits(s[5:7]) && s[7] == '-' && isDigits(s[8:10])
	clock := len(s) >= 8 && isDigits(s[:2]) && s[2] == ':' && isDigits(s[3:5]) && s[5] == ':' && isDigits(s[6:8])
	return date || clock
}

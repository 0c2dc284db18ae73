// Package secret tells secrets from other values wherever perflab writes
// what it was given, sent or received: the passwords of URLs, and the
// values of headers, query parameters, form fields, JSON keys and
// variables whose names say they are secrets. One list of names serves
// them all (Name), so that a token redacted in a header is redacted in a
// query string, a login form and a --set value alike.
package secret

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// Redacted is what a secret is written as.
const Redacted = "[redacted]"

// names are secrets whatever they say, in lower case.
var names = []string{"authorization", "proxy-authorization", "cookie", "set-cookie"}

// words make a name a secret where it ends with one of them, or has one
// followed by something else than more letters of the same word
// (X-Auth-Token, api_key, apiKey, accessTokenValue, JSESSIONID; not
// max_tokens, keys or author), in lower case.
var words = []string{
	"key", "token", "secret", "password", "passwd", "pwd", "passphrase", "auth",
	"credential", "credentials", "session", "sessionid", "sessid", "signature", "sig", "cookie",
}

// Name reports whether a header, query parameter, form field, JSON key or
// variable of this name holds a secret: Authorization,
// Proxy-Authorization, Cookie and Set-Cookie, and every name that has a
// word of the list as a word of its own (a word ends where the name does,
// at a character other than a letter, or where a lower-case letter is
// followed by a capital).
func Name(name string) bool {
	lower := asciiLower(name) // byte for byte, so that its indices are name's
	for _, n := range names {
		if lower == n {
			return true
		}
	}
	for _, w := range words {
		for i := strings.Index(lower, w); i >= 0; {
			if end := i + len(w); wordEnds(name, end) {
				return true
			}
			j := strings.Index(lower[i+1:], w)
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	return false
}

// wordEnds reports whether a word of name ends at end.
func wordEnds(name string, end int) bool {
	if end == len(name) {
		return true
	}
	last, next := name[end-1], name[end]
	return !isLetter(next) || isLower(last) && !isLower(next)
}

// asciiLower is s with its ASCII letters in lower case, its other bytes
// as they are.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
func isLower(c byte) bool  { return 'a' <= c && c <= 'z' }

// URL is a URL (absolute or relative, or a request line's target) with
// its secrets redacted: the password of its user:password@, and of any URL
// it holds (a ?next=http://user:password@host/), and the values of the
// query parameters and fragment parameters (#access_token=...) whose
// names are secrets (Name).
func URL(u string) string {
	u = Text(u)
	q := strings.IndexAny(u, "?#")
	if q < 0 {
		return u
	}
	var b strings.Builder
	b.WriteString(u[:q+1])
	rest := u[q+1:]
	if i := strings.IndexByte(rest, '#'); i >= 0 && u[q] == '?' {
		b.WriteString(string(Form([]byte(rest[:i]))))
		b.WriteByte('#')
		rest = rest[i+1:]
	}
	b.WriteString(string(Form([]byte(rest))))
	return b.String()
}

// Form is a form's fields (application/x-www-form-urlencoded, as a query
// string has them) with the values of those whose names are secrets
// redacted.
func Form(form []byte) []byte {
	fields := strings.Split(string(form), "&")
	if !slices.ContainsFunc(fields, secretField) {
		return form // most have none, and are kept as they are
	}
	for i, f := range fields {
		if secretField(f) {
			fields[i] = f[:strings.IndexByte(f, '=')+1] + Redacted
		}
	}
	return []byte(strings.Join(fields, "&"))
}

// secretField reports whether a form's field (name=value) is a secret's.
func secretField(f string) bool {
	name, _, ok := strings.Cut(f, "=")
	if n, err := url.QueryUnescape(name); err == nil {
		name = n
	}
	return ok && Name(name)
}

// Text is a text with the password of every URL in it redacted
// (scheme://user:[redacted]@host): a plan's source, a message. The
// password runs from the first colon of the userinfo to its last @, so
// that whatever it holds is hidden.
func Text(s string) string {
	var b strings.Builder
	done := 0
	for i := strings.Index(s, "://"); i >= 0; {
		start := i + len("://")
		if schemeBefore(s, i) {
			end := start
			for end < len(s) && authorityByte(s[end]) {
				end++
			}
			if at := strings.LastIndexByte(s[start:end], '@'); at >= 0 {
				if colon := strings.IndexByte(s[start:start+at], ':'); colon >= 0 {
					b.WriteString(s[done : start+colon+1])
					b.WriteString(Redacted)
					done = start + at
				}
			}
			start = end
		}
		j := strings.Index(s[start:], "://")
		if j < 0 {
			break
		}
		i = start + j
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// schemeBefore reports whether the "://" at i follows a scheme.
func schemeBefore(s string, i int) bool {
	j := i
	for j > 0 && (isLetter(s[j-1]) || '0' <= s[j-1] && s[j-1] <= '9' || s[j-1] == '+' || s[j-1] == '-' || s[j-1] == '.') {
		j--
	}
	return j < i && isLetter(s[j])
}

// authorityByte reports whether c may be part of a URL's authority as
// written in a text: what RFC 3986 allows there (a password's
// sub-delimiters, such as ' and ,, included), and the % of an escape.
func authorityByte(c byte) bool {
	switch {
	case c <= ' ' || c >= 0x7f:
		return false
	case strings.IndexByte("/?#\"<>`{}|\\^", c) >= 0:
		return false
	}
	return true
}

// JSON is a JSON text with the values of the keys that are secrets
// redacted, each written as the string "[redacted]" (an object or an
// array too); the rest is kept byte for byte. A text cut short (a body's
// first bytes) or one that is not JSON is read as far as it goes: every
// string followed by a colon is taken as a key, and a value cut short is
// redacted to the end, its closing quote left out as it was.
func JSON(b []byte) []byte {
	var out []byte
	done := 0
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end, _ := stringEnd(b, i)
		j := skipSpace(b, end)
		if j >= len(b) || b[j] != ':' {
			i = end - 1
			continue
		}
		v := skipSpace(b, j+1)
		var name string
		if v >= len(b) || json.Unmarshal(b[i:end], &name) != nil || !Name(name) {
			i = j
			continue
		}
		vend, closed := valueEnd(b, v)
		if out == nil {
			out = make([]byte, 0, len(b))
		}
		out = append(out, b[done:v]...)
		out = append(out, '"')
		out = append(out, Redacted...)
		if closed {
			out = append(out, '"')
		}
		done = vend
		i = done - 1
	}
	if out == nil {
		return b
	}
	return append(out, b[done:]...)
}

// stringEnd is the index after the JSON string that starts at b[i], a
// quote, and whether it has its closing quote (else it runs to len(b)).
func stringEnd(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return len(b), false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// valueEnd is the index after the JSON value that starts at b[i] (a
// string, an object or an array with what they hold, a number or a
// literal), and whether it ends before the text does.
func valueEnd(b []byte, i int) (int, bool) {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, closed := stringEnd(b, j)
				if !closed {
					return end, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1, true
				}
			}
		}
		return len(b), false
	}
	j := i
	for j < len(b) && strings.IndexByte(",}] \t\r\n", b[j]) < 0 {
		j++
	}
	return j, true
}

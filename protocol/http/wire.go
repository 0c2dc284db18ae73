package http

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
)

// The event loop (loop_linux.go) speaks HTTP/1.1 itself: it writes a
// request into a byte slice and frames the response as its bytes arrive,
// so that no goroutine has to block on a connection. What the request says
// follows Client.build, which fills fasthttp's request for the same step.

// appendRequest writes the exchange's next request (r's own for vars, or
// a hop's: Scratch.ex) to b. It returns the bytes and the origin of its URL
// (scheme://host[:port], which names the connection the request goes on);
// the URL stays in s.buf, of which origin is the start, until the next
// request overwrites it.
func (c *Client) appendRequest(b []byte, r *Request, vars Vars, s *Scratch) (out, origin []byte, err error) {
	u, err := r.appendNextURL(s.buf[:0], vars, s)
	s.buf = u
	if err != nil {
		return b, nil, err
	}
	origin, authority, uri, err := splitURL(u)
	if err != nil {
		return b, nil, err
	}
	method := r.methodOf(s)
	b = append(b, method...)
	b = append(b, ' ')
	if len(uri) == 0 || uri[0] == '?' {
		b = append(b, '/')
	}
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\n"...)
	hostAt := len(b)
	b = append(b, "Host: "...)
	b = append(b, authority...)
	b = append(b, "\r\n"...)
	hostEnd := len(b)
	sh, err := r.sessionHeaders(s, vars, method, u)
	if err != nil {
		return b, nil, err
	}
	ownUA, ownHost := false, false
	err = r.eachHeader(vars, &sh, func(name, value string) {
		switch {
		case strings.EqualFold(name, "Host"):
			ownHost = true
		case strings.EqualFold(name, "User-Agent"):
			ownUA = true
		case r.contentType != "" && strings.EqualFold(name, "Content-Type"):
			return // the step's JSON body sets it, as in build
		case strings.EqualFold(name, "Content-Length"), strings.EqualFold(name, "Connection"):
			return // written below from the body and the keep-alive option
		}
		b = append(b, name...)
		b = append(b, ": "...)
		b = append(b, value...) // checked by eachHeader
		b = append(b, "\r\n"...)
	})
	if err != nil {
		return b, nil, err
	}
	if !ownUA {
		b = append(b, "User-Agent: "...)
		b = append(b, c.userAgent...)
		b = append(b, "\r\n"...)
	}
	withBody := r.sendsBody(s)
	if r.contentType != "" && withBody {
		b = append(b, "Content-Type: "...)
		b = append(b, r.contentType...)
		b = append(b, "\r\n"...)
	}
	var body []byte
	if withBody {
		if body, err = r.appendBody(s.body[:0], vars); err != nil {
			return b, nil, err
		}
		s.body = body
	}
	if withBody || !bytes.Equal(method, []byte("GET")) && !bytes.Equal(method, []byte("HEAD")) {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	if !c.keepAlive {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, body...)
	if ownHost { // the step's own Host header replaces the URL's
		b = append(b[:hostAt], b[hostEnd:]...)
	}
	return b, origin, nil
}

// splitURL splits an absolute http or https URL into its origin (scheme
// and authority), its authority (host[:port]) and its request-URI (path and
// query, without the fragment).
func splitURL(u []byte) (origin, authority, uri []byte, err error) {
	n := schemeLen(u)
	if n == 0 {
		return nil, nil, nil, errNotAbsolute(u)
	}
	rest := u[n:]
	end := len(rest) // the authority ends at the path, the query or the fragment
	for i, c := range rest {
		if c == '/' || c == '?' || c == '#' {
			end = i
			break
		}
	}
	authority, uri = rest[:end], rest[end:]
	if bytes.IndexByte(authority, '@') >= 0 || len(authority) == 0 {
		return nil, nil, nil, errors.New("URL " + quoteURL(u) + ": want http[s]://host[:port]/path")
	}
	if i := bytes.IndexByte(uri, '#'); i >= 0 {
		uri = uri[:i]
	}
	return u[:n+end], authority, uri, nil
}

// schemeLen is the length of the "http://" or "https://" that u starts
// with (in any case), else 0.
func schemeLen[T string | []byte](u T) int {
	if len(u) < 7 || lower(u[0]) != 'h' || lower(u[1]) != 't' || lower(u[2]) != 't' || lower(u[3]) != 'p' {
		return 0
	}
	switch {
	case u[4] == ':' && u[5] == '/' && u[6] == '/':
		return 7
	case len(u) >= 8 && lower(u[4]) == 's' && u[5] == ':' && u[6] == '/' && u[7] == '/':
		return 8
	}
	return 0
}

// isHTTPS reports whether an origin from splitURL is https.
func isHTTPS(origin []byte) bool { return schemeLen(origin) == 8 }

// hostPort is the address to dial for an origin (or a bare authority,
// taken as http): the port is 80, or 443 for https, when the URL gives
// none.
func hostPort(origin string) string {
	n := schemeLen(origin)
	port := ":80"
	if n == 8 {
		port = ":443"
	}
	a := origin[n:]
	if i := strings.LastIndexByte(a, ':'); i >= 0 && !strings.HasSuffix(a, "]") {
		return a
	}
	return a + port
}

// response frames and parses one HTTP/1.1 response as its bytes arrive.
// Its memory is bounded whatever the server sends: the header by
// maxHead, the body kept by limit (the bytes beyond it are counted), a
// chunk-size or trailer line by maxHead.
type response struct {
	// buf holds the header (buf[:headEnd]), then the body kept, decoded
	// (buf[headEnd:bodyEnd]), then a line of the chunked framing that has
	// not arrived whole.
	buf      []byte
	headEnd  int // after the blank line; 0 while the header is incomplete
	bodyEnd  int
	limit    int64 // body bytes kept
	size     int64 // body bytes received (decoded)
	status   int
	length   int64 // Content-Length; -1 when none
	chunked  bool
	close    bool // the connection closes after this response
	noBody   bool // HEAD, 204, 304
	untilEOF bool // the body ends when the server closes
	done     bool
	// setCookie: the header has a Set-Cookie (for the VU's jar).
	setCookie bool
	// chunked decoding
	chunk   uint8 // what the next bytes are: chunkSize, chunkData, ...
	left    int64 // bytes left of the chunk's data
	trailer int   // trailer bytes so far
	interim int   // 1xx responses before this one
}

// What the next bytes of a chunked body are.
const (
	chunkSize    = iota // a chunk-size line
	chunkData           // the chunk's data
	chunkDataEnd        // the CRLF after the data
	chunkTrailer        // a trailer line, or the blank line that ends the body
)

// maxHead bounds a response's header, and each line of its chunked framing.
const maxHead = 64 << 10

// maxInterim bounds the 1xx responses before a response.
const maxInterim = 16

var errMalformed = errors.New("malformed response")

// reset prepares for the response to a request with method head (HEAD)
// or not, keeping limit bytes of its body; the buffer is kept.
func (p *response) reset(head bool, limit int64) {
	*p = response{buf: p.buf[:0], noBody: head, length: -1, limit: limit}
}

// feed parses the bytes in, which have just arrived; it returns true when
// the response is whole. in may be the free capacity of p.buf just past
// its length (the loop reads into it): what is kept is copied at or before
// where it is read from.
func (p *response) feed(in []byte) (bool, error) {
	if p.headEnd == 0 {
		p.buf = append(p.buf, in...)
		in = nil
		for {
			end, err := p.head()
			if err != nil || end == 0 {
				return false, err
			}
			if p.status >= 100 && p.status < 200 { // 100 Continue, 103 Early Hints: the real response follows
				if p.interim++; p.interim > maxInterim {
					return false, errors.New("response has over 16 interim (1xx) responses")
				}
				p.buf = append(p.buf[:0], p.buf[end:]...)
				p.status, p.length, p.chunked, p.close, p.setCookie = 0, -1, false, false, false
				continue
			}
			p.headEnd, p.bodyEnd = end, end
			in, p.buf = p.buf[end:], p.buf[:end]
			break
		}
	}
	switch {
	case p.done:
		if len(in) > 0 {
			return false, errors.New("response has bytes after its end")
		}
	case p.noBody || p.status == 204 || p.status == 304:
		if len(in) > 0 {
			return false, errors.New("response has bytes after a body-less response")
		}
		p.done = true
	case p.chunked:
		return p.dechunk(in)
	case p.length >= 0:
		if int64(len(in)) > p.length-p.size {
			return false, errors.New("response is longer than its Content-Length")
		}
		p.keep(in)
		p.done = p.size == p.length
	default:
		p.untilEOF = true
		p.keep(in)
	}
	return p.done, nil
}

// keep counts body bytes and keeps those within the limit.
func (p *response) keep(b []byte) {
	p.size += int64(len(b))
	if room := p.limit - int64(p.bodyEnd-p.headEnd); room > 0 {
		p.buf = append(p.buf, b[:min(int64(len(b)), room)]...)
		p.bodyEnd = len(p.buf)
	}
}

// eof is the server closing the connection: it ends a body that had no
// length, and is an error anywhere else.
func (p *response) eof() bool {
	if p.headEnd > 0 && p.untilEOF {
		p.done, p.close = true, true
		return true
	}
	return false
}

// head reads the status line and the headers framing depends on, in one
// pass over the lines that have arrived; it returns where the header ends,
// or 0 while it is incomplete (the lines are read again with more bytes).
func (p *response) head() (int, error) {
	b := p.buf
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return 0, p.tooLong()
	}
	line := bytes.TrimSuffix(b[:nl], []byte("\r")) // a bare LF ends a line too, as fasthttp reads it
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, errMalformed
	}
	code := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return 0, errMalformed
		}
		code = code*10 + int(c-'0')
	}
	if code < 100 {
		return 0, errMalformed
	}
	p.status, p.length, p.chunked = code, -1, false
	p.close = line[7] == '0' // HTTP/1.0 closes unless it says keep-alive
	at := nl + 1
	for {
		nl := bytes.IndexByte(b[at:], '\n')
		if nl < 0 {
			return 0, p.tooLong()
		}
		line := b[at : at+nl]
		at += nl + 1
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if len(line) == 0 {
			if at > maxHead { // arrived whole in one read: the same limit
				return 0, p.tooLong()
			}
			return at, nil
		}
		// Only three headers frame a response, and Set-Cookie says the
		// VU's jar has cookies to keep; most lines are skipped on their
		// first letter.
		switch line[0] | 0x20 {
		case 'c', 't':
		case 's':
			p.setCookie = p.setCookie || len(line) > 10 && line[10] == ':' && equalFold(line[:10], "Set-Cookie")
			continue
		default:
			continue
		}
		// A name is followed by its colon at once (RFC 9112 5.1), so the
		// three names are known by where the colon stands.
		switch {
		case hasName(line, "Content-Length"):
			value := trimSpace(line[len("Content-Length")+1:])
			n, ok := atoi(value)
			if !ok {
				return 0, errors.New("bad Content-Length " + strconv.Quote(string(value)))
			}
			p.length = n
		case hasName(line, "Transfer-Encoding"):
			value := trimSpace(line[len("Transfer-Encoding")+1:])
			p.chunked = false // the last coding is what frames the body
			for rest := value; len(rest) > 0; {
				var tok []byte
				tok, rest, _ = bytes.Cut(rest, []byte(","))
				p.chunked = equalFold(trimSpace(tok), "chunked")
			}
		case hasName(line, "Connection"): // a list: "keep-alive, close"
			value := trimSpace(line[len("Connection")+1:])
			closes, keeps := false, false
			for rest := value; len(rest) > 0; {
				var tok []byte
				tok, rest, _ = bytes.Cut(rest, []byte(","))
				tok = trimSpace(tok)
				closes = closes || equalFold(tok, "close")
				keeps = keeps || equalFold(tok, "keep-alive")
			}
			if closes {
				p.close = true
			} else if keeps {
				p.close = false
			}
		}
	}
}

// atoi reads a non-negative decimal number.
func atoi(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func (p *response) tooLong() error {
	if len(p.buf) > maxHead {
		return errors.New("response header over 64 KiB")
	}
	return nil
}

// dechunk decodes a chunked body's bytes as they arrive.
func (p *response) dechunk(in []byte) (bool, error) {
	for len(in) > 0 {
		if p.done {
			return false, errors.New("response has bytes after its last chunk")
		}
		if p.chunk == chunkData {
			n := min(int64(len(in)), p.left)
			p.keep(in[:n])
			in, p.left = in[n:], p.left-n
			if p.left == 0 {
				p.chunk = chunkDataEnd
			}
			continue
		}
		// A line of the framing: whole in in, or begun in p.buf.
		nl := bytes.IndexByte(in, '\n')
		if nl < 0 {
			p.buf = append(p.buf, in...)
			if len(p.buf)-p.bodyEnd > maxHead {
				return false, errors.New("chunked body has a line over 64 KiB")
			}
			return false, nil
		}
		line := in[:nl]
		if len(p.buf) > p.bodyEnd {
			p.buf = append(p.buf, line...)
			line = p.buf[p.bodyEnd:]
		}
		in = in[nl+1:]
		if len(line) > maxHead { // arrived whole in one read: the same limit
			return false, errors.New("chunked body has a line over 64 KiB")
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if err := p.chunkLine(line); err != nil {
			return false, err
		}
		p.buf = p.buf[:p.bodyEnd]
	}
	return p.done, nil
}

// chunkLine reads a whole line of a chunked body's framing.
func (p *response) chunkLine(line []byte) error {
	switch p.chunk {
	case chunkSize:
		size := line
		if i := bytes.IndexByte(size, ';'); i >= 0 {
			size = size[:i]
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
		if err != nil || n < 0 || n > maxChunk {
			return errors.New("bad chunk size " + strconv.Quote(string(line[:min(len(line), 40)])))
		}
		p.chunk, p.left = chunkData, n
		if n == 0 { // the last chunk, then trailers up to a blank line
			p.chunk = chunkTrailer
		}
	case chunkDataEnd:
		if len(line) > 0 {
			return errors.New("chunk not followed by CRLF")
		}
		p.chunk = chunkSize
	case chunkTrailer:
		if len(line) == 0 {
			p.done = true
			return nil
		}
		if p.trailer += len(line); p.trailer > maxHead {
			return errors.New("response trailers over 64 KiB")
		}
	}
	return nil
}

// maxChunk bounds a chunk's size (1 TB), so that sizes add up without
// overflow.
const maxChunk = 1 << 40

// body is the response body, or its first limit bytes.
func (p *response) body() []byte { return p.buf[p.headEnd:p.bodyEnd] }

// header returns the first value of a header, for checks, extractions and
// the server's time.
func (p *response) header(name string) ([]byte, bool) {
	_, rest, _ := bytes.Cut(p.buf[:p.headEnd], []byte("\n"))
	for len(rest) > 0 {
		var l []byte
		l, rest, _ = bytes.Cut(rest, []byte("\n")) // the value is trimmed of a CR

		n, v, ok := bytes.Cut(l, []byte(":"))
		if ok && equalFold(n, name) {
			return bytes.TrimSpace(v), true
		}
	}
	return nil, false
}

// The respHeaders of a response the event loop read.

func (p *response) setsCookies() bool { return p.setCookie }

func (p *response) first(name string) ([]byte, bool) { return p.header(name) }

func (p *response) values(name string) [][]byte {
	var out [][]byte
	_, rest, _ := bytes.Cut(p.buf[:p.headEnd], []byte("\n"))
	for len(rest) > 0 {
		var l []byte
		l, rest, _ = bytes.Cut(rest, []byte("\n"))
		if n, v, ok := bytes.Cut(l, []byte(":")); ok && equalFold(n, name) {
			out = append(out, bytes.TrimSpace(v))
		}
	}
	return out
}

// equalFold compares an ASCII header name without regard to case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	if string(b) == s { // as most servers write it
		return true
	}
	for i := range len(b) {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

// hasName tells whether header line is of header name (any case): the
// name, then its colon.
func hasName(line []byte, name string) bool {
	return len(line) > len(name) && line[len(name)] == ':' && equalFold(line[:len(name)], name)
}

// trimSpace is bytes.TrimSpace, without its look at Unicode spaces where
// b has none at its ends.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && asciiSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && asciiSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && (b[0] >= 0x80 || b[len(b)-1] >= 0x80) {
		return bytes.TrimSpace(b)
	}
	return b
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

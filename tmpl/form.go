package tmpl

import "net/url"

// AppendForm appends the expansion to dst as a name or a value of an
// application/x-www-form-urlencoded body: the literal text and each value
// alike encoded by AppendFormEscape.
func (t *Template) AppendForm(dst []byte, l Lookup) ([]byte, error) {
	for _, p := range t.parts {
		v, err := p.value(l)
		if err != nil {
			return dst, err
		}
		dst = AppendFormEscape(dst, v)
	}
	return dst, nil
}

// AppendFormEscape appends s encoded as the WHATWG URL standard's
// application/x-www-form-urlencoded serializer encodes a name or a value,
// which browsers, Java's URLEncoder (and so JMeter) and k6 follow: ASCII
// letters, digits and * - . _ as they are, a space as +, every other byte
// of the UTF-8 text as %XX in capitals. (Go's url.QueryEscape differs in
// two bytes: it keeps ~ and encodes *.)
func AppendFormEscape(dst []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '*', c == '-', c == '.', c == '_':
			dst = append(dst, c)
		case c == ' ':
			dst = append(dst, '+')
		default:
			dst = append(dst, '%', hex[c>>4], hex[c&15])
		}
	}
	return dst
}

// FormDecode decodes s as a form's reader (and Java's URLDecoder) decodes
// a name or a value: + is a space and %XX the byte XX. Text that is no
// valid encoding (a % that starts no escape) is kept as it is, where
// Java's would refuse it.
func FormDecode(s string) string {
	if out, err := url.QueryUnescape(s); err == nil {
		return out
	}
	return s
}

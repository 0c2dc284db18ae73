package convert

import (
	"regexp"
	"strconv"
	"strings"
)

// javaRegex is a JMeter regex (Perl 5 by ORO, or Java's) as Go's RE2
// writes it, with its ${variables} as placeholders: what RE2 can say is
// rewritten (\uXXXX, \h, \v, \R, POSIX classes \p{Alpha}, possessive
// quantifiers and atomic groups read as greedy ones, Java's (?U) flag
// dropped); a lookaround, a backreference or a class intersection is
// listed, and the regex not converted.
func (c *converter) javaRegex(re string, e *element) (string, bool) {
	var b strings.Builder
	var loose []string
	for _, p := range scan(re) {
		switch {
		case p.ref != "":
			b.WriteString(mark(modeVar, p.ref))
		case p.fn != "":
			b.WriteString(c.function(p, e))
		default:
			out, why, approx := toRE2(p.text)
			if why != "" {
				c.drop(e, "its regex "+strconv.Quote(re)+": "+why+", which Go's regexes (RE2) cannot say")
				return "", false
			}
			loose = append(loose, approx...)
			b.WriteString(literal(out))
		}
	}
	out := b.String()
	// The placeholders stand for text: any will do to check it compiles.
	check := markRe.ReplaceAllString(strings.ReplaceAll(out, "$${", "${"), "x")
	if _, err := regexp.Compile(check); err != nil {
		c.drop(e, "its regex "+strconv.Quote(re)+": "+err.Error())
		return "", false
	}
	if len(loose) > 0 {
		c.note(e, "its regex "+strconv.Quote(re)+": "+strings.Join(dedup(loose), " and ")+" read as RE2's (they may match where Java's would not)")
	}
	return out, true
}

var markRe = regexp.MustCompile("\x00.[^\x01]*\x01|\\$\\{[^}]*\\}")

func dedup(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

var posixClasses = map[string]string{
	"Lower": "[:lower:]", "Upper": "[:upper:]", "ASCII": "[:ascii:]", "Alpha": "[:alpha:]", "Digit": "[:digit:]",
	"Alnum": "[:alnum:]", "Punct": "[:punct:]", "Graph": "[:graph:]", "Print": "[:print:]", "Blank": "[:blank:]",
	"Cntrl": "[:cntrl:]", "XDigit": "[:xdigit:]", "Space": "[:space:]",
	"javaLowerCase": `\p{Ll}`, "javaUpperCase": `\p{Lu}`, "javaWhitespace": `\s`, "IsAlphabetic": `\p{L}`,
	"IsLetter": `\p{L}`, "IsDigit": `\p{Nd}`, "IsUppercase": `\p{Lu}`, "IsLowercase": `\p{Ll}`, "IsWhite_Space": `\s`,
}

const (
	hSpace = `\t \x{A0}\x{1680}\x{180e}\x{2000}-\x{200a}\x{202f}\x{205f}\x{3000}`
	vSpace = `\n\x0B\f\r\x{85}\x{2028}\x{2029}`
)

// toRE2 rewrites a Java regex's text as RE2's: the regex, why it cannot
// (empty when it can), and what it read loosely.
func toRE2(s string) (string, string, []string) {
	var b strings.Builder
	var loose []string
	inClass := 0
	quantEnd := false // the last thing written ends a quantifier
	for i := 0; i < len(s); i++ {
		ch := s[i]
		wasQuant := quantEnd
		quantEnd = false
		switch {
		case ch == '\\' && i+1 < len(s):
			n := s[i+1]
			switch {
			case n == 'Q':
				end := strings.Index(s[i+2:], `\E`)
				lit := s[i+2:]
				if end >= 0 {
					lit = s[i+2 : i+2+end]
					i = i + 2 + end + 1
				} else {
					i = len(s)
				}
				b.WriteString(regexp.QuoteMeta(lit))
				continue
			case n >= '1' && n <= '9' && inClass == 0:
				return "", "a backreference (\\" + string(n) + ")", nil
			case n == 'k':
				return "", "a named backreference", nil
			case n == 'G':
				return "", `\G`, nil
			case n == 'u' && i+5 < len(s):
				if _, err := strconv.ParseUint(s[i+2:i+6], 16, 16); err == nil {
					b.WriteString(`\x{` + s[i+2:i+6] + `}`)
					i += 5
					continue
				}
			case n == 'h' || n == 'H':
				cls := hSpace
				if inClass > 0 {
					if n == 'H' {
						return "", `\H inside a class`, nil
					}
					b.WriteString(cls)
				} else if n == 'h' {
					b.WriteString("[" + cls + "]")
				} else {
					b.WriteString("[^" + cls + "]")
				}
				i++
				continue
			case n == 'v' || n == 'V':
				if inClass > 0 {
					if n == 'V' {
						return "", `\V inside a class`, nil
					}
					b.WriteString(vSpace)
				} else if n == 'v' {
					b.WriteString("[" + vSpace + "]")
				} else {
					b.WriteString("[^" + vSpace + "]")
				}
				i++
				continue
			case n == 'R' && inClass == 0:
				b.WriteString(`(?:\r\n|[` + vSpace + `])`)
				i++
				continue
			case n == 'Z' && inClass == 0:
				b.WriteString(`\n?\z`)
				loose = append(loose, `\Z`)
				i++
				continue
			case n == 'e':
				b.WriteString(`\x1B`)
				i++
				continue
			case n == 'c' && i+2 < len(s):
				b.WriteString(`\x{` + strconv.FormatInt(int64(s[i+2]^0x40), 16) + `}`)
				i += 2
				continue
			case n == '0' && inClass == 0:
				j := i + 2
				for j < len(s) && j < i+5 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint(s[i+2:j], 8, 16)
				b.WriteString(`\x{` + strconv.FormatUint(v, 16) + `}`)
				i = j - 1
				continue
			case (n == 'p' || n == 'P') && i+2 < len(s) && s[i+2] == '{':
				end := strings.IndexByte(s[i+2:], '}')
				if end > 0 {
					name := s[i+3 : i+2+end]
					if strings.HasPrefix(name, "Is") && len(name) > 2 && posixClasses[name] == "" {
						name = name[2:] // \p{IsLatin}: the script
					}
					if strings.HasPrefix(name, "In") {
						return "", "a Unicode block (\\p{" + name + "})", nil
					}
					if r, ok := posixClasses[name]; ok {
						switch {
						case strings.HasPrefix(r, "[:") && n == 'P':
							r = "[:^" + r[2:]
							fallthrough
						case strings.HasPrefix(r, "[:"):
							if inClass == 0 {
								r = "[" + r + "]"
							}
						case n == 'P':
							r = strings.Replace(r, `\p`, `\P`, 1)
							r = strings.Replace(r, `\s`, `\S`, 1)
						}
						b.WriteString(r)
					} else {
						b.WriteString(`\` + string(n) + "{" + name + "}")
					}
					i += 2 + end
					continue
				}
			}
			b.WriteByte(ch)
			b.WriteByte(n)
			i++
			continue
		case inClass > 0:
			switch {
			case ch == '[':
				if strings.HasPrefix(s[i:], "[:") {
					b.WriteByte(ch)
					continue
				}
				return "", "a class inside a class", nil
			case ch == '&' && strings.HasPrefix(s[i:], "&&"):
				return "", "a class intersection (&&)", nil
			case ch == ']':
				inClass--
			}
			b.WriteByte(ch)
			continue
		case ch == '[':
			inClass++
			b.WriteByte(ch)
			if strings.HasPrefix(s[i+1:], "^]") {
				b.WriteString(`^\]`)
				i += 2
			} else if strings.HasPrefix(s[i+1:], "]") {
				b.WriteString(`\]`)
				i++
			}
			continue
		case ch == '(' && strings.HasPrefix(s[i:], "(?"):
			rest := s[i+2:]
			switch {
			case strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, "!"):
				return "", "a lookahead", nil
			case strings.HasPrefix(rest, "<=") || strings.HasPrefix(rest, "<!"):
				return "", "a lookbehind", nil
			case strings.HasPrefix(rest, ">"):
				b.WriteString("(?:")
				loose = append(loose, "atomic groups")
				i += 2
				continue
			}
			// Inline flags: Go knows i, m, s (and U, which Java's U is not).
			j := 0
			for j < len(rest) && strings.IndexByte("imsuxUd-", rest[j]) >= 0 {
				j++
			}
			if j > 0 && j < len(rest) && (rest[j] == ')' || rest[j] == ':') {
				flags := rest[:j]
				if strings.Contains(flags, "x") {
					return "", "the comments flag (?x)", nil
				}
				kept := strings.Map(func(r rune) rune {
					if strings.ContainsRune("ims-", r) {
						return r
					}
					return -1
				}, flags)
				kept = strings.TrimSuffix(kept, "-")
				if kept == "" && rest[j] == ')' {
					i += 2 + j
					continue
				}
				if kept == "" {
					kept = ""
				}
				b.WriteString("(?" + kept)
				i += 1 + j
				continue
			}
		case ch == '+' && wasQuant:
			loose = append(loose, "possessive quantifiers")
			continue
		case ch == '*' || ch == '+' || ch == '?':
			quantEnd = !(ch == '?' && wasQuant)
			b.WriteByte(ch)
			continue
		case ch == '}':
			quantEnd = true
		}
		b.WriteByte(ch)
	}
	return b.String(), "", loose
}

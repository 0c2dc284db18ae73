package expr

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/bits"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm/runtime"

	"github.com/perflab/perflab/internal/inputfile"
)

// MaxText is the most text one evaluation of an expression may make:
// each function that makes text (repeat, upper, lower, replace, join,
// split, splitAfter, toJSON, toBase64, randomString) and each + of
// texts counts the bytes it would make before it makes them, and the one
// that would take the evaluation past MaxText fails it with a
// *LimitError. It is four times the default body_limit: upper() of a
// whole body fits.
const MaxText = 16 << 20

// textLimit is MaxText but in tests, which make reproductions small.
var textLimit uint64 = MaxText

// LimitError is an expression refused for the text it would make.
type LimitError struct {
	Func  string // the function (or "+") that would have passed the limit
	Bytes uint64 // what it would have made, by itself
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s would make %d bytes of text: an expression makes at most %s of text in all (expr.MaxText)",
		e.Func, e.Bytes, inputfile.FormatSize(int64(textLimit)))
}

// Text is the functions of Env that make text, each counting what it
// makes against MaxText: bound to their Env when it first runs an
// expression. They take the place of expr-lang's builtins of the same
// names, which count it (some of them) only once made.
type Text struct {
	Repeat       func(s string, n int) (string, error)              `expr:"repeat"`
	Upper        func(s string) (string, error)                     `expr:"upper"`
	Lower        func(s string) (string, error)                     `expr:"lower"`
	Replace      func(s, old, new string, n ...int) (string, error) `expr:"replace"`
	Join         func(list any, sep ...string) (string, error)      `expr:"join"`
	Split        func(s, sep string, n ...int) ([]string, error)    `expr:"split"`
	SplitAfter   func(s, sep string, n ...int) ([]string, error)    `expr:"splitAfter"`
	ToJSON       func(v any) (string, error)                        `expr:"toJSON"`
	ToBase64     func(s string) (string, error)                     `expr:"toBase64"`
	RandomString func(n int, chars ...string) (string, error)       `expr:"randomString"`
	// + between texts, or a text and a value of a type known only when
	// it runs (#acc of a reduce); the operator's function cannot return
	// an error, so it panics with it, which the VM returns.
	Cat      func(a, b string) string  `expr:"__cat_ss"`
	CatLeft  func(a any, b string) any `expr:"__cat_as"`
	CatRight func(a string, b any) any `expr:"__cat_sa"`
}

// catOverloads are the functions + between texts turns into.
var catOverloads = []string{"__cat_ss", "__cat_as", "__cat_sa"}

// alphanumerics are randomString's characters when it is given none.
const alphanumerics = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// stringHeader is what a text in a list takes besides its bytes.
const stringHeader = 16

// grow counts n more bytes of text made by fn in this evaluation; past
// MaxText it is an error, and nothing is counted.
func (e *Env) grow(fn string, n uint64) error {
	if n > textLimit-e.made {
		return &LimitError{Func: fn, Bytes: n}
	}
	e.made += n
	return nil
}

// times is a*b, or the largest uint64 when it overflows.
func times(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

// plus is a+b, or the largest uint64 when it overflows.
func plus(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}

// bind makes e's Text functions, counting against e.made.
func (e *Env) bind() {
	e.Text = Text{
		Repeat: func(s string, n int) (string, error) {
			if n < 0 {
				return "", fmt.Errorf("repeat: a count of %d; want 0 or more", n)
			}
			if err := e.grow("repeat", times(uint64(len(s)), uint64(n))); err != nil {
				return "", err
			}
			return strings.Repeat(s, n), nil
		},
		Upper: func(s string) (string, error) { return e.mapped("upper", s, unicode.ToUpper, strings.ToUpper) },
		Lower: func(s string) (string, error) { return e.mapped("lower", s, unicode.ToLower, strings.ToLower) },
		Replace: func(s, old, new string, n ...int) (string, error) {
			count := strings.Count(s, old)
			if len(n) > 0 && n[0] >= 0 {
				count = min(count, n[0])
			}
			size := uint64(len(s))
			if len(new) > len(old) {
				size = plus(size, times(uint64(count), uint64(len(new)-len(old))))
			}
			if err := e.grow("replace", size); err != nil {
				return "", err
			}
			if len(n) > 0 {
				return strings.Replace(s, old, new, n[0]), nil
			}
			return strings.ReplaceAll(s, old, new), nil
		},
		Join: func(list any, sep ...string) (string, error) {
			glue := ""
			if len(sep) > 0 {
				glue = sep[0]
			}
			var parts []string
			switch l := list.(type) {
			case []string:
				parts = l
			case []any:
				parts = make([]string, len(l))
				for i, x := range l {
					s, ok := x.(string)
					if !ok {
						return "", fmt.Errorf("join: item %d is a %T, not text", i, x)
					}
					parts[i] = s
				}
			default:
				return "", fmt.Errorf("join: a %T, not a list of texts", list)
			}
			var size uint64
			for _, p := range parts {
				size = plus(size, uint64(len(p)))
			}
			if len(parts) > 1 {
				size = plus(size, times(uint64(len(parts)-1), uint64(len(glue))))
			}
			if err := e.grow("join", size); err != nil {
				return "", err
			}
			return strings.Join(parts, glue), nil
		},
		Split:      func(s, sep string, n ...int) ([]string, error) { return e.split("split", s, sep, n, 0) },
		SplitAfter: func(s, sep string, n ...int) ([]string, error) { return e.split("splitAfter", s, sep, n, len(sep)) },
		ToJSON: func(v any) (string, error) {
			if err := e.grow("toJSON", jsonSize(reflect.ValueOf(v), 0)); err != nil {
				return "", err
			}
			b, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				return "", err
			}
			return string(b), nil
		},
		ToBase64: func(s string) (string, error) {
			size := base64.StdEncoding.EncodedLen(len(s))
			if err := e.grow("toBase64", uint64(size)); err != nil {
				return "", err
			}
			var b strings.Builder // the result written in place, not copied
			b.Grow(size)
			w := base64.NewEncoder(base64.StdEncoding, &b)
			io.WriteString(w, s) //nolint:errcheck // a Builder takes all
			w.Close()            //nolint:errcheck // likewise
			return b.String(), nil
		},
		RandomString: func(n int, chars ...string) (string, error) {
			set := alphanumerics
			if len(chars) > 0 && chars[0] != "" {
				set = chars[0]
			}
			runes := []rune(set)
			if n <= 0 || len(runes) == 0 {
				return "", nil
			}
			widest := 1
			for _, r := range runes {
				widest = max(widest, utf8.RuneLen(r))
			}
			if err := e.grow("randomString", times(uint64(n), uint64(widest))); err != nil {
				return "", err
			}
			b := make([]byte, 0, n*widest)
			for range n {
				b = utf8.AppendRune(b, runes[e.IntN(len(runes))])
			}
			return string(b), nil
		},
		Cat: func(a, b string) string {
			if err := e.grow("+", uint64(len(a))+uint64(len(b))); err != nil {
				panic(err)
			}
			return a + b
		},
		CatLeft:  func(a any, b string) any { return e.cat(a, b) },
		CatRight: func(a string, b any) any { return e.cat(a, b) },
	}
}

// cat is + of two values one of which is text, the other's type known
// only as the expression runs: texts are counted, anything else added as
// expr-lang adds it.
func (e *Env) cat(a, b any) any {
	x, ok1 := a.(string)
	y, ok2 := b.(string)
	if ok1 && ok2 {
		return e.Cat(x, y)
	}
	return runtime.Add(a, b)
}

// mapped is upper or lower (whole, each rune by f) of s, counted at the
// exact size it makes: a rune may change its length, and an invalid
// byte becomes U+FFFD, three.
func (e *Env) mapped(fn, s string, f func(rune) rune, whole func(string) string) (string, error) {
	var size uint64
	for _, r := range s {
		size += uint64(utf8.RuneLen(f(r)))
	}
	if err := e.grow(fn, size); err != nil {
		return "", err
	}
	return whole(s), nil
}

// split is split or splitAfter (keep: the separator's length, kept with
// each part) of s, counted as the texts of the list: its parts' bytes
// are s's, shared; each takes a header.
func (e *Env) split(fn, s, sep string, n []int, keep int) ([]string, error) {
	parts := strings.Count(s, sep) + 1 // by each rune when sep is ""
	if sep == "" {
		parts = utf8.RuneCountInString(s)
	}
	limit := -1
	if len(n) > 0 {
		limit = n[0]
		if limit >= 0 {
			parts = min(parts, limit)
		}
	}
	if err := e.grow(fn, times(uint64(max(parts, 0)), stringHeader)); err != nil {
		return nil, err
	}
	if keep > 0 {
		return strings.SplitAfterN(s, sep, limit), nil
	}
	return strings.SplitN(s, sep, limit), nil
}

// jsonSize is the most bytes toJSON (json.MarshalIndent with an indent of
// two spaces) may write for v at nesting depth: a string escaped whole
// (\u003c, 6 bytes, for each of its bytes), each item on a line of its
// own.
func jsonSize(v reflect.Value, depth int) uint64 {
	line := uint64(2*depth + 2) // a newline and the indent, and a comma
	switch v.Kind() {
	case reflect.Invalid:
		return 4
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() || depth > 1000 {
			return 4
		}
		return jsonSize(v.Elem(), depth)
	case reflect.String:
		return plus(times(uint64(v.Len()), 6), 2)
	case reflect.Bool:
		return 5
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return plus(times(uint64(v.Len()), 2), 2) // base64
		}
		size := plus(line, 4)
		for i := range v.Len() {
			size = plus(size, plus(line+2, jsonSize(v.Index(i), depth+1)))
		}
		return size
	case reflect.Map:
		size := plus(line, 4)
		for it := v.MapRange(); it.Next(); {
			size = plus(size, plus(line+6, plus(jsonSize(it.Key(), depth+1), jsonSize(it.Value(), depth+1))))
		}
		return size
	case reflect.Struct:
		size := plus(line, 4)
		for i := range v.NumField() {
			f := v.Type().Field(i)
			size = plus(size, plus(line+6, plus(times(uint64(len(f.Name)), 6), jsonSize(v.Field(i), depth+1))))
		}
		return size
	}
	return 32 // a number
}

// literalSize is the size of the text a node of the expression makes
// when it can be known from the expression itself (its texts and counts
// written in it), and whether it can.
func literalSize(n ast.Node) (uint64, bool) {
	switch n := n.(type) {
	case *ast.StringNode:
		return uint64(len(n.Value)), true
	case *ast.BinaryNode:
		if n.Operator != "+" {
			return 0, false
		}
		a, ok1 := literalSize(n.Left)
		b, ok2 := literalSize(n.Right)
		return plus(a, b), ok1 && ok2
	case *ast.CallNode:
		id, ok := n.Callee.(*ast.IdentifierNode)
		if !ok {
			return 0, false
		}
		count := func(i int) (uint64, bool) {
			if i >= len(n.Arguments) {
				return 0, false
			}
			c, ok := n.Arguments[i].(*ast.IntegerNode)
			if !ok || c.Value < 0 {
				return 0, false
			}
			return uint64(c.Value), true
		}
		switch id.Value {
		case "repeat":
			s, ok1 := literalSize(n.Arguments[0])
			c, ok2 := count(1)
			return times(s, c), ok1 && ok2
		case "upper", "lower":
			return literalSize(n.Arguments[0]) // at least
		case "randomString":
			c, ok := count(0)
			widest := 1
			if len(n.Arguments) > 1 {
				chars, ok := n.Arguments[1].(*ast.StringNode)
				if !ok {
					return 0, false
				}
				for _, r := range chars.Value {
					widest = max(widest, utf8.RuneLen(r))
				}
			}
			return times(c, uint64(widest)), ok
		}
	}
	return 0, false
}

// checkLiterals refuses, at its column, the first node of the tree that
// makes more text than MaxText by what the expression itself says.
func checkLiterals(tree ast.Node) error {
	var err error
	ast.Walk(&tree, visitor(func(node *ast.Node) {
		if err != nil {
			return
		}
		size, ok := literalSize(*node)
		if !ok || size <= textLimit {
			return
		}
		fn := "+"
		if c, ok := (*node).(*ast.CallNode); ok {
			fn = c.Callee.(*ast.IdentifierNode).Value
		}
		err = &Error{Col: (*node).Location().From + 1, Msg: (&LimitError{Func: fn, Bytes: size}).Error()}
	}))
	return err
}

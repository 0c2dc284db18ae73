// Package expr is the plan's expression language: the conditions of a
// flow (if, a while loop), a loop's count and list, and checks written as
// expressions. It is expr-lang/expr's language, compiled once when the plan
// is loaded and run per VU with no parse on the hot path, over:
//
//   - the VU's variables by name (count, token), a data source's column as
//     source.column (users.name), any name as var("okapi-token") (a name
//     with a dash would read as a subtraction); their values are text, and a comparison
//     or arithmetic with a number reads the text as a number (count > 5
//     with count "7" is true; id == "007" compares text);
//   - response: the last step's outcome in this iteration: response.status,
//     response.duration (ms), response.size (bytes), response.ok,
//     response.error (its error kind, "" when it succeeded), response.body;
//   - json("$.path") of the last response's body (RFC 9535 JSONPath: one
//     value, a list when the path selects several, nil when none),
//     header("Name") of its headers, defined("name") (a variable is set),
//     random() in [0, 1), randomString(n[, chars]), vu, iteration, now()
//     (its Format("2006-01-02T15:04:05Z07:00") in Go's layout);
//   - expr-lang's operators and builtins (&&, ||, !, in, matches, contains,
//     startsWith, len, int, float, filter, any, all, ...), those that make
//     text counting what they make against MaxText (Text).
package expr

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/checker"
	"github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
)

// Env is what an expression runs over: one per VU, reused for every
// evaluation (its functions are bound to the VU's variables and last
// response once).
type Env struct {
	Response  Response            `expr:"response"`
	VU        int                 `expr:"vu"`
	Iteration int                 `expr:"iteration"`
	Var       func(string) string `expr:"__var__"`
	VarNamed  func(string) string `expr:"var"` // var("okapi-token"): a name that is no identifier
	JSON      func(string) any    `expr:"json"`
	Header    func(string) string `expr:"header"`
	Defined   func(string) bool   `expr:"defined"`
	Random    func() float64      `expr:"random"`
	// IntN is the source of randomString's characters: a random number
	// in [0, n). randomString(n) is of letters and digits,
	// randomString(n, chars) of the characters given.
	IntN func(n int) int `expr:"-"`
	// Text is the functions that make text, bound to this Env when it
	// first runs an expression (made: what the one running has made).
	Text    `expr:"-"`
	made    uint64
	machine vm.VM
}

// Response is the last step's outcome, as expressions see it.
type Response struct {
	Status   int     `expr:"status"`
	Duration float64 `expr:"duration"` // milliseconds
	Size     int     `expr:"size"`
	OK       bool    `expr:"ok"`
	Error    string  `expr:"error"`
	Body     string  `expr:"body"`
}

// builtins are the names an expression has without a variable of that
// name: Env's fields.
var builtins = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeOf(Env{})
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("expr"); tag != "" && tag != "-" {
			m[tag] = true
		}
	}
	return m
}()

// Reserved reports whether name is one of the expression language's own
// (response, json, vu ...): a variable of that name cannot be read by an
// expression by its name.
func Reserved(name string) bool { return builtins[name] }

// Kind is what an expression must give.
type Kind uint8

const (
	Bool Kind = iota // a condition
	Any              // a value: a count, a list
)

// Program is a compiled expression.
type Program struct {
	src  string
	prog *vm.Program
	// Vars are the variables it reads, in order of first use.
	Vars []string
	// Body and Headers say what of the last response it reads: its body
	// (response.body, json(...)), and the headers named by header("...").
	Body    bool
	Headers []string
	// JSONPaths are the paths given to json() as text, for the plan to
	// check.
	JSONPaths []string
}

// String is the expression's source.
func (p *Program) String() string { return p.src }

// Error is an expression that does not compile: Col is the column in the
// expression (from 1), 0 when unknown.
type Error struct {
	Col int
	Msg string
}

func (e *Error) Error() string { return e.Msg }

var options = []expr.Option{
	expr.Env(Env{}),
	expr.Function(opName("<", "sn"), func(p ...any) (any, error) { return cmp(p, func(c int) bool { return c < 0 }) }, new(func(string, float64) bool), new(func(string, int) bool)),
	expr.Function(opName("<", "ns"), func(p ...any) (any, error) { return cmp(p, func(c int) bool { return c < 0 }) }, new(func(float64, string) bool), new(func(int, string) bool)),
	expr.Function(opName("<=", "sn"), func(p ...any) (any, error) { return cmp(p, func(c int) bool { return c <= 0 }) }, new(func(string, float64) bool), new(func(string, int) bool)),
	expr.Function(opName("<=", "ns"), func(p ...any) (any, error) { return cmp(p, func(c int) bool { return c <= 0 }) }, new(func(float64, string) bool), new(func(int, string) bool)),
	expr.Function(opName(">", "sn"), func(p ...any) (any, error) { return cmp(p, func(c int) bool { return c > 0 }) }, new(func(string, float64) bool), new(func(string, int) bool)),
	expr.Function(opName(">", "ns"), func(p ...any) (any, error) { return cmp(p, func(c int) bool { return c > 0 }) }, new(func(float64, string) bool), new(func(int, string) bool)),
	expr.Function(opName(">=", "sn"), func(p ...any) (any, error) { return cmp(p, func(c int) bool { return c >= 0 }) }, new(func(string, float64) bool), new(func(string, int) bool)),
	expr.Function(opName(">=", "ns"), func(p ...any) (any, error) { return cmp(p, func(c int) bool { return c >= 0 }) }, new(func(float64, string) bool), new(func(int, string) bool)),
	expr.Function(opName("==", "sn"), func(p ...any) (any, error) { return cmp(p, func(c int) bool { return c == 0 }) }, new(func(string, float64) bool), new(func(string, int) bool)),
	expr.Function(opName("==", "ns"), func(p ...any) (any, error) { return cmp(p, func(c int) bool { return c == 0 }) }, new(func(float64, string) bool), new(func(int, string) bool)),
	expr.Function(opName("!=", "sn"), func(p ...any) (any, error) { return cmp(p, func(c int) bool { return c != 0 }) }, new(func(string, float64) bool), new(func(string, int) bool)),
	expr.Function(opName("!=", "ns"), func(p ...any) (any, error) { return cmp(p, func(c int) bool { return c != 0 }) }, new(func(float64, string) bool), new(func(int, string) bool)),
	expr.Function(opName("+", "sn"), func(p ...any) (any, error) { return arith(p, '+') }, new(func(string, float64) float64), new(func(string, int) float64)),
	expr.Function(opName("+", "ns"), func(p ...any) (any, error) { return arith(p, '+') }, new(func(float64, string) float64), new(func(int, string) float64)),
	expr.Function(opName("-", "sn"), func(p ...any) (any, error) { return arith(p, '-') }, new(func(string, float64) float64), new(func(string, int) float64)),
	expr.Function(opName("-", "ns"), func(p ...any) (any, error) { return arith(p, '-') }, new(func(float64, string) float64), new(func(int, string) float64)),
	expr.Function(opName("*", "sn"), func(p ...any) (any, error) { return arith(p, '*') }, new(func(string, float64) float64), new(func(string, int) float64)),
	expr.Function(opName("*", "ns"), func(p ...any) (any, error) { return arith(p, '*') }, new(func(float64, string) float64), new(func(int, string) float64)),
	expr.Function(opName("/", "sn"), func(p ...any) (any, error) { return arith(p, '/') }, new(func(string, float64) float64), new(func(string, int) float64)),
	expr.Function(opName("/", "ns"), func(p ...any) (any, error) { return arith(p, '/') }, new(func(float64, string) float64), new(func(int, string) float64)),
	expr.Operator("<", opName("<", "sn"), opName("<", "ns")),
	expr.Operator("<=", opName("<=", "sn"), opName("<=", "ns")),
	expr.Operator(">", opName(">", "sn"), opName(">", "ns")),
	expr.Operator(">=", opName(">=", "sn"), opName(">=", "ns")),
	expr.Operator("==", opName("==", "sn"), opName("==", "ns")),
	expr.Operator("!=", opName("!=", "sn"), opName("!=", "ns")),
	expr.Operator("+", append([]string{opName("+", "sn"), opName("+", "ns")}, catOverloads...)...),
	expr.Operator("-", opName("-", "sn"), opName("-", "ns")),
	expr.Operator("*", opName("*", "sn"), opName("*", "ns")),
	expr.Operator("/", opName("/", "sn"), opName("/", "ns")),
	expr.MaxNodes(10000),
}

// opName names the function an operator between a variable's text and a
// number turns into ("sn": text on the left).
func opName(op, sides string) string {
	return "__" + map[string]string{"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne",
		"+": "add", "-": "sub", "*": "mul", "/": "div"}[op] + "_" + sides
}

// number reads a variable's text, or a number, as a number.
func number(v any) (float64, error) {
	switch x := v.(type) {
	case int:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil || math.IsNaN(f) {
			return 0, fmt.Errorf("%q is not a number", x)
		}
		return f, nil
	}
	return 0, fmt.Errorf("%v is not a number", v)
}

// numbers reads an operator's two operands as numbers.
func numbers(p []any) (a, b float64, err error) {
	if a, err = number(p[0]); err == nil {
		b, err = number(p[1])
	}
	return a, b, err
}

func cmp(p []any, ok func(int) bool) (any, error) {
	a, b, err := numbers(p)
	if err != nil {
		return nil, err
	}
	c := 0
	switch {
	case a < b:
		c = -1
	case a > b:
		c = 1
	}
	return ok(c), nil
}

func arith(p []any, op byte) (any, error) {
	a, b, err := numbers(p)
	if err != nil {
		return nil, err
	}
	switch op {
	case '+':
		return a + b, nil
	case '-':
		return a - b, nil
	case '*':
		return a * b, nil
	}
	return a / b, nil
}

// Compile compiles src, which must give kind. known reports whether a
// variable is in scope where the expression stands (nil: any is); an
// unknown one is an error naming it.
func Compile(src string, kind Kind, known func(string) bool) (*Program, error) {
	if strings.Contains(src, "${") {
		return nil, &Error{Col: strings.Index(src, "${") + 1, Msg: "an expression names variables as they are (count > 5), not as ${count}"}
	}
	config := conf.CreateNew()
	for _, op := range options {
		op(config)
	}
	if kind == Bool {
		expr.AsBool()(config)
	}
	config.Check()
	tree, err := parser.ParseWithConfig(src, config)
	if err != nil {
		return nil, asError(err)
	}
	p := &Program{src: src}
	if err := p.rewrite(tree, known); err != nil {
		return nil, err
	}
	if err := checkLiterals(tree.Node); err != nil {
		return nil, err
	}
	if _, err := new(checker.Checker).PatchAndCheck(tree, config); err != nil {
		return nil, asError(err)
	}
	if p.prog, err = compiler.Compile(tree, config); err != nil {
		return nil, asError(err)
	}
	return p, nil
}

// asError is expr-lang's error as an *Error with its column.
func asError(err error) error {
	var fe *file.Error
	if errors.As(err, &fe) {
		return &Error{Col: fe.Column + 1, Msg: fe.Message}
	}
	return &Error{Msg: err.Error()}
}

// marks are what the first walk of rewrite finds.
type marks struct {
	callee map[*ast.IdentifierNode]bool // a function's name, not a variable
	dotted map[*ast.MemberNode]string   // source.column
	inside map[*ast.IdentifierNode]bool // the source of a dotted name
	lets   map[string]bool              // let x = ...
}

func (m *marks) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok {
			m.callee[id] = true
		}
	case *ast.MemberNode:
		if id, ok := n.Node.(*ast.IdentifierNode); ok && !builtins[id.Value] && !m.lets[id.Value] {
			if s, ok := n.Property.(*ast.StringNode); ok {
				m.dotted[n] = id.Value + "." + s.Value
				m.inside[id] = true
			}
		}
	}
}

// rewrite turns the variables an expression reads into calls of Env.Var
// (its own names, the functions' names and let's are left), and notes
// what of the response it reads.
func (p *Program) rewrite(tree *parser.Tree, known func(string) bool) error {
	m := &marks{callee: map[*ast.IdentifierNode]bool{}, dotted: map[*ast.MemberNode]string{},
		inside: map[*ast.IdentifierNode]bool{}, lets: map[string]bool{}}
	ast.Walk(&tree.Node, visitor(func(node *ast.Node) {
		if n, ok := (*node).(*ast.VariableDeclaratorNode); ok {
			m.lets[n.Name] = true
		}
	}))
	ast.Walk(&tree.Node, m)
	var err error
	seen := map[string]bool{}
	read := func(name string, at ast.Node) ast.Node {
		if known != nil && !known(name) && err == nil {
			err = &Error{Col: at.Location().From + 1, Msg: fmt.Sprintf("%s is not defined here: no variable, data source, extracted value or loop variable of that name", name)}
		}
		if !seen[name] {
			seen[name] = true
			p.Vars = append(p.Vars, name)
		}
		call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: "__var__"}, Arguments: []ast.Node{&ast.StringNode{Value: name}}}
		call.SetLocation(at.Location())
		return call
	}
	ast.Walk(&tree.Node, visitor(func(node *ast.Node) {
		switch n := (*node).(type) {
		case *ast.IdentifierNode:
			switch {
			case m.callee[n]:
				switch n.Value {
				case "json":
					p.Body = true
				}
			case m.inside[n], m.lets[n.Value], builtins[n.Value]:
			default:
				ast.Patch(node, read(n.Value, n))
			}
		case *ast.MemberNode:
			if name, ok := m.dotted[n]; ok {
				ast.Patch(node, read(name, n))
			}
			if id, ok := n.Node.(*ast.IdentifierNode); ok && id.Value == "response" {
				if s, ok := n.Property.(*ast.StringNode); ok && s.Value == "body" {
					p.Body = true
				}
			}
		case *ast.CallNode:
			if id, ok := n.Callee.(*ast.IdentifierNode); ok && id.Value == "var" && len(n.Arguments) == 1 {
				if s, ok := n.Arguments[0].(*ast.StringNode); ok {
					ast.Patch(node, read(s.Value, n))
				}
				return
			}
			if id, ok := n.Callee.(*ast.IdentifierNode); ok && id.Value == "json" && len(n.Arguments) == 1 {
				if s, ok := n.Arguments[0].(*ast.StringNode); ok {
					p.JSONPaths = append(p.JSONPaths, s.Value)
				}
			}
			if id, ok := n.Callee.(*ast.IdentifierNode); ok && id.Value == "header" {
				if len(n.Arguments) == 1 {
					if s, ok := n.Arguments[0].(*ast.StringNode); ok {
						p.Headers = append(p.Headers, s.Value)
						return
					}
				}
				if err == nil {
					err = &Error{Col: n.Location().From + 1, Msg: `header takes a header's name in quotes, such as header("ETag")`}
				}
			}
		}
	}))
	return err
}

// visitor is a function as an ast.Visitor.
type visitor func(*ast.Node)

func (v visitor) Visit(n *ast.Node) { v(n) }

// Bool runs a condition.
func (p *Program) Bool(env *Env) (bool, error) {
	out, err := p.Eval(env)
	b, _ := out.(bool)
	return b, err
}

// Eval runs an expression for its value.
func (p *Program) Eval(env *Env) (any, error) {
	if env.Repeat == nil {
		env.bind()
	}
	env.made = 0
	out, err := env.machine.Run(p.prog, env)
	if err != nil {
		return nil, runError(err)
	}
	return out, nil
}

// runError is expr-lang's run-time error without its source excerpt; a
// *LimitError as it is.
func runError(err error) error {
	var le *LimitError
	if errors.As(err, &le) {
		return le
	}
	var fe *file.Error
	if errors.As(err, &fe) {
		return errors.New(fe.Message)
	}
	return err
}

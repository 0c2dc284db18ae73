package plan

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/perflab/perflab/internal/inputfile"
	"github.com/perflab/perflab/tmpl"
)

// decoder turns a yaml.Node tree into plan structs, keeping positions and
// collecting every error instead of stopping at the first.
type decoder struct {
	file string
	// included: the file is one the plan includes (its fragments), whose
	// places name it.
	included bool
	errs     ErrorList
	keys     []string // the mapping keys leading to the value being decoded
	// budget bounds the nodes visited, so aliases cannot expand a small
	// file into an enormous plan.
	budget int
}

// maxNodes is the most YAML nodes a plan may expand to.
const maxNodes = 1 << 20

// spend counts a visited node; false once the plan is too large.
func (d *decoder) spend(n *yaml.Node) bool {
	d.budget++
	if d.budget == maxNodes {
		d.errorAt(n, "the plan expands to more than %d values (aliases?)", maxNodes)
	}
	return d.budget < maxNodes
}

// errorAt reports a problem without the key prefix of errorf.
func (d *decoder) errorAt(n *yaml.Node, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: n.Line, Col: n.Column, Msg: fmt.Sprintf(format, args...)})
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if len(d.keys) > 0 {
		msg = d.keys[len(d.keys)-1] + ": " + msg
	}
	e := &Error{File: d.file, Msg: msg}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

// nameKeys are the keys whose values are names (of the plan, a
// scenario, a step, a transaction, a monitor, a bus, a simulator; a call
// names its step when the step has no name): single lines (CheckName).
var nameKeys = map[string]bool{"name": true, "transaction": true, "call": true}

// posOf is n's place; in an included file, with the file's name.
func (d *decoder) posOf(n *yaml.Node) Pos {
	p := Pos{Line: n.Line, Col: n.Column}
	if d.included {
		p.File = d.file
	}
	return p
}

var (
	typText      = reflect.TypeOf(&Text{})
	typNum       = reflect.TypeOf(&Num{})
	typDuration  = reflect.TypeOf(Duration{})
	typSize      = reflect.TypeOf(Size{})
	typThink     = reflect.TypeOf(&Think{})
	typPairs     = reflect.TypeOf([]Pair{})
	typVars      = reflect.TypeOf([]*Var{})
	typData      = reflect.TypeOf([]*Data{})
	typExtracts  = reflect.TypeOf([]*Extract{})
	typJSONCheck = reflect.TypeOf([]*JSONCheck{})
	typJSONDoc   = reflect.TypeOf(&JSONDoc{})
	typPos       = reflect.TypeOf(Pos{})
	typExpr      = reflect.TypeOf(&Expr{})
	typFragments = reflect.TypeOf([]*Fragment{})
	typAssigns   = reflect.TypeOf([]*Assign{})
	typThreshold = reflect.TypeOf(&Threshold{})
	typStdDur    = reflect.TypeOf(time.Duration(0))
	typAuth      = reflect.TypeOf(&Auth{})
)

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!int":
			return "a number"
		case "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		}
		return "the string " + quoted(n.Value)
	}
	return "an alias"
}

// decode fills v (addressable) from n.
func (d *decoder) decode(n *yaml.Node, v reflect.Value) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if !d.spend(n) {
		return
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" && v.Kind() != reflect.Struct {
		return // absent value: keep the zero value
	}
	switch v.Type() {
	case typText:
		if t := d.text(n); t != nil {
			v.Set(reflect.ValueOf(t))
		}
		return
	case typNum:
		if num := d.num(n); num != nil {
			v.Set(reflect.ValueOf(num))
		}
		return
	case typDuration:
		if dur, ok := d.duration(n); ok {
			v.Set(reflect.ValueOf(Duration{Pos: d.posOf(n), D: dur}))
		}
		return
	case typSize:
		if n.Kind != yaml.ScalarNode {
			d.errorf(n, "want a size such as 4MiB, got %s", kindName(n))
			return
		}
		size, err := ParseSize(n.Value)
		if err != nil {
			d.errorf(n, "%v", err)
			return
		}
		v.Set(reflect.ValueOf(Size{Pos: d.posOf(n), N: size}))
		return
	case typStdDur: // a duration in another package's type (a monitor's slow_threshold)
		if dur, ok := d.duration(n); ok {
			v.SetInt(int64(dur))
		}
		return
	case typThreshold:
		if n.Kind != yaml.ScalarNode {
			d.errorf(n, "want a threshold such as \"p95 < 500ms\", got %s", kindName(n))
			return
		}
		t, err := ParseThreshold(n.Value)
		if err != nil {
			d.errorAt(n, "%v", err)
			return
		}
		t.Pos = d.posOf(n)
		v.Set(reflect.ValueOf(t))
		return
	case typAuth:
		if n.Kind == yaml.ScalarNode && n.Value == AuthNone {
			v.Set(reflect.ValueOf(&Auth{Pos: d.posOf(n), Type: AuthNone}))
			return
		}
		if n.Kind != yaml.MappingNode {
			d.errorf(n, "want none or {type: basic or digest, user: ..., password: ...}, got %s", kindName(n))
			return
		}
		a := &Auth{}
		d.structure(n, reflect.ValueOf(a).Elem())
		v.Set(reflect.ValueOf(a))
		return
	case typThink:
		if t := d.think(n); t != nil {
			v.Set(reflect.ValueOf(t))
		}
		return
	case typPairs:
		v.Set(reflect.ValueOf(d.pairs(n)))
		return
	case typVars:
		v.Set(reflect.ValueOf(d.vars(n)))
		return
	case typData:
		var out []*Data
		d.namedMap(n, func(k, val *yaml.Node) {
			ds := &Data{Pos: d.posOf(k), Name: k.Value}
			d.decode(val, reflect.ValueOf(ds).Elem())
			out = append(out, ds)
		})
		v.Set(reflect.ValueOf(out))
		return
	case typExtracts:
		var out []*Extract
		d.namedMap(n, func(k, val *yaml.Node) {
			ex := &Extract{Pos: d.posOf(k), Name: k.Value}
			if val.Kind == yaml.ScalarNode && strings.HasPrefix(val.Value, "$") {
				ex.JSON, ex.JSONPos = val.Value, d.posOf(val) // shorthand: name: $.json.path
			} else {
				d.decode(val, reflect.ValueOf(ex).Elem())
			}
			out = append(out, ex)
		})
		v.Set(reflect.ValueOf(out))
		return
	case typJSONCheck:
		var out []*JSONCheck
		d.namedMap(n, func(k, val *yaml.Node) {
			if val.Kind != yaml.ScalarNode {
				d.errorf(val, "want the expected value of %s as a scalar, got %s", k.Value, kindName(val))
				return
			}
			if t := d.text(val); t != nil {
				out = append(out, &JSONCheck{Pos: d.posOf(k), Path: k.Value, Equals: t})
			}
		})
		v.Set(reflect.ValueOf(out))
		return
	case typExpr:
		if n.Kind != yaml.ScalarNode {
			d.errorf(n, "want an expression such as count > 5 or response.status == 200, got %s", kindName(n))
			return
		}
		e := &Expr{Pos: d.posOf(n), Src: n.Value}
		if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0 {
			e.quoted = true
		}
		v.Set(reflect.ValueOf(e))
		return
	case typAssigns:
		var out []*Assign
		d.namedMap(n, func(k, val *yaml.Node) {
			a := &Assign{Pos: d.posOf(k), Name: k.Value}
			d.decode(val, reflect.ValueOf(&a.Expr).Elem())
			out = append(out, a)
		})
		v.Set(reflect.ValueOf(out))
		return
	case typFragments:
		var out []*Fragment
		d.namedMap(n, func(k, val *yaml.Node) {
			f := &Fragment{Pos: d.posOf(k), Name: k.Value}
			d.decode(val, reflect.ValueOf(&f.Steps).Elem())
			out = append(out, f)
		})
		v.Set(reflect.ValueOf(out))
		return
	case typJSONDoc:
		var b strings.Builder
		d.toJSON(n, &b)
		t, err := tmpl.Parse(b.String())
		if err != nil {
			d.errorf(n, "json: %v", err)
			return
		}
		v.Set(reflect.ValueOf(&JSONDoc{Pos: d.posOf(n), Text: &Text{Pos: d.posOf(n), T: t}, Node: n}))
		return
	}

	if v.CanAddr() && v.Kind() != reflect.Pointer {
		// A type of another package that reads its own YAML, such as a
		// simulator's latency: errors still get the node's position.
		if u, ok := v.Addr().Interface().(yaml.Unmarshaler); ok {
			if err := u.UnmarshalYAML(n); err != nil {
				d.errorf(n, "%v", err)
			}
			return
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem())
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			panic("plan: no decoder for " + v.Type().String())
		}
		if n.Kind != yaml.MappingNode {
			d.errorf(n, "want a mapping, got %s", kindName(n))
			return
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if v.MapIndex(reflect.ValueOf(k.Value)).IsValid() {
				d.errorAt(k, "%s is given twice", k.Value)
				continue
			}
			e := reflect.New(v.Type().Elem()).Elem()
			d.decode(val, e)
			v.SetMapIndex(reflect.ValueOf(k.Value), e)
		}
	case reflect.Struct:
		d.structure(n, v)
	case reflect.Slice:
		d.slice(n, v)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.errorf(n, "want a string, got %s", kindName(n))
			return
		}
		v.SetString(n.Value)
		if len(d.keys) > 0 && nameKeys[d.keys[len(d.keys)-1]] {
			if err := CheckName(d.keys[len(d.keys)-1], n.Value); err != nil {
				d.errorAt(n, "%v", err)
			}
		}
	case reflect.Bool:
		b, ok := scalarBool(n)
		if !ok {
			d.errorf(n, "want true or false, got %s", kindName(n))
			return
		}
		v.SetBool(b)
	case reflect.Float64:
		f, err := strconv.ParseFloat(n.Value, 64)
		if n.Kind != yaml.ScalarNode || err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			d.errorf(n, "want a finite number, got %s", n.Value)
			return
		}
		v.SetFloat(f)
	case reflect.Int, reflect.Int64:
		i, err := strconv.ParseInt(n.Value, 10, 64)
		if n.Kind != yaml.ScalarNode || err != nil {
			d.errorf(n, "want an integer, got %s", kindName(n))
			return
		}
		v.SetInt(i)
	case reflect.Uint64:
		i, err := strconv.ParseUint(n.Value, 10, 64)
		if n.Kind != yaml.ScalarNode || err != nil {
			d.errorf(n, "want a whole number, got %s", kindName(n))
			return
		}
		v.SetUint(i)
	default:
		panic("plan: no decoder for " + v.Type().String())
	}
}

func scalarBool(n *yaml.Node) (bool, bool) {
	if n.Kind != yaml.ScalarNode {
		return false, false
	}
	switch n.Value {
	case "true", "True", "TRUE", "yes":
		return true, true
	case "false", "False", "FALSE", "no":
		return false, true
	}
	return false, false
}

// fieldNames lists the YAML keys of a struct type, with each field's
// index; the fields of an embedded struct tagged ",inline" are the outer
// struct's own.
func fieldNames(t reflect.Type) ([]string, map[string][]int) {
	var names []string
	idx := map[string][]int{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.Anonymous && opts == "inline" && f.Type.Kind() == reflect.Struct {
			inner, innerIdx := fieldNames(f.Type)
			names = append(names, inner...)
			for k, path := range innerIdx {
				idx[k] = append([]int{i}, path...)
			}
			continue
		}
		if tag == "" || tag == "-" {
			continue
		}
		names = append(names, tag)
		idx[tag] = []int{i}
	}
	return names, idx
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value) {
	if f := v.FieldByName("Pos"); f.IsValid() && f.Type() == typPos && f.Interface() == (Pos{}) {
		f.Set(reflect.ValueOf(d.posOf(n)))
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "want a mapping, got %s", kindName(n))
		return
	}
	names, idx := fieldNames(v.Type())
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			d.errorAt(k, "%s is given twice", k.Value)
			continue
		}
		seen[k.Value] = true
		fi, ok := idx[k.Value]
		if !ok {
			d.errorAt(k, "unknown field %s%s", quoted(k.Value), suggest(k.Value, names))
			continue
		}
		d.keys = append(d.keys, k.Value)
		d.decode(val, v.FieldByIndex(fi))
		d.keys = d.keys[:len(d.keys)-1]
		// The value's place, where the struct keeps one beside the
		// field (CAFile's CAFilePos), for errors found later.
		if p := v.FieldByName(v.Type().FieldByIndex(fi).Name + "Pos"); p.IsValid() && p.Type() == typPos {
			p.Set(reflect.ValueOf(d.posOf(val)))
		}
	}
}

func (d *decoder) slice(n *yaml.Node, v reflect.Value) {
	et := v.Type().Elem()
	if n.Kind != yaml.SequenceNode {
		// A single scalar stands for a list of one ([]int, []string).
		if n.Kind == yaml.ScalarNode && (et.Kind() == reflect.Int || et.Kind() == reflect.String) {
			s := reflect.MakeSlice(v.Type(), 1, 1)
			d.decode(n, s.Index(0))
			v.Set(s)
			return
		}
		d.errorf(n, "want a list, got %s", kindName(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), 0, len(n.Content))
	for _, c := range n.Content {
		if c.Kind == yaml.ScalarNode && c.Tag == "!!null" {
			d.errorf(c, "empty list entry")
			continue
		}
		s = reflect.Append(s, reflect.Zero(et))
		d.decode(c, s.Index(s.Len()-1))
	}
	v.Set(s)
}

func (d *decoder) namedMap(n *yaml.Node, each func(k, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "want a mapping of names, got %s", kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if seen[k.Value] {
			d.errorAt(k, "%s is given twice", k.Value)
			continue
		}
		seen[k.Value] = true
		d.keys = append(d.keys, k.Value)
		each(k, n.Content[i+1])
		d.keys = d.keys[:len(d.keys)-1]
	}
}

func (d *decoder) pairs(n *yaml.Node) []Pair {
	var out []Pair
	d.namedMap(n, func(k, val *yaml.Node) {
		if t := d.text(val); t != nil {
			out = append(out, Pair{Pos: d.posOf(k), Name: k.Value, Value: t})
		}
	})
	return out
}

func (d *decoder) vars(n *yaml.Node) []*Var {
	if k := len(n.Content) / 2; n.Kind == yaml.MappingNode && k > MaxVars {
		d.errorf(n, "%d variables: a plan may declare at most %d (put values in data files: data: csv, file, glob, range)", k, MaxVars)
		return nil
	}
	var out []*Var
	d.namedMap(n, func(k, val *yaml.Node) {
		if err := checkIdent(k.Value); err != "" {
			d.errorf(k, "variable name %q: %s", k.Value, err)
			return
		}
		v := &Var{Pos: d.posOf(k), Name: k.Value}
		switch val.Kind {
		case yaml.ScalarNode:
			v.Values = []string{val.Value}
		case yaml.SequenceNode:
			v.List = true
			for _, c := range val.Content {
				if c.Kind != yaml.ScalarNode {
					d.errorf(c, "variable %s: want a scalar value, got %s", k.Value, kindName(c))
					continue
				}
				v.Values = append(v.Values, c.Value)
			}
			if len(val.Content) == 0 {
				d.errorf(val, "variable %s: empty list (a swept variable needs at least one value)", k.Value)
			}
		default:
			d.errorf(val, "variable %s: want a value or a list of values, got %s", k.Value, kindName(val))
			return
		}
		out = append(out, v)
	})
	return out
}

// text parses a scalar as a template.
func (d *decoder) text(n *yaml.Node) *Text {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "want a string, got %s", kindName(n))
		return nil
	}
	t, err := tmpl.Parse(n.Value)
	if err != nil {
		d.templateError(n, err)
		return nil
	}
	return &Text{Pos: d.posOf(n), T: t}
}

// templateError reports a template syntax error at its column when the
// scalar is on one line.
func (d *decoder) templateError(n *yaml.Node, err error) {
	var se *tmpl.SyntaxError
	if errors.As(err, &se) {
		col := n.Column
		if n.Style == 0 || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			if n.Style != 0 {
				col++ // opening quote
			}
			if !strings.Contains(n.Value, "\n") {
				col += se.Offset
			}
		}
		d.errs = append(d.errs, &Error{File: d.file, Line: n.Line, Col: col, Msg: se.Msg})
		return
	}
	d.errorf(n, "%v", err)
}

func (d *decoder) num(n *yaml.Node) *Num {
	num := &Num{Pos: d.posOf(n)}
	switch n.Kind {
	case yaml.ScalarNode:
		if strings.Contains(n.Value, "${") {
			t, err := tmpl.Parse(n.Value)
			if err != nil {
				d.templateError(n, err)
				return nil
			}
			num.T = t
			return num
		}
		num.Values = []string{n.Value}
	case yaml.SequenceNode:
		num.List = true
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				d.errorf(c, "want a number, got %s", kindName(c))
				return nil
			}
			num.Values = append(num.Values, c.Value)
		}
		if len(num.Values) == 0 {
			d.errorf(n, "empty list")
			return nil
		}
	default:
		d.errorf(n, "want a number, a list of numbers or ${variable}, got %s", kindName(n))
		return nil
	}
	return num
}

func (d *decoder) think(n *yaml.Node) *Think {
	t := &Think{Pos: d.posOf(n)}
	switch n.Kind {
	case yaml.ScalarNode:
		dur, err := parseDuration(n.Value)
		if err != nil {
			d.errorf(n, "%v", err)
			return nil
		}
		t.Min, t.Max = dur, dur
	case yaml.MappingNode:
		var r struct {
			Min Duration `yaml:"min"`
			Max Duration `yaml:"max"`
		}
		d.structure(n, reflect.ValueOf(&r).Elem())
		t.Min, t.Max = r.Min.D, r.Max.D
		if t.Max < t.Min {
			d.errorf(n, "max %v is less than min %v", t.Max, t.Min)
		}
	default:
		d.errorf(n, "want a duration (1s) or {min: 1s, max: 3s}, got %s", kindName(n))
		return nil
	}
	return t
}

// ParseSize reads a positive number of bytes such as 4MiB, 512KB or 1000.
func ParseSize(s string) (int64, error) {
	num := strings.TrimRight(s, "BbKkMmGgIi ")
	unit := strings.TrimSpace(s[len(num):])
	mult := int64(0)
	switch strings.ToUpper(unit) {
	case "", "B":
		mult = 1
	case "KB":
		mult = 1000
	case "MB":
		mult = 1000 * 1000
	case "GB":
		mult = 1000 * 1000 * 1000
	case "KIB":
		mult = 1 << 10
	case "MIB":
		mult = 1 << 20
	case "GIB":
		mult = 1 << 30
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if mult == 0 || err != nil || n > (1<<50)/mult {
		return 0, fmt.Errorf("want a size such as 4MiB, 512KB or 1000 (bytes), got %s", quoted(s))
	}
	if n <= 0 {
		return 0, fmt.Errorf("size %s is not above 0", s)
	}
	return n * mult, nil
}

// FormatSize writes a number of bytes the way a plan may: 4 MiB, 64 KiB, 10 bytes.
func FormatSize(n int64) string { return inputfile.FormatSize(n) }

func parseDuration(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	dur, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as 500ms, 10s or 1h30m, got %s", quoted(s))
	}
	if dur < 0 {
		return 0, fmt.Errorf("duration %s is negative", s)
	}
	return dur, nil
}

// toJSON writes a YAML node as JSON, keeping the order of keys.
func (d *decoder) toJSON(n *yaml.Node, b *strings.Builder) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if !d.spend(n) {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(n.Content[i].Value))
			b.WriteByte(':')
			d.toJSON(n.Content[i+1], b)
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			d.toJSON(c, b)
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!int", "!!float":
			b.WriteString(n.Value)
		case "!!bool":
			v, _ := scalarBool(n)
			b.WriteString(strconv.FormatBool(v))
		case "!!null":
			b.WriteString("null")
		default:
			b.WriteString(jsonString(n.Value))
		}
	default:
		d.errorf(n, "json: unsupported YAML node")
	}
}

// jsonString quotes s as a JSON string, leaving ${...} placeholders intact.
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func checkIdent(name string) string {
	if name == "" {
		return "empty"
	}
	for i, r := range name {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return fmt.Sprintf("use letters, digits, _ and -, starting with a letter (found %q)", r)
		}
	}
	return ""
}

// duration reads a scalar duration such as 10s, reporting what is wrong.
func (d *decoder) duration(n *yaml.Node) (time.Duration, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "want a duration such as 10s, got %s", kindName(n))
		return 0, false
	}
	dur, err := parseDuration(n.Value)
	if err != nil {
		d.errorf(n, "%v", err)
		return 0, false
	}
	return dur, true
}

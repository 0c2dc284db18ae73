package protoschema

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"gopkg.in/yaml.v3"
)

// Problem is a part of a message that does not fit its type, at its
// place in the plan.
type Problem struct {
	Line, Col int
	Msg       string
	// NotFound is set for a field the message does not have.
	NotFound *NotFound
}

// Check checks a message written as YAML (the protobuf JSON mapping: a
// field by its JSON or its proto name) against its type: every field is
// one of the message's, every value of its field's kind. A value with a
// placeholder (${...}) is checked when it is sent.
func Check(md protoreflect.MessageDescriptor, n *yaml.Node) []Problem {
	var c checker
	c.message(md, n)
	return c.out
}

// maxVisits bounds the values a check visits, and maxDepth how deep it
// goes: aliases can make a small document an enormous (or endless) one.
const (
	maxVisits = 1 << 20
	maxDepth  = 100
)

type checker struct {
	out           []Problem
	visits, depth int
}

// enter counts a visit one level down; false (said once) when the
// document is too large or too deep to check.
func (c *checker) enter(n *yaml.Node) bool {
	c.visits++
	if c.visits > maxVisits || c.depth >= maxDepth {
		if c.visits == maxVisits+1 || c.depth == maxDepth && c.visits <= maxVisits {
			c.add(n, "the message is too large or nested too deep to check (aliases?)")
			c.visits = maxVisits + 2
		}
		return false
	}
	c.depth++
	return true
}

func (c *checker) add(n *yaml.Node, format string, args ...any) {
	c.out = append(c.out, Problem{Line: n.Line, Col: n.Column, Msg: fmt.Sprintf(format, args...)})
}

// deref follows an alias.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func placeholder(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "${")
}

// wellKnown are the types whose JSON form is not a plain message
// (a Timestamp is a string, a Struct any object ...): not checked inside.
func wellKnown(md protoreflect.MessageDescriptor) bool {
	return strings.HasPrefix(string(md.FullName()), "google.protobuf.")
}

func (c *checker) message(md protoreflect.MessageDescriptor, n *yaml.Node) {
	n = deref(n)
	if isNull(n) || placeholder(n) || wellKnown(md) {
		return
	}
	if !c.enter(n) {
		return
	}
	defer func() { c.depth-- }()
	if n.Kind != yaml.MappingNode {
		c.add(n, "%s is a message: want a mapping of its fields", md.FullName())
		return
	}
	fields := md.Fields()
	seen := map[protoreflect.FieldNumber]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		fd := fields.ByJSONName(k.Value)
		if fd == nil {
			fd = fields.ByName(protoreflect.Name(k.Value))
		}
		if fd == nil {
			var names []string
			for j := range fields.Len() {
				names = append(names, fields.Get(j).JSONName())
			}
			nf := &NotFound{What: "field", Name: k.Value, In: "message " + string(md.FullName()), Known: names}
			c.out = append(c.out, Problem{Line: k.Line, Col: k.Column, Msg: nf.Error(), NotFound: nf})
			continue
		}
		if seen[fd.Number()] {
			c.add(k, "field %s of %s is given twice", fd.JSONName(), md.FullName())
		}
		seen[fd.Number()] = true
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
			for j := range o.Fields().Len() {
				if other := o.Fields().Get(j); other != fd && seen[other.Number()] {
					c.add(k, "fields %s and %s of %s are one of %s: give one", other.JSONName(), fd.JSONName(), md.FullName(), o.Name())
				}
			}
		}
		c.field(fd, v)
	}
}

func (c *checker) field(fd protoreflect.FieldDescriptor, n *yaml.Node) {
	n = deref(n)
	if isNull(n) || placeholder(n) {
		return
	}
	if !c.enter(n) {
		return
	}
	defer func() { c.depth-- }()
	switch {
	case fd.IsMap():
		if n.Kind != yaml.MappingNode {
			c.add(n, "field %s is a map: want a mapping", fd.JSONName())
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			c.value(fd.MapValue(), n.Content[i+1])
		}
	case fd.IsList():
		if n.Kind != yaml.SequenceNode {
			c.add(n, "field %s is repeated: want a list", fd.JSONName())
			return
		}
		for _, e := range n.Content {
			c.value(fd, e)
		}
	default:
		c.value(fd, n)
	}
}

// value checks one value of a field's kind (an element of a list).
func (c *checker) value(fd protoreflect.FieldDescriptor, n *yaml.Node) {
	n = deref(n)
	if isNull(n) || placeholder(n) {
		return
	}
	if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
		c.message(fd.Message(), n)
		return
	}
	if n.Kind != yaml.ScalarNode {
		c.add(n, "field %s holds %s values: want one, not %s", fd.JSONName(), fd.Kind(), nodeKind(n))
		return
	}
	v := n.Value
	bad := false
	switch fd.Kind() {
	case protoreflect.BoolKind:
		bad = v != "true" && v != "false"
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		_, err := strconv.ParseInt(v, 10, 32)
		bad = err != nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		_, err := strconv.ParseInt(v, 10, 64)
		bad = err != nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		_, err := strconv.ParseUint(v, 10, 32)
		bad = err != nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		_, err := strconv.ParseUint(v, 10, 64)
		bad = err != nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		f, err := strconv.ParseFloat(v, 64)
		bad = err != nil && v != "NaN" && v != "Infinity" && v != "-Infinity" || math.IsInf(f, 0) && err == nil && fd.Kind() == protoreflect.FloatKind
	case protoreflect.EnumKind:
		ed := fd.Enum()
		if ed.Values().ByName(protoreflect.Name(v)) == nil {
			if _, err := strconv.ParseInt(v, 10, 32); err != nil {
				var names []string
				for i := range ed.Values().Len() {
					names = append(names, string(ed.Values().Get(i).Name()))
				}
				nf := &NotFound{What: "value", Name: v, In: "enum " + string(ed.FullName()), Known: names}
				c.out = append(c.out, Problem{Line: n.Line, Col: n.Column, Msg: fmt.Sprintf("field %s: %v", fd.JSONName(), nf), NotFound: nf})
			}
		}
		return
	}
	if bad {
		c.add(n, "field %s holds %s values: %q is not one", fd.JSONName(), fd.Kind(), v)
	}
}

func nodeKind(n *yaml.Node) string {
	if n.Kind == yaml.SequenceNode {
		return "a list"
	}
	return "a mapping"
}

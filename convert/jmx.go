// Package convert turns other tools' test plans into perflab plans: a
// JMeter .jmx into a plan that makes the same requests. What a plan cannot
// say, or this converter does not know, is listed with its element's path,
// on the Result and as comments in the plan: never dropped in silence.
package convert

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// element is an element of a .jmx test plan with its children (the
// elements of the hashTree that follows it).
type element struct {
	Tag, Class, Name string
	Enabled          bool
	Props            map[string]*prop
	Children         []*element
	Parent           *element
	Path             string // TestPlan "x" / ThreadGroup "users" / ...

	// What the converter made of it (see account): converted into the
	// plan, or listed as not converted (itself, or with the element
	// around it).
	converted, listed bool
}

// prop is a property: a string value, or an element's properties, or a
// collection.
type prop struct {
	Value string
	Elem  map[string]*prop // elementProp
	Items []*prop          // collectionProp
	Name  string
}

func (e *element) str(name string) string {
	if p := e.Props[name]; p != nil {
		return p.Value
	}
	return ""
}

func (e *element) has(name string) bool { return e.Props[name] != nil }

func (e *element) boolean(name string) bool { return strings.TrimSpace(e.str(name)) == "true" }

// integer is a property as an int, def when it is not one.
func (e *element) integer(name string, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(e.str(name)))
	if err != nil {
		return def
	}
	return n
}

// xnode is any XML element, for reading a .jmx generically.
type xnode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Text    string     `xml:",chardata"`
	Nodes   []xnode    `xml:",any"`
}

func (n *xnode) attr(name string) (string, bool) {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

// jmx is a .jmx file read: its test plan, and, in a file of JMeter 3 or
// before, the WorkBench beside it (not run; Module Controllers may name
// what it holds).
type jmx struct {
	plan, workbench *element
}

// readJMX reads a .jmx file.
func readJMX(r io.Reader, file string) (*jmx, error) {
	var root xnode
	if err := xml.NewDecoder(r).Decode(&root); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if root.XMLName.Local != "jmeterTestPlan" || len(root.Nodes) == 0 || root.Nodes[0].XMLName.Local != "hashTree" {
		return nil, fmt.Errorf("%s: <%s> where a JMeter test plan has <jmeterTestPlan><hashTree>", file, root.XMLName.Local)
	}
	out := &jmx{}
	for _, e := range children(root.Nodes[0].Nodes, nil) {
		switch {
		case e.Tag == "TestPlan" && out.plan == nil:
			out.plan = e
		case e.Tag == "WorkBench" && out.workbench == nil:
			out.workbench = e
		}
	}
	if out.plan == nil {
		return nil, fmt.Errorf("%s: no TestPlan element", file)
	}
	return out, nil
}

// children pairs each element of a hashTree with the hashTree after it.
func children(nodes []xnode, parent *element) []*element {
	var out []*element
	for i := 0; i < len(nodes); i++ {
		n := &nodes[i]
		if n.XMLName.Local == "hashTree" {
			continue
		}
		e := &element{Tag: n.XMLName.Local, Enabled: true, Props: map[string]*prop{}, Parent: parent}
		e.Class, _ = n.attr("testclass")
		e.Name, _ = n.attr("testname")
		if v, ok := n.attr("enabled"); ok && v == "false" {
			e.Enabled = false
		}
		e.Path = fmt.Sprintf("%s %q", e.Tag, e.Name)
		if parent != nil {
			e.Path = parent.Path + " / " + e.Path
		}
		for _, p := range n.Nodes {
			if name, pr := readProp(&p); name != "" {
				e.Props[name] = pr
			}
		}
		if i+1 < len(nodes) && nodes[i+1].XMLName.Local == "hashTree" {
			e.Children = children(nodes[i+1].Nodes, e)
			i++
		}
		out = append(out, e)
	}
	return out
}

func readProp(n *xnode) (string, *prop) {
	name, _ := n.attr("name")
	p := &prop{Name: name}
	switch n.XMLName.Local {
	case "doubleProp", "floatProp", "FloatProperty", "DoubleProperty", "LongProperty", "IntegerProperty", "StringProperty", "BooleanProperty":
		// <doubleProp><name>throughput</name><value>60.0</value>...
		p.Value = n.Text
		for _, c := range n.Nodes {
			switch c.XMLName.Local {
			case "name":
				name, p.Name = c.Text, c.Text
			case "value":
				p.Value = c.Text
			}
		}
	case "stringProp", "intProp", "longProp", "boolProp":
		p.Value = n.Text
	case "elementProp":
		p.Elem = map[string]*prop{}
		for i := range n.Nodes {
			if k, c := readProp(&n.Nodes[i]); k != "" {
				p.Elem[k] = c
			}
		}
	case "collectionProp":
		for i := range n.Nodes {
			_, c := readProp(&n.Nodes[i])
			if c != nil {
				p.Items = append(p.Items, c)
			}
		}
	default:
		return "", nil
	}
	return name, p
}

func (p *prop) get(name string) string {
	if p == nil || p.Elem == nil {
		return ""
	}
	if c := p.Elem[name]; c != nil {
		return c.Value
	}
	return ""
}

// args are the arguments of an Arguments element property (User Defined
// Variables, a sampler's parameters), enabled ones only.
func (p *prop) args() []*prop {
	if p == nil || p.Elem == nil || p.Elem["Arguments.arguments"] == nil {
		return nil
	}
	var out []*prop
	for _, a := range p.Elem["Arguments.arguments"].Items {
		if a.Elem == nil || a.get("Argument.enabled") == "false" {
			continue
		}
		out = append(out, a)
	}
	return out
}

// each calls f for e and every element under it, depth first.
func (e *element) each(f func(*element)) {
	f(e)
	for _, k := range e.Children {
		k.each(f)
	}
}

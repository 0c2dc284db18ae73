// Package convert turns other tools' test plans into perflab plans: a
// JMeter .jmx into a plan that makes the same requests. What a plan cannot
// say, or this converter does not know, is listed with its element's path,
// on the Result and as comments in the plan: never dropped in silence.
package convert

import (
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
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
	Path             string // TestPlan "x" / ThreadGroup "users" / ...
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

func (e *element) boolean(name string) bool { return e.str(name) == "true" }

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

// readJMX reads a .jmx file into its test plan element.
func readJMX(r io.Reader, file string) (*element, error) {
	var root xnode
	if err := xml.NewDecoder(r).Decode(&root); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if root.XMLName.Local != "jmeterTestPlan" || len(root.Nodes) == 0 || root.Nodes[0].XMLName.Local != "hashTree" {
		return nil, fmt.Errorf("%s: <%s> where a JMeter test plan has <jmeterTestPlan><hashTree>", file, root.XMLName.Local)
	}
	els := children(root.Nodes[0].Nodes, "")
	if len(els) != 1 || els[0].Tag != "TestPlan" {
		return nil, fmt.Errorf("%s: no TestPlan element", file)
	}
	return els[0], nil
}

// children pairs each element of a hashTree with the hashTree after it.
func children(nodes []xnode, parent string) []*element {
	var out []*element
	for i := 0; i < len(nodes); i++ {
		n := &nodes[i]
		if n.XMLName.Local == "hashTree" {
			continue
		}
		e := &element{Tag: n.XMLName.Local, Enabled: true, Props: map[string]*prop{}}
		e.Class, _ = n.attr("testclass")
		e.Name, _ = n.attr("testname")
		if v, ok := n.attr("enabled"); ok && v == "false" {
			e.Enabled = false
		}
		e.Path = fmt.Sprintf("%s %q", e.Tag, e.Name)
		if parent != "" {
			e.Path = parent + " / " + e.Path
		}
		for _, p := range n.Nodes {
			if name, pr := readProp(&p); name != "" {
				e.Props[name] = pr
			}
		}
		if i+1 < len(nodes) && nodes[i+1].XMLName.Local == "hashTree" {
			e.Children = children(nodes[i+1].Nodes, e.Path)
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
	case "doubleProp", "floatProp":
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
			p.Items = append(p.Items, c)
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

// function is a JMeter function call in a value: ${__name(args)}.
var function = regexp.MustCompile(`\$\{__(\w+)\(([^)]*)\)\}`)

// value turns a JMeter value into a perflab template: ${name} stays;
// ${__P(name,default)} becomes ${name} with a variable of that default;
// functions perflab has are its placeholders; others are kept as literal
// text and reported.
func (c *converter) value(v, path string) string {
	v = function.ReplaceAllStringFunc(v, func(call string) string {
		m := function.FindStringSubmatch(call)
		args := strings.Split(m[2], ",")
		switch m[1] {
		case "P", "property":
			name := varName(strings.TrimSpace(args[0]))
			def := ""
			if len(args) > 1 {
				def = strings.TrimSpace(args[1])
			} else if !c.noDefault[name] {
				c.noDefault[name] = true
				c.skip(path, "the property "+strings.TrimSpace(args[0])+" has no default: give it with --set "+name+"=VALUE")
			}
			c.property(name, def)
			return "${" + name + "}"
		case "threadNum":
			return "${vu}"
		case "UUID":
			return "${uuid}"
		case "time":
			if strings.TrimSpace(m[2]) == "" {
				return "${timestamp_ms}"
			}
		}
		c.skip(path, "the function "+call+" (kept as literal text)")
		return "$" + call
	})
	if len(c.csvRefs) > 0 {
		v = reference.ReplaceAllStringFunc(v, func(ref string) string {
			if to, ok := c.csvRefs[ref[2:len(ref)-1]]; ok {
				return "${" + to + "}"
			}
			return ref
		})
	}
	return v
}

// reference is a variable's reference: ${name}.
var reference = regexp.MustCompile(`\$\{[A-Za-z_][\w.-]*\}`)

// varName is a JMeter property's or variable's name as a perflab
// variable's: letters, digits, _ and -, starting with a letter.
func varName(s string) string {
	s = badVarChar.ReplaceAllString(s, "_")
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		s = "p_" + s
	}
	return s
}

var badVarChar = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// property declares a variable of a JMeter property (--set overrides it).
func (c *converter) property(name, def string) {
	for _, kv := range c.vars {
		if kv[0] == name {
			return
		}
	}
	c.vars = append(c.vars, [2]string{name, def})
}

// seconds reads a JMeter count of seconds ("30", "${__P(d,30)}"): a
// duration, or a variable (whose value must be one), else "".
func (c *converter) seconds(v, path string) string {
	v = c.value(v, path)
	if _, err := strconv.Atoi(v); err == nil {
		return v + "s"
	}
	if strings.HasPrefix(v, "${") {
		return v
	}
	return ""
}

package convert_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// targetPort is the JMeter property that names the recording server's
// port in a rewritten plan: JMeter is given it with -J, the converted
// plan with --set target_port, as the converter's notes ask.
const targetPort = "${__P(target.port)}"

// rewritten is a corpus plan rewritten for a comparison: the copy both
// tools run, and the names of its HTTP samplers.
type rewritten struct {
	jmx      []byte
	samplers map[string]bool
}

// rewriteJMX rewrites a JMeter test plan into the copy that JMeter and the
// converter are given, so that it runs at the recording server and ends
// on its own, and changes nothing else. It works on the XML's tokens
// (encoding/xml): each element of the plan's tree (an element of a
// hashTree: a sampler, a controller, a timer) is read whole with its
// properties, changed as below, and written back; everything else is
// written as it was read. The changes:
//
//   - HTTP samplers and HTTP Request Defaults that name a host name
//     127.0.0.1 and the port ${__P(target.port)} instead (a port is added
//     where there was none), a protocol they name becomes http, and a path
//     that is an absolute URL gets that origin: every request goes to the
//     recording server, whatever host the plan was written for. The URLs
//     of an HTTP Authorization Manager's credentials get that origin too,
//     so that they still apply to the requests they applied to.
//   - Each thread group runs one thread, without ramp-up or scheduler (so
//     no duration), for loops iterations; a setUp or tearDown group, once:
//     one thread makes the requests' order the plan's own.
//   - A Loop Controller that loops for ever (-1) loops twice: the test
//     ends on its own.
//   - Constant and random timers wait 0 ms, and timers that pace or hold
//     samplers (throughput, synchronizing, scripted) are disabled: they
//     change when requests go, not which.
//   - OS Process Samplers are disabled: they would run the plan's commands
//     on this machine, and send no HTTP request.
func rewriteJMX(src []byte, loops int) (*rewritten, error) {
	d := xml.NewDecoder(bytes.NewReader(src))
	var out bytes.Buffer
	e := xml.NewEncoder(&out)
	rw := &rewritten{samplers: map[string]bool{}}
	var stack []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) > 0 && stack[len(stack)-1] == "hashTree" && t.Name.Local != "hashTree" {
				el, err := readElement(d, t.Copy())
				if err != nil {
					return nil, err
				}
				rw.change(el, loops)
				if err := el.encode(e); err != nil {
					return nil, err
				}
				continue
			}
			stack = append(stack, t.Name.Local)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
		if err := e.EncodeToken(xml.CopyToken(tok)); err != nil {
			return nil, err
		}
	}
	if err := e.Flush(); err != nil {
		return nil, err
	}
	rw.jmx = out.Bytes()
	return rw, nil
}

// change applies rewriteJMX's changes to one element of the plan's tree.
func (rw *rewritten) change(el *element, loops int) {
	switch tag := el.start.Name.Local; {
	case tag == "HTTPSamplerProxy" || tag == "HTTPSampler" || tag == "ConfigTestElement" && el.attr("guiclass") == "HttpDefaultsGui":
		if tag != "ConfigTestElement" && el.attr("enabled") != "false" {
			rw.samplers[el.attr("testname")] = true
		}
		if el.text("HTTPSampler.domain") != "" {
			el.set("HTTPSampler.domain", "127.0.0.1")
			el.set("HTTPSampler.port", targetPort)
		} else if el.text("HTTPSampler.port") != "" {
			el.set("HTTPSampler.port", targetPort)
		}
		if el.text("HTTPSampler.protocol") != "" {
			el.set("HTTPSampler.protocol", "http")
		}
		if p := el.text("HTTPSampler.path"); absoluteURL.MatchString(p) {
			el.set("HTTPSampler.path", absoluteURL.ReplaceAllLiteralString(p, "http://127.0.0.1:"+targetPort))
		}
	case tag == "AuthManager":
		if list := el.prop("AuthManager.auth_list"); list != nil {
			for _, k := range list.kids {
				if a, ok := k.(*element); ok && absoluteURL.MatchString(a.text("Authorization.url")) {
					a.set("Authorization.url", absoluteURL.ReplaceAllLiteralString(a.text("Authorization.url"), "http://127.0.0.1:"+targetPort))
				}
			}
		}
	case tag == "ThreadGroup" || tag == "SetupThreadGroup" || tag == "PostThreadGroup":
		el.set("ThreadGroup.num_threads", "1")
		el.set("ThreadGroup.ramp_time", "0")
		if el.prop("ThreadGroup.scheduler") != nil {
			el.set("ThreadGroup.scheduler", "false")
		}
		n := strconv.Itoa(loops)
		if tag != "ThreadGroup" {
			n = "1"
		}
		if lc := el.prop("ThreadGroup.main_controller"); lc != nil {
			lc.set("LoopController.loops", n)
		}
	case tag == "LoopController":
		if strings.TrimSpace(el.text("LoopController.loops")) == "-1" {
			el.set("LoopController.loops", "2")
		}
	case tag == "ConstantTimer" || tag == "UniformRandomTimer" || tag == "GaussianRandomTimer" || tag == "PoissonRandomTimer":
		el.set("ConstantTimer.delay", "0")
		if tag != "ConstantTimer" {
			el.set("RandomTimer.range", "0")
		}
	case tag == "ConstantThroughputTimer" || tag == "PreciseThroughputTimer" || strings.HasSuffix(tag, "ThroughputTimer") ||
		tag == "SyncTimer" || tag == "JSR223Timer" || tag == "BeanShellTimer" || tag == "BSFTimer" || tag == "SystemSampler":
		el.setAttr("enabled", "false")
	}
}

// absoluteURL is the origin of a path that is a whole URL.
var absoluteURL = regexp.MustCompile(`(?i)^https?://[^/]*`)

// element is an XML element read whole: its start and its content, text
// and elements in their order.
type element struct {
	start xml.StartElement
	kids  []any // xml.CharData, xml.Comment, *element ...
}

func readElement(d *xml.Decoder, start xml.StartElement) (*element, error) {
	el := &element{start: start}
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			kid, err := readElement(d, t.Copy())
			if err != nil {
				return nil, err
			}
			el.kids = append(el.kids, kid)
		case xml.EndElement:
			return el, nil
		default:
			el.kids = append(el.kids, xml.CopyToken(tok))
		}
	}
}

func (el *element) encode(e *xml.Encoder) error {
	if err := e.EncodeToken(el.start); err != nil {
		return err
	}
	for _, k := range el.kids {
		var err error
		switch k := k.(type) {
		case *element:
			err = k.encode(e)
		case xml.Token:
			err = e.EncodeToken(k)
		}
		if err != nil {
			return err
		}
	}
	return e.EncodeToken(el.start.End())
}

func (el *element) attr(name string) string {
	for _, a := range el.start.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (el *element) setAttr(name, value string) {
	for i, a := range el.start.Attr {
		if a.Name.Local == name {
			el.start.Attr[i].Value = value
			return
		}
	}
	el.start.Attr = append(el.start.Attr, xml.Attr{Name: xml.Name{Local: name}, Value: value})
}

// prop is the property name directly in el (<stringProp name="...">,
// <elementProp name="...">), or nil.
func (el *element) prop(name string) *element {
	for _, k := range el.kids {
		if k, ok := k.(*element); ok && k.attr("name") == name {
			return k
		}
	}
	return nil
}

// text is the value of the property name, trimmed, or "".
func (el *element) text(name string) string {
	p := el.prop(name)
	if p == nil {
		return ""
	}
	var b strings.Builder
	for _, k := range p.kids {
		if c, ok := k.(xml.CharData); ok {
			b.Write(c)
		}
	}
	return strings.TrimSpace(b.String())
}

// set gives the property name the value, adding a string property where
// el has none of that name.
func (el *element) set(name, value string) {
	p := el.prop(name)
	if p == nil {
		p = &element{start: xml.StartElement{Name: xml.Name{Local: "stringProp"}, Attr: []xml.Attr{{Name: xml.Name{Local: "name"}, Value: name}}}}
		el.kids = append(el.kids, p)
	}
	p.kids = []any{xml.CharData(value)}
}

// A plan is rewritten as rewriteJMX says, and nothing else of it changes:
// every other property, element and attribute is read back as it was.
func TestRewriteJMX(t *testing.T) {
	src := `<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan testclass="TestPlan" testname="p"/>
    <hashTree>
      <ConfigTestElement guiclass="HttpDefaultsGui" testclass="ConfigTestElement" testname="defaults">
        <stringProp name="HTTPSampler.domain">${HOST}</stringProp>
        <stringProp name="HTTPSampler.protocol">https</stringProp>
      </ConfigTestElement>
      <hashTree/>
      <AuthManager testclass="AuthManager" testname="auth">
        <collectionProp name="AuthManager.auth_list">
          <elementProp name="" elementType="Authorization">
            <stringProp name="Authorization.url">http://${HOST}:6969/api</stringProp>
            <stringProp name="Authorization.username">admin</stringProp>
          </elementProp>
        </collectionProp>
      </AuthManager>
      <hashTree/>
      <ThreadGroup testclass="ThreadGroup" testname="users">
        <stringProp name="ThreadGroup.num_threads">${__P(users,50)}</stringProp>
        <stringProp name="ThreadGroup.ramp_time">60</stringProp>
        <boolProp name="ThreadGroup.scheduler">true</boolProp>
        <stringProp name="ThreadGroup.duration">600</stringProp>
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController" testclass="LoopController">
          <intProp name="LoopController.loops">-1</intProp>
        </elementProp>
      </ThreadGroup>
      <hashTree>
        <HTTPSamplerProxy testclass="HTTPSamplerProxy" testname="login &amp; &quot;more&quot;">
          <stringProp name="HTTPSampler.domain">auth.example.com</stringProp>
          <stringProp name="HTTPSampler.path">/login</stringProp>
          <stringProp name="HTTPSampler.method">POST</stringProp>
        </HTTPSamplerProxy>
        <hashTree>
          <UniformRandomTimer testclass="UniformRandomTimer" testname="think">
            <stringProp name="ConstantTimer.delay">1000 + ${offset}</stringProp>
            <stringProp name="RandomTimer.range">3000</stringProp>
          </UniformRandomTimer>
          <hashTree/>
        </hashTree>
        <LoopController testclass="LoopController" testname="for ever">
          <stringProp name="LoopController.loops">-1</stringProp>
        </LoopController>
        <hashTree>
          <HTTPSamplerProxy testclass="HTTPSamplerProxy" testname="absolute">
            <stringProp name="HTTPSampler.path">https://other.example.com:8443/x?y=1</stringProp>
          </HTTPSamplerProxy>
          <hashTree/>
          <HTTPSamplerProxy testclass="HTTPSamplerProxy" testname="off" enabled="false">
            <stringProp name="HTTPSampler.path">/off</stringProp>
          </HTTPSamplerProxy>
          <hashTree/>
        </hashTree>
        <ConstantThroughputTimer testclass="ConstantThroughputTimer" testname="pace" enabled="true">
          <doubleProp><name>throughput</name><value>60.0</value><savedValue>0.0</savedValue></doubleProp>
        </ConstantThroughputTimer>
        <hashTree/>
        <SystemSampler testclass="SystemSampler" testname="rm"/>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
`
	want := `<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3">
  <hashTree>
    <TestPlan testclass="TestPlan" testname="p"/>
    <hashTree>
      <ConfigTestElement guiclass="HttpDefaultsGui" testclass="ConfigTestElement" testname="defaults">
        <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
        <stringProp name="HTTPSampler.protocol">http</stringProp>
        <stringProp name="HTTPSampler.port">${__P(target.port)}</stringProp>
      </ConfigTestElement>
      <hashTree/>
      <AuthManager testclass="AuthManager" testname="auth">
        <collectionProp name="AuthManager.auth_list">
          <elementProp name="" elementType="Authorization">
            <stringProp name="Authorization.url">http://127.0.0.1:${__P(target.port)}/api</stringProp>
            <stringProp name="Authorization.username">admin</stringProp>
          </elementProp>
        </collectionProp>
      </AuthManager>
      <hashTree/>
      <ThreadGroup testclass="ThreadGroup" testname="users">
        <stringProp name="ThreadGroup.num_threads">1</stringProp>
        <stringProp name="ThreadGroup.ramp_time">0</stringProp>
        <boolProp name="ThreadGroup.scheduler">false</boolProp>
        <stringProp name="ThreadGroup.duration">600</stringProp>
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController" testclass="LoopController">
          <intProp name="LoopController.loops">3</intProp>
        </elementProp>
      </ThreadGroup>
      <hashTree>
        <HTTPSamplerProxy testclass="HTTPSamplerProxy" testname="login &amp; &quot;more&quot;">
          <stringProp name="HTTPSampler.domain">127.0.0.1</stringProp>
          <stringProp name="HTTPSampler.path">/login</stringProp>
          <stringProp name="HTTPSampler.method">POST</stringProp>
          <stringProp name="HTTPSampler.port">${__P(target.port)}</stringProp>
        </HTTPSamplerProxy>
        <hashTree>
          <UniformRandomTimer testclass="UniformRandomTimer" testname="think">
            <stringProp name="ConstantTimer.delay">0</stringProp>
            <stringProp name="RandomTimer.range">0</stringProp>
          </UniformRandomTimer>
          <hashTree/>
        </hashTree>
        <LoopController testclass="LoopController" testname="for ever">
          <stringProp name="LoopController.loops">2</stringProp>
        </LoopController>
        <hashTree>
          <HTTPSamplerProxy testclass="HTTPSamplerProxy" testname="absolute">
            <stringProp name="HTTPSampler.path">http://127.0.0.1:${__P(target.port)}/x?y=1</stringProp>
          </HTTPSamplerProxy>
          <hashTree/>
          <HTTPSamplerProxy testclass="HTTPSamplerProxy" testname="off" enabled="false">
            <stringProp name="HTTPSampler.path">/off</stringProp>
          </HTTPSamplerProxy>
          <hashTree/>
        </hashTree>
        <ConstantThroughputTimer testclass="ConstantThroughputTimer" testname="pace" enabled="false">
          <doubleProp><name>throughput</name><value>60.0</value><savedValue>0.0</savedValue></doubleProp>
        </ConstantThroughputTimer>
        <hashTree/>
        <SystemSampler testclass="SystemSampler" testname="rm" enabled="false"/>
        <hashTree/>
      </hashTree>
    </hashTree>
  </hashTree>
</jmeterTestPlan>
`
	rw, err := rewriteJMX([]byte(src), 3)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := tokens(t, rw.jmx), tokens(t, []byte(want)); a != b {
		t.Errorf("rewritten:\n%s\nwant the tokens of:\n%s", rw.jmx, want)
	}
	if len(rw.samplers) != 2 || !rw.samplers[`login & "more"`] || !rw.samplers["absolute"] {
		t.Errorf("samplers %v", rw.samplers)
	}
}

// tokens is a file's XML tokens as text, blanks between elements left out.
func tokens(t *testing.T, b []byte) string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var s strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return s.String()
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		if c, ok := tok.(xml.CharData); ok && strings.TrimSpace(string(c)) == "" {
			continue
		}
		fmt.Fprintf(&s, "%#v\n", tok)
	}
}

package convert

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/perflab/perflab/plan"
)

// MaxInputBytes is the largest file perflab convert reads: 256 MiB. A
// JMeter plan or an OpenAPI description is a few MB (GitHub's, among the
// largest published, is about 10); a browser recording that keeps its
// responses' bodies can be tens. Each is decoded whole.
const MaxInputBytes = 256 << 20

// Result is a converted plan and what could not be converted.
type Result struct {
	// Plan is the perflab plan, YAML, with what was not converted listed
	// in its first comment.
	Plan []byte
	// Skipped are the elements, or parts of them, not converted: each
	// with its path in the test plan.
	Skipped []string
}

// JMeter converts a JMeter test plan (.jmx).
func JMeter(r io.Reader, file string) (*Result, error) {
	tp, err := readJMX(r, file)
	if err != nil {
		return nil, err
	}
	c := &converter{file: file, csvRefs: map[string]string{}, noDefault: map[string]bool{}}
	p := c.plan(tp)
	return render(p, c.skipped, fmt.Sprintf("the JMeter test plan %s by perflab convert jmeter", filepath.Base(file)), "Every element was converted.", "element path")
}

// render writes a converted plan: a comment saying where it came from and
// listing what was not converted (each with where it is), then the plan.
//
// The names come from the other tool's file, which anyone may have
// written: a name with a line break or another control character would
// be refused by the plan's validator (and would break the lines and
// documents names go into), so they become spaces, and the plan says so.
// The comment's lines are made one line each too: a line break in a file
// name or an element's name would end the comment.
func render(p *planOut, skipped []string, from, whole, where string) (*Result, error) {
	skipped = append(skipped, singleLineNames(p)...)
	for i, s := range skipped {
		skipped[i] = oneLine(s)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Converted from %s.\n", oneLine(from))
	if len(skipped) == 0 {
		fmt.Fprintf(&b, "# %s\n", whole)
	} else {
		fmt.Fprintf(&b, "# Not converted (%s: what):\n", where)
		for _, s := range skipped {
			fmt.Fprintf(&b, "#   %s\n", s)
		}
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return &Result{Plan: b.Bytes(), Skipped: skipped}, nil
}

// oneLine is s with its line breaks and control characters made spaces.
func oneLine(s string) string {
	s, _ = plan.SingleLine(s)
	return s
}

// singleLineNames makes the plan's names one line each (plan.SingleLine),
// and says which were changed.
func singleLineNames(p *planOut) []string {
	var notes []string
	fix := func(what string, name *string) {
		if s, changed := plan.SingleLine(*name); changed {
			notes = append(notes, fmt.Sprintf("%s %.60q: its line breaks and control characters, which a name may not hold, are spaces in %.60q", what, *name, s))
			*name = s
		}
	}
	var steps func([]*stepOut)
	steps = func(list []*stepOut) {
		for _, st := range list {
			fix("the step", &st.Name)
			fix("the transaction", &st.Transaction)
			steps(st.Steps)
		}
	}
	fix("the plan's name", &p.Name)
	steps(p.Setup)
	for _, sc := range p.Scenarios {
		fix("the scenario", &sc.Name)
		steps(sc.Flow)
	}
	steps(p.Teardown)
	return notes
}

type converter struct {
	file    string
	vars    [][2]string
	skipped []string
	// csvRefs rewrite a CSV Data Set's variables, ${barcode}, into
	// perflab's ${source.barcode}.
	csvRefs map[string]string
	data    map[string]*dataOut
	// serial: thread groups run one after another.
	serial bool
	// topHeaders are the plan's headers.
	topHeaders map[string]string
	// noDefault are the properties without a default, said once each.
	noDefault map[string]bool
	// group is the thread group whose flow is being converted.
	group *element
}

func (c *converter) skip(path, what string) { c.skipped = append(c.skipped, path+": "+what) }

type planOut struct {
	Name      string              `yaml:"name"`
	Target    string              `yaml:"target,omitempty"`
	Vars      map[string]string   `yaml:"vars,omitempty"`
	Headers   map[string]string   `yaml:"headers,omitempty"`
	Data      map[string]*dataOut `yaml:"data,omitempty"`
	Setup     []*stepOut          `yaml:"setup,omitempty"`
	Scenarios []*scenarioOut      `yaml:"scenarios"`
	Teardown  []*stepOut          `yaml:"teardown,omitempty"`
}

type dataOut struct {
	CSV     string   `yaml:"csv"`
	Columns []string `yaml:"columns,omitempty,flow"`
	Mode    string   `yaml:"mode,omitempty"`
}

type scenarioOut struct {
	Name       string     `yaml:"name"`
	VUs        any        `yaml:"vus"`
	Iterations any        `yaml:"iterations,omitempty"`
	Rate       any        `yaml:"rate,omitempty"`
	StartRate  float64    `yaml:"start_rate,omitempty"`
	RampRate   []rampOut  `yaml:"ramp_rate,omitempty"`
	MaxVUs     any        `yaml:"max_vus,omitempty"`
	Duration   string     `yaml:"duration,omitempty"`
	RampUp     string     `yaml:"ramp_up,omitempty"`
	Think      any        `yaml:"think,omitempty"`
	OnError    string     `yaml:"on_error,omitempty"`
	Flow       []*stepOut `yaml:"flow"`
}

type rampOut struct {
	Target   float64 `yaml:"target"`
	Duration string  `yaml:"duration"`
}

type stepOut struct {
	Transaction string            `yaml:"transaction,omitempty"`
	Steps       []*stepOut        `yaml:"steps,omitempty"`
	Name        string            `yaml:"name,omitempty"`
	Method      string            `yaml:"method,omitempty"`
	URL         string            `yaml:"url,omitempty"`
	Headers     map[string]string `yaml:"headers,omitempty"`
	Query       map[string]string `yaml:"query,omitempty"`
	Body        string            `yaml:"body,omitempty"`
	JSON        any               `yaml:"json,omitempty"`
	Extract     map[string]any    `yaml:"extract,omitempty"`
	Check       map[string]any    `yaml:"check,omitempty"`
	Redirects   *int              `yaml:"redirects,omitempty"`
	Think       any               `yaml:"think,omitempty"`
}

// scope is what applies to the samplers under an element: headers, and
// the HTTP Request Defaults.
type scope struct {
	headers  map[string]string
	defaults *element
}

func (s scope) with(headers map[string]string, defaults *element) scope {
	out := scope{headers: map[string]string{}, defaults: s.defaults}
	for k, v := range s.headers {
		out.headers[k] = v
	}
	for k, v := range headers {
		out.headers[k] = v
	}
	if defaults != nil {
		out.defaults = defaults
	}
	return out
}

func (c *converter) plan(tp *element) *planOut {
	p := &planOut{Name: tp.Name}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(c.file), filepath.Ext(c.file))
	}
	c.serial = tp.boolean("TestPlan.serialize_threadgroups")
	c.arguments(tp.Props["TestPlan.user_defined_variables"])
	top := c.configs(tp, scope{})
	// Plan-wide headers and defaults are the plan's own.
	p.Headers, c.topHeaders = top.headers, top.headers
	if top.defaults != nil {
		p.Target = c.origin(top.defaults, tp.Path)
	}
	var groups []*element
	for _, e := range tp.Children {
		if !e.Enabled {
			c.skip(e.Path, "disabled")
			continue
		}
		switch e.Tag {
		case "ThreadGroup", "SetupThreadGroup", "PostThreadGroup":
			groups = append(groups, e)
		case "Arguments", "ConfigTestElement", "HeaderManager", "CSVDataSet":
			// configs: read above
		case "ResultCollector", "Summariser", "BackendListener":
			c.skip(e.Path, "a listener: perflab keeps every result itself")
		default:
			c.skip(e.Path, "not converted ("+e.Tag+")")
		}
	}
	if c.serial && len(groups) > 1 {
		c.skip(tp.Path, "thread groups run one after another: perflab runs a plan's scenarios at the same time")
	}
	for _, g := range groups {
		sc := c.configs(g, top)
		switch g.Tag {
		case "SetupThreadGroup", "PostThreadGroup":
			steps := c.flow(g.Children, sc)
			if n := g.str("ThreadGroup.num_threads"); n != "1" && n != "" {
				c.skip(g.Path, "its "+n+" threads: perflab's setup and teardown run once")
			}
			if g.Tag == "SetupThreadGroup" {
				p.Setup = append(p.Setup, flat(steps)...)
			} else {
				p.Teardown = append(p.Teardown, flat(steps)...)
			}
		default:
			p.Scenarios = append(p.Scenarios, c.scenario(g, sc))
		}
	}
	if len(p.Scenarios) == 0 {
		c.skip(tp.Path, "no enabled thread group: the plan has an empty scenario")
		p.Scenarios = append(p.Scenarios, &scenarioOut{Name: "none", VUs: 1, Iterations: 0, Flow: []*stepOut{}})
	}
	if len(c.vars) > 0 {
		p.Vars = map[string]string{}
		for _, kv := range c.vars {
			p.Vars[kv[0]] = kv[1]
		}
	}
	p.Data = c.data
	return p
}

// flat is steps with transactions' steps in their place (setup and
// teardown have no transactions).
func flat(steps []*stepOut) []*stepOut {
	var out []*stepOut
	for _, s := range steps {
		if s.Transaction != "" {
			out = append(out, flat(s.Steps)...)
			continue
		}
		if s.URL != "" {
			out = append(out, s)
		}
	}
	return out
}

// arguments adds User Defined Variables to the plan's vars.
func (c *converter) arguments(p *prop) {
	if p == nil || p.Elem == nil {
		return
	}
	args := p.Elem["Arguments.arguments"]
	if args == nil {
		return
	}
	for _, a := range args.Items {
		if name := a.get("Argument.name"); name != "" {
			c.property(varName(name), c.value(a.get("Argument.value"), "User Defined Variables"))
		}
	}
}

// configs reads the configuration elements directly under e: variables,
// headers, HTTP Request Defaults, CSV Data Sets.
func (c *converter) configs(e *element, in scope) scope {
	headers := map[string]string{}
	var defaults *element
	for _, k := range e.Children {
		if !k.Enabled {
			continue
		}
		switch k.Tag {
		case "Arguments":
			c.arguments(&prop{Elem: k.Props})
		case "HeaderManager":
			for name, v := range c.headerManager(k) {
				headers[name] = v
			}
		case "ConfigTestElement":
			if k.Props["HTTPsampler.Arguments"] != nil || k.str("HTTPSampler.domain") != "" {
				defaults = k
			} else {
				c.skip(k.Path, "a configuration element perflab does not know")
			}
		case "CSVDataSet":
			c.csvDataSet(k)
		}
	}
	return in.with(headers, defaults)
}

func (c *converter) headerManager(e *element) map[string]string {
	out := map[string]string{}
	hs := e.Props["HeaderManager.headers"]
	if hs == nil {
		return out
	}
	for _, h := range hs.Items {
		if n := h.get("Header.name"); n != "" {
			out[n] = c.value(h.get("Header.value"), e.Path)
		}
	}
	return out
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// csvDataSet makes a CSV Data Set a csv data source, its variables
// ${source.column}.
func (c *converter) csvDataSet(e *element) {
	file := c.value(e.str("filename"), e.Path)
	name := strings.Trim(unsafeName.ReplaceAllString(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), "_"), "_")
	if name == "" {
		name = "csv"
	}
	names := e.str("variableNames")
	if d := e.str("delimiter"); d != "" && d != "," {
		c.skip(e.Path, "the delimiter "+strconv.Quote(d)+": perflab reads comma-separated files")
	}
	mode := ""
	if e.str("shareMode") == "shareMode.thread" {
		mode = "per-vu"
	}
	if e.str("recycle") == "false" {
		c.skip(e.Path, "recycle=false (stop at the end of the file): perflab starts the file again")
	}
	if c.data == nil {
		c.data = map[string]*dataOut{}
	}
	d := &dataOut{CSV: file, Mode: mode}
	if names != "" && !e.boolean("ignoreFirstLine") {
		// The variables name the columns of a file without a header line.
		for _, col := range strings.Split(names, ",") {
			d.Columns = append(d.Columns, strings.TrimSpace(col))
		}
	}
	c.data[name] = d
	for _, col := range strings.Split(names, ",") {
		if col = strings.TrimSpace(col); col != "" {
			c.csvRefs[col] = name + "." + col
		}
	}
	if names == "" {
		c.skip(e.Path, "its columns' names are in the file: perflab refers to them as ${"+name+".COLUMN}; the plan's ${COLUMN} were not rewritten")
	}
}

func (c *converter) scenario(g *element, sc scope) *scenarioOut {
	s := &scenarioOut{Name: g.Name, VUs: c.number(g.str("ThreadGroup.num_threads"), g.Path)}
	if r := g.str("ThreadGroup.ramp_time"); r != "" && r != "0" {
		s.RampUp = c.seconds(r, g.Path)
	}
	loop := g.Props["ThreadGroup.main_controller"]
	loops := loop.get("LoopController.loops")
	switch {
	case g.boolean("ThreadGroup.scheduler") && g.str("ThreadGroup.duration") != "":
		s.Duration = c.seconds(g.str("ThreadGroup.duration"), g.Path)
		if loops != "-1" && loops != "" {
			c.skip(g.Path, "its "+loops+" loops beside its duration: the converted scenario runs for the duration")
		}
	case loops == "-1" || loop.get("LoopController.continue_forever") == "true" && loops == "":
		c.skip(g.Path, "loops for ever with no duration: the converted scenario runs 1 iteration")
		s.Iterations = 1
	default:
		s.Iterations = c.number(loops, g.Path)
	}
	switch g.str("ThreadGroup.on_sample_error") {
	case "startnextloop", "startnextithread":
		s.OnError = "next_iteration"
	case "stopthread":
		s.OnError = "stop_vu"
	case "stoptest", "stoptestnow":
		s.OnError = "stop_vu"
		c.skip(g.Path, "on a sampler error the test stops: the converted scenario stops the VU")
	}
	c.group = g
	s.Flow = c.flow(g.Children, sc)
	c.group = nil
	s.Think = c.timers(g)
	if s.Flow == nil {
		s.Flow = []*stepOut{}
	}
	c.throughput(g, s, loops)
	return s
}

// throughput makes a thread group that a throughput timer paces an
// arrival-rate scenario: its threads are its VUs, started beforehand and
// at most. JMeter's timers pace samples, perflab's rate starts
// iterations, so the rate is the samples' over the steps of an
// iteration.
func (c *converter) throughput(g *element, s *scenarioOut, loops string) {
	steps := countSteps(s.Flow)
	threads, _ := s.VUs.(int)
	for _, k := range g.Children {
		if !k.Enabled || steps == 0 {
			continue
		}
		var perSec float64 // the samples a second of the thread group
		var ramp []rampOut
		num := func(name string) (float64, bool) {
			v, err := strconv.ParseFloat(c.value(k.str(name), k.Path), 64)
			if err != nil || v < 0 {
				c.skip(k.Path, "its "+name+" "+strconv.Quote(k.str(name))+" (not a number)")
				return 0, false
			}
			return v, true
		}
		switch k.Tag {
		case "ConstantThroughputTimer":
			t, ok := num("throughput")
			if !ok {
				continue
			}
			perSec = t / 60
			switch k.str("calcMode") {
			case "0", "": // this thread only
				if threads == 0 {
					c.skip(k.Path, "a throughput per thread of a thread group whose threads are a variable")
					continue
				}
				perSec *= float64(threads)
			case "1", "3": // all active threads, of every thread group
				c.skip(k.Path, "a throughput shared by every thread group: it is this scenario's alone")
			}
		case "PreciseThroughputTimer":
			t, ok1 := num("throughput")
			period, ok2 := num("throughputPeriod")
			if !ok1 || !ok2 || period == 0 {
				continue
			}
			perSec = t / period
			if s.Duration == "" {
				if d := k.str("duration"); d != "" && d != "0" {
					s.Duration = c.seconds(d, k.Path)
				}
			}
		case "kg.apc.jmeter.timers.VariableThroughputTimer":
			rows := k.Props["load_profile"]
			if rows == nil || len(rows.Items) == 0 {
				c.skip(k.Path, "a throughput shaping timer without rows")
				continue
			}
			prev := -1.0
			for i, row := range rows.Items {
				if len(row.Items) != 3 {
					c.skip(k.Path, fmt.Sprintf("its row %d (not start, end, duration)", i+1))
					ramp = nil
					break
				}
				var v [3]float64
				for j, it := range row.Items {
					f, err := strconv.ParseFloat(c.value(it.Value, k.Path), 64)
					if err != nil || f < 0 {
						c.skip(k.Path, fmt.Sprintf("its row %d's %q (not a number)", i+1, it.Value))
						ramp = nil
						break
					}
					v[j] = f
				}
				if prev < 0 {
					s.StartRate = v[0] / float64(steps)
				} else if v[0] != prev {
					c.skip(k.Path, fmt.Sprintf("its row %d starts at %g/s where the row before ended at %g/s: perflab's rate ramps from one to the other over the row", i+1, v[0], prev))
				}
				ramp = append(ramp, rampOut{Target: v[1] / float64(steps), Duration: strconv.FormatFloat(v[2], 'f', -1, 64) + "s"})
				prev = v[1]
			}
			if ramp == nil {
				continue
			}
		default:
			continue
		}
		if threads == 0 {
			c.skip(k.Path, "the thread group's threads are a variable: its arrival rate's max_vus is that variable")
		}
		s.MaxVUs = s.VUs
		if ramp != nil {
			s.RampRate, s.Duration = ramp, ""
		} else {
			rate := perSec / float64(steps)
			s.Rate = rate
			if s.Duration == "" {
				// Loops at that pace: the time JMeter takes for them.
				n, err := strconv.Atoi(loops)
				if err != nil || n <= 0 || threads == 0 || rate == 0 {
					c.skip(k.Path, "paced loops without a duration: the arrival rate runs for 60s")
					s.Duration = "60s"
				} else {
					s.Duration = strconv.Itoa(int(math.Ceil(float64(n*threads)/rate))) + "s"
				}
			}
		}
		if s.RampUp != "" {
			c.skip(g.Path, "its ramp-up "+s.RampUp+": the arrival rate starts at once")
			s.RampUp = ""
		}
		s.Iterations = nil
		return
	}
}

// countSteps is the requests of a flow, its transactions' included.
func countSteps(flow []*stepOut) int {
	n := 0
	for _, s := range flow {
		if s.Transaction != "" {
			n += countSteps(s.Steps)
		} else if s.URL != "" {
			n++
		}
	}
	return n
}

// number is a count: an int, or a template (a variable).
func (c *converter) number(v, path string) any {
	v = c.value(v, path)
	if n, err := strconv.Atoi(v); err == nil {
		return n
	}
	return v
}

// timers reads the timers directly under e as a think time.
func (c *converter) timers(e *element) any {
	var think any
	for _, k := range e.Children {
		if !k.Enabled {
			continue
		}
		switch k.Tag {
		case "ConstantTimer":
			think = c.ms(k.str("ConstantTimer.delay"), k.Path)
		case "UniformRandomTimer":
			lo, _ := strconv.Atoi(k.str("ConstantTimer.delay"))
			spread, err := strconv.ParseFloat(k.str("RandomTimer.range"), 64)
			if err != nil {
				c.skip(k.Path, "its range "+k.str("RandomTimer.range"))
				continue
			}
			think = map[string]string{"min": fmt.Sprintf("%dms", lo), "max": fmt.Sprintf("%dms", lo+int(spread))}
		case "GaussianRandomTimer", "PoissonRandomTimer", "SyncTimer":
			c.skip(k.Path, "not converted ("+k.Tag+")")
		}
	}
	return think
}

func (c *converter) ms(v, path string) any {
	v = c.value(v, path)
	if _, err := strconv.Atoi(v); err == nil {
		return v + "ms"
	}
	c.skip(path, "the delay "+v+" (not a number of milliseconds)")
	return nil
}

// flow converts the samplers and controllers among elements.
func (c *converter) flow(els []*element, sc scope) []*stepOut {
	var out []*stepOut
	for _, e := range els {
		if !e.Enabled {
			c.skip(e.Path, "disabled")
			continue
		}
		switch e.Tag {
		case "HTTPSamplerProxy", "HTTPSampler":
			out = append(out, c.sampler(e, sc))
		case "TransactionController":
			inner := c.configs(e, sc)
			steps := c.flow(e.Children, inner)
			if e.boolean("TransactionController.includeTimers") {
				c.skip(e.Path, "its timers counted in its time: a perflab transaction's time is its steps'")
			}
			out = append(out, &stepOut{Transaction: e.Name, Steps: flat(steps)})
		case "GenericController", "SimpleController":
			out = append(out, c.flow(e.Children, c.configs(e, sc))...)
		case "OnceOnlyController":
			c.skip(e.Path, "runs once per thread: its samplers are in every iteration")
			out = append(out, c.flow(e.Children, c.configs(e, sc))...)
		case "LoopController":
			n, err := strconv.Atoi(e.str("LoopController.loops"))
			if err != nil || n < 1 || n > 100 {
				c.skip(e.Path, "a loop of "+e.str("LoopController.loops")+" (its samplers are in once)")
				n = 1
			}
			steps := c.flow(e.Children, c.configs(e, sc))
			if n*len(steps) > maxLoopSteps {
				c.skip(e.Path, fmt.Sprintf("a loop of %d times %d steps: its steps are in once", n, len(steps)))
				n = 1
			}
			for range n {
				out = append(out, steps...)
			}
		case "ConstantThroughputTimer", "PreciseThroughputTimer", "kg.apc.jmeter.timers.VariableThroughputTimer":
			if c.group == nil || !slices.Contains(c.group.Children, e) {
				c.skip(e.Path, "a throughput timer inside a controller: not converted (one directly under the thread group makes its arrival rate)")
			} // else read by throughput
		case "Arguments", "HeaderManager", "ConfigTestElement", "CSVDataSet",
			"ConstantTimer", "UniformRandomTimer":
			// read by configs and timers
		case "ResultCollector", "Summariser", "BackendListener":
			c.skip(e.Path, "a listener: perflab keeps every result itself")
		default:
			c.skip(e.Path, "not converted ("+e.Tag+")")
		}
	}
	return out
}

// maxLoopSteps bounds the steps a Loop Controller is unrolled into.
const maxLoopSteps = 200

// origin is the base URL of HTTP Request Defaults.
func (c *converter) origin(d *element, path string) string {
	proto := c.value(d.str("HTTPSampler.protocol"), path)
	if proto == "" {
		proto = "http"
	}
	host := c.value(d.str("HTTPSampler.domain"), path)
	if host == "" {
		return ""
	}
	if port := c.value(d.str("HTTPSampler.port"), path); port != "" {
		host += ":" + port
	}
	return proto + "://" + host + c.value(d.str("HTTPSampler.path"), path)
}

func (c *converter) sampler(e *element, sc scope) *stepOut {
	inner := c.configs(e, sc)
	s := &stepOut{Name: e.Name, Method: strings.ToUpper(e.str("HTTPSampler.method"))}
	if s.Method == "GET" || s.Method == "" {
		s.Method = ""
	}
	path := c.value(e.str("HTTPSampler.path"), e.Path)
	if host := c.value(e.str("HTTPSampler.domain"), e.Path); host != "" || e.str("HTTPSampler.port") != "" {
		d := &element{Props: map[string]*prop{}}
		for _, k := range []string{"HTTPSampler.protocol", "HTTPSampler.domain", "HTTPSampler.port"} {
			v := e.str(k)
			if v == "" && inner.defaults != nil {
				v = inner.defaults.str(k)
			}
			d.Props[k] = &prop{Value: v}
		}
		s.URL = c.origin(d, e.Path) + path
	} else {
		s.URL = path
	}
	if s.URL == "" {
		s.URL = "/"
	}
	for k, v := range inner.headers {
		if top, ok := c.topHeaders[k]; ok && top == v {
			continue // the plan's own
		}
		if s.Headers == nil {
			s.Headers = map[string]string{}
		}
		s.Headers[k] = v
	}
	var params []string
	if args := e.Props["HTTPsampler.Arguments"]; args != nil && args.Elem["Arguments.arguments"] != nil {
		items := args.Elem["Arguments.arguments"].Items
		if e.boolean("HTTPSampler.postBodyRaw") {
			if len(items) > 0 {
				s.Body = c.value(items[0].get("Argument.value"), e.Path)
			}
		} else {
			for _, a := range items {
				name, v := a.get("Argument.name"), c.value(a.get("Argument.value"), e.Path)
				if name == "" {
					continue
				}
				if s.Method == "" || s.Method == "DELETE" || s.Method == "HEAD" {
					if s.Query == nil {
						s.Query = map[string]string{}
					}
					s.Query[name] = v
				} else {
					params = append(params, url.QueryEscape(name)+"="+url.QueryEscape(v))
				}
			}
		}
	}
	// A POST, PUT or PATCH without a raw body is a form, as JMeter sends
	// it (its content type said even when the form is empty).
	if !e.boolean("HTTPSampler.postBodyRaw") && (s.Method == "POST" || s.Method == "PUT" || s.Method == "PATCH") {
		s.Body = strings.Join(params, "&")
		if s.Headers == nil {
			s.Headers = map[string]string{}
		}
		if _, ok := s.Headers["Content-Type"]; !ok {
			s.Headers["Content-Type"] = "application/x-www-form-urlencoded; charset=UTF-8"
		}
	}
	if !e.boolean("HTTPSampler.follow_redirects") && !e.boolean("HTTPSampler.auto_redirects") {
		none := 0 // JMeter's sampler takes the 3xx as it is; perflab's steps follow it by default
		s.Redirects = &none
	}
	for _, k := range e.Children {
		if !k.Enabled {
			c.skip(k.Path, "disabled")
			continue
		}
		switch k.Tag {
		case "ResponseAssertion":
			c.assertion(k, s)
		case "JSONPathAssertion":
			if s.Check == nil {
				s.Check = map[string]any{}
			}
			want := c.value(k.str("EXPECTED_VALUE"), k.Path)
			s.Check["json"] = map[string]string{k.str("JSON_PATH"): want}
		case "RegexExtractor":
			if s.Extract == nil {
				s.Extract = map[string]any{}
			}
			x := map[string]string{"regex": k.str("RegexExtractor.regex")}
			if d := k.str("RegexExtractor.default"); d != "" {
				x["default"] = d
			}
			if t := k.str("RegexExtractor.template"); t != "$1$" && t != "" {
				c.skip(k.Path, "the template "+t+": perflab takes the regex's first group")
			}
			s.Extract[k.str("RegexExtractor.refname")] = x
		case "JSONPostProcessor":
			if s.Extract == nil {
				s.Extract = map[string]any{}
			}
			names := strings.Split(k.str("JSONPostProcessor.referenceNames"), ";")
			paths := strings.Split(k.str("JSONPostProcessor.jsonPathExprs"), ";")
			for i, n := range names {
				if i < len(paths) {
					s.Extract[strings.TrimSpace(n)] = strings.TrimSpace(paths[i])
				}
			}
			if k.str("JSONPostProcessor.defaultValues") != "" {
				c.skip(k.Path, "its default values")
			}
		case "HeaderManager", "ConfigTestElement", "Arguments", "CSVDataSet":
		case "ConstantTimer", "UniformRandomTimer":
			if t := c.timers(e); t != nil {
				c.skip(k.Path, "a timer of one sampler: it is a pause after the step")
				s.Think = t
			}
		default:
			c.skip(k.Path, "not converted ("+k.Tag+")")
		}
	}
	return s
}

// assertion converts a Response Assertion on the status or the body.
func (c *converter) assertion(k *element, s *stepOut) {
	var tests []string
	if ts := k.Props["Asserion.test_strings"]; ts != nil { // JMeter's own spelling
		for _, t := range ts.Items {
			tests = append(tests, t.Value)
		}
	}
	typ, _ := strconv.Atoi(k.str("Assertion.test_type"))
	const contains, match, equals, substring, not, or = 2, 1, 8, 16, 4, 32
	if typ&(not|or) != 0 || len(tests) == 0 {
		c.skip(k.Path, "a negated or either-or assertion, or one with nothing to test")
		return
	}
	if s.Check == nil {
		s.Check = map[string]any{}
	}
	switch k.str("Assertion.test_field") {
	case "Assertion.response_code":
		var codes []int
		for _, t := range tests {
			n, err := strconv.Atoi(t)
			if err != nil || typ&(equals|substring|contains|match) == 0 {
				c.skip(k.Path, "the status test "+t)
				return
			}
			codes = append(codes, n)
		}
		sort.Ints(codes)
		if len(codes) == 1 {
			s.Check["status"] = codes[0]
		} else {
			s.Check["status"] = codes
		}
	case "Assertion.response_data", "":
		if typ&substring == 0 && typ&contains == 0 || len(tests) > 1 {
			c.skip(k.Path, "a body test other than one substring")
			return
		}
		if typ&contains != 0 && regexp.QuoteMeta(tests[0]) != tests[0] {
			c.skip(k.Path, "a regular expression on the body (checked as a substring)")
		}
		s.Check["body_contains"] = c.value(tests[0], k.Path)
	default:
		c.skip(k.Path, "an assertion on "+k.str("Assertion.test_field"))
	}
}

package convert

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JMeter converts a JMeter test plan (.jmx). The plan's directory (file's)
// is where an Include Controller's files are read from.
func JMeter(r io.Reader, file string) (*Result, error) {
	doc, err := readJMX(r, file)
	if err != nil {
		return nil, err
	}
	c := &converter{file: file, dir: filepath.Dir(file), doc: doc,
		props: map[string]string{}, udvs: map[string]*udv{}, csvCols: map[string]string{},
		dataVars: map[string]string{}, noted: map[[2]string]bool{}, loopIdx: map[string]string{},
		included: map[string]*element{}, setVars: map[string]bool{}}
	p := c.plan()
	c.fixup(p)
	acct := c.account()
	skipped, comment := c.noteLines()
	if err := checkSends(p, file, "no sampler perflab converts (HTTP Request samplers) in an enabled thread group", skipped); err != nil {
		return nil, err
	}
	res, err := render(p, skipped, comment, fmt.Sprintf("the JMeter test plan %s by perflab convert jmeter", filepath.Base(file)), "Every element was converted.", "element path")
	if err != nil {
		return nil, err
	}
	res.Elements = acct
	return res, nil
}

type converter struct {
	file, dir string
	doc       *jmx
	notes     []note
	noted     map[[2]string]bool

	// props are the JMeter properties (${__P(name,default)}) by their
	// variable's name, with their defaults.
	props     map[string]string
	propOrder []string
	// udvs are the User Defined Variables by their JMeter names.
	udvs     map[string]*udv
	udvOrder []string
	// csvCols are the CSV Data Sets' variables: source.column by the
	// JMeter name.
	csvCols map[string]string
	// dataVars are the variables a configuration element gives (random
	// variables, counters): the data source by the JMeter name.
	dataVars map[string]string
	data     map[string]*dataOut
	// csvSource is each CSV Data Set's data source.
	csvSource map[*element]string
	// serial: thread groups run one after another.
	serial bool
	// cookies is http.cookies: keep, per_iteration or off.
	cookies string
	// group is the thread group whose flow is being converted.
	group *element
	// modules are the Module Controllers being converted (a target that
	// holds its own Module Controller is not converted again).
	modules []*element
	// loopIdx names the index variable of each loop JMeter names
	// __jm__NAME__idx.
	loopIdx map[string]string
	// included are the Test Fragments of Include Controllers' files, by
	// path.
	included map[string]*element
	// refs are the variables the plan refers to, by JMeter's names.
	refs map[string]bool
	// extNames are the perflab names of the extractions' variables, by
	// JMeter's names, where they differ.
	extNames map[string]string
	// target is the plan's target (a template with marks).
	target string
	// targets are the elements Module Controllers name.
	targets map[*element]bool
	// planHeaders are the test plan's headers.
	planHeaders map[string]string
	// gens are the calls of functions that compute a value each time it
	// is read, by their marks' numbers; genKeys their numbers by place,
	// genValue and genCount the value being converted and its calls so
	// far (see gen).
	gens     []*gen
	genKeys  map[genKey]int
	genValue string
	genCount map[string]int
	// inUDV: a User Defined Variable's value is being converted.
	inUDV bool
	// setVars are the JMeter variables set: steps give (by JMeter name).
	setVars map[string]bool
	// lastOf are the extractors whose last match a script picks (their
	// match: last), pickers those scripts.
	lastOf, pickers map[*element]bool
}

// note is something not converted: an element's path and what.
type note struct {
	e    *element
	what string
}

// note lists what of e is not converted (once).
func (c *converter) note(e *element, what string) {
	path := "(plan)"
	if e != nil {
		path = e.Path
		e.listed = true
	}
	key := [2]string{path, what}
	if c.noted[key] {
		return
	}
	c.noted[key] = true
	c.notes = append(c.notes, note{e, what})
}

// drop lists e as not converted, with the elements under it.
func (c *converter) drop(e *element, what string) {
	c.note(e, what)
	e.each(func(k *element) { k.listed = true })
}

// done marks e converted.
func (c *converter) done(e *element) { e.converted = true }

// noteLines are the notes for Result.Skipped and for the plan's comment:
// a note said of several elements is written once, with their paths.
func (c *converter) noteLines() (skipped, comment []string) {
	type group struct {
		what  string
		paths []string
	}
	var groups []*group
	byWhat := map[string]*group{}
	for _, n := range c.notes {
		path := "(plan)"
		if n.e != nil {
			path = n.e.Path
		}
		g := byWhat[n.what]
		if g == nil {
			g = &group{what: n.what}
			byWhat[n.what] = g
			groups = append(groups, g)
		}
		g.paths = append(g.paths, path)
	}
	for _, g := range groups {
		if len(g.paths) == 1 {
			s := g.paths[0] + ": " + g.what
			skipped = append(skipped, s)
			comment = append(comment, s)
			continue
		}
		skipped = append(skipped, fmt.Sprintf("%s (%d elements): %s", g.what, len(g.paths), strings.Join(g.paths, "; ")))
		comment = append(comment, fmt.Sprintf("%s (%d elements):", g.what, len(g.paths)))
		for _, p := range g.paths {
			comment = append(comment, "  "+p)
		}
	}
	return skipped, comment
}

// account counts the enabled elements of the test plan by what was made
// of them. An element under a disabled one is not enabled: JMeter does not
// run it. The WorkBench of an old plan is not run either: only what a
// Module Controller took from it counts.
func (c *converter) account() Accounting {
	var a Accounting
	var walk func(e *element)
	walk = func(e *element) {
		if !e.Enabled {
			return
		}
		switch {
		case e.converted:
			a.Converted++
		case e.listed:
			a.Listed++
		default:
			a.Dropped = append(a.Dropped, e.Path)
		}
		for _, k := range e.Children {
			walk(k)
		}
	}
	walk(c.doc.plan)
	if wb := c.doc.workbench; wb != nil {
		wb.each(func(e *element) {
			if e.converted {
				a.Converted++
			}
		})
	}
	for _, f := range c.included {
		if f == nil {
			continue
		}
		f.each(func(e *element) {
			if e.Enabled && e.converted {
				a.Converted++
			}
		})
	}
	return a
}

// udv is a User Defined Variable: its value as JMeter wrote it, and where.
type udv struct {
	raw string
	e   *element
}

func (c *converter) plan() *planOut {
	tp := c.doc.plan
	c.done(tp)
	p := &planOut{Name: tp.Name}
	if p.Name == "" {
		p.Name = strings.TrimSuffix(filepath.Base(c.file), filepath.Ext(c.file))
	}
	c.serial = tp.boolean("TestPlan.serialize_threadgroups")
	c.variables(tp)
	c.cookieManagers(p)
	if wb := c.doc.workbench; wb != nil && len(wb.Children) > 0 {
		c.note(nil, fmt.Sprintf("the WorkBench's %d elements: JMeter does not run them (a Module Controller may use them)", countElements(wb)-1))
	}
	top := c.enter(tp, scope{})
	// The test plan's headers and HTTP Request Defaults are the plan's own.
	p.Headers = c.topHeaders()
	if len(p.Headers) == 0 {
		p.Headers = nil
	}
	if d := top.defaults; len(d) > 0 {
		p.Target = c.origin(mergeDefaults(nil, d))
		c.target = p.Target
		for _, e := range d {
			c.done(e)
		}
	}
	var groups []*element
	for _, e := range tp.Children {
		if !e.Enabled {
			continue
		}
		switch {
		case isThreadGroup(e):
			groups = append(groups, e)
		case e.Tag == "TestFragmentController":
			// run only where a Module Controller names it
		case kind(e) == kindListener || kind(e) == kindConfig:
			c.element(e, top)
		case isScoped(e):
			// in top
		default:
			c.other(e)
		}
	}
	for _, g := range groups {
		c.done(g)
		switch g.Tag {
		case "SetupThreadGroup", "PostThreadGroup":
			sc := c.enter(g, top)
			sc.phase = true
			c.group = g
			steps := pausesBefore(c.flowOf(g.Children, sc))
			c.group = nil
			if n := g.str("ThreadGroup.num_threads"); n != "1" && n != "" {
				c.note(g, "its "+n+" threads: perflab's setup and teardown run once")
			}
			if loops := g.Props["ThreadGroup.main_controller"].get("LoopController.loops"); loops != "1" && loops != "" {
				c.note(g, "its "+loops+" loops: perflab's setup and teardown run once")
			}
			if g.Tag == "SetupThreadGroup" {
				p.Setup = append(p.Setup, steps...)
			} else {
				p.Teardown = append(p.Teardown, steps...)
			}
		case "ThreadGroup":
			p.Scenarios = append(p.Scenarios, c.scenario(g, c.enter(g, top)))
		case "kg.apc.jmeter.threads.UltimateThreadGroup":
			p.Scenarios = append(p.Scenarios, c.ultimate(g, c.enter(g, top)))
		default:
			c.note(g, "a thread group of a plugin ("+g.Tag+"): its samplers are a scenario of 1 VU and 1 iteration; give the load with perflab run's --vus, --duration or --rate")
			s := &scenarioOut{Name: g.Name, VUs: 1, Iterations: 1}
			c.group = g
			s.Flow = pausesBefore(c.flowOf(g.Children, c.enter(g, top)))
			c.group = nil
			p.Scenarios = append(p.Scenarios, s)
		}
	}
	// JMeter's Run Thread Groups consecutively.
	p.Consecutive = c.serial && len(p.Scenarios) > 1
	if len(p.Scenarios) == 0 {
		c.note(tp, "no enabled thread group: the plan has a scenario of one pause")
		p.Scenarios = append(p.Scenarios, &scenarioOut{Name: "none", VUs: 1, Iterations: 1, Flow: []*stepOut{{Think: "0s"}}})
	}
	names := map[string]int{}
	for _, s := range p.Scenarios {
		if names[s.Name]++; names[s.Name] > 1 {
			s.Name = fmt.Sprintf("%s (%d)", s.Name, names[s.Name])
		}
		if len(s.Flow) == 0 {
			c.note(nil, "the thread group "+strconv.Quote(s.Name)+" has no sampler perflab converts: its scenario is one pause")
			s.Flow = []*stepOut{{Think: "0s"}}
		}
	}
	p.Data = c.data
	return p
}

func countElements(e *element) int {
	n := 0
	e.each(func(*element) { n++ })
	return n
}

func isThreadGroup(e *element) bool {
	switch e.Tag {
	case "ThreadGroup", "SetupThreadGroup", "PostThreadGroup":
		return true
	}
	return strings.HasSuffix(e.Tag, "ThreadGroup")
}

// variables reads the plan's variables: User Defined Variables (of the
// test plan, and every Arguments element, in the order JMeter reads them:
// all at the start, top to bottom, the later winning), CSV Data Sets,
// random variables and counters, wherever they are.
func (c *converter) variables(tp *element) {
	c.arguments(tp.Props["TestPlan.user_defined_variables"], tp)
	var walk func(e *element)
	walk = func(e *element) {
		for _, k := range e.Children {
			if !k.Enabled {
				continue
			}
			switch k.Tag {
			case "Arguments":
				c.arguments(&prop{Elem: k.Props}, k)
				c.done(k)
			case "CSVDataSet", "com.blazemeter.jmeter.RandomCSVDataSetConfig":
				c.csvDataSet(k)
			case "RandomVariableConfig":
				c.randomVariable(k)
			case "CounterConfig":
				c.counter(k)
			}
			walk(k)
		}
	}
	walk(tp)
}

// arguments adds User Defined Variables.
func (c *converter) arguments(p *prop, e *element) {
	for _, a := range p.args() {
		name := a.get("Argument.name")
		if name == "" {
			continue
		}
		if _, ok := c.udvs[name]; !ok {
			c.udvOrder = append(c.udvOrder, name)
		}
		c.udvs[name] = &udv{raw: a.get("Argument.value"), e: e}
	}
}

var unsafeName = regexpMust(`[^A-Za-z0-9_]+`)

// csvDataSet makes a CSV Data Set a csv data source, its variables
// ${source.column}.
func (c *converter) csvDataSet(e *element) {
	c.done(e)
	raw := strings.TrimSpace(e.str("filename"))
	file, ok := c.literalValue(raw, e)
	file = strings.ReplaceAll(file, `\`, "/")
	switch base := file[strings.LastIndexByte(file, '/')+1:]; {
	case !ok && base != "" && !strings.ContainsAny(base, "${}"):
		// A directory given by a script or a property: the file beside
		// the plan.
		c.note(e, "its file name "+strconv.Quote(raw)+" reads what perflab does not know: the data source reads "+base+" beside the plan")
		file = base
	case !ok:
		c.note(e, "its file name "+strconv.Quote(raw)+" is not a plain value: the data source reads "+strconv.Quote(file)+"; correct it in the plan")
	case filepath.IsAbs(file) || strings.HasPrefix(file, "/") || len(file) > 2 && file[1] == ':':
		c.note(e, "its file "+strconv.Quote(file)+" is a path of the machine that ran JMeter: the data source reads "+base+" beside the plan")
		file = base
	}
	name := strings.Trim(unsafeName.ReplaceAllString(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), "_"), "_")
	if name == "" {
		name = "csv"
	}
	if name[0] >= '0' && name[0] <= '9' {
		name = "csv_" + name
	}
	for base, i := name, 2; c.data[name] != nil; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	for _, d := range c.data {
		if d.CSV == file && e.str("shareMode") != "shareMode.thread" {
			// JMeter opens a file once for the sets that share it: each
			// takes the next line as an iteration starts.
			c.note(e, "a CSV Data Set on "+file+", which another reads too: JMeter's sets of one file read one pass over it together, each taking the next line; perflab's data sources read a pass each")
			break
		}
	}
	if e.Tag != "CSVDataSet" {
		c.note(e, "a plugin's CSV data set: read as a CSV Data Set")
	}
	names := e.str("variableNames")
	delim := e.str("delimiter")
	switch {
	case delim == "" || delim == ",":
		delim = ""
	case delim == `\t` || utf8.RuneCountInString(delim) == 1 && !strings.ContainsAny(delim, "\"\r\n"):
	default:
		c.note(e, "the delimiter "+strconv.Quote(delim)+": perflab's is one character; the data source reads comma-separated fields")
		delim = ""
	}
	mode := ""
	switch e.str("shareMode") {
	case "shareMode.thread":
		c.note(e, "each thread reads the file from its first line: perflab's VUs share one pass over it (mode sequential)")
	case "shareMode.group", "shareMode.all", "":
	default:
		c.note(e, "the share mode "+strconv.Quote(e.str("shareMode"))+": perflab's VUs share one pass over the file")
	}
	if e.str("recycle") == "false" {
		c.note(e, "recycle=false (stop at the end of the file): perflab starts the file again")
	}
	if e.boolean("random") || e.Tag == "com.blazemeter.jmeter.RandomCSVDataSetConfig" && e.boolean("randomOrder") {
		mode = "random"
	}
	if c.data == nil {
		c.data = map[string]*dataOut{}
	}
	d := &dataOut{CSV: file, Mode: mode, Delimiter: delim}
	if names != "" {
		// The variables name the columns, of a file without a header
		// line, or of one whose first line JMeter skips (header: true):
		// the variables' names, not the line's, as JMeter reads them.
		for _, col := range strings.Split(names, ",") {
			d.Columns = append(d.Columns, strings.TrimSpace(col))
		}
		if e.boolean("ignoreFirstLine") {
			d.Header = &[]bool{true}[0]
		}
	}
	c.data[name] = d
	if c.csvSource == nil {
		c.csvSource = map[*element]string{}
	}
	c.csvSource[e] = name
	for _, col := range strings.Split(names, ",") {
		if col = strings.TrimSpace(col); col != "" {
			c.csvCols[col] = name + "." + col
		}
	}
	if names == "" {
		c.note(e, "its columns' names are in the file's first line: perflab refers to them as ${"+name+".COLUMN}; the plan's ${COLUMN} were not rewritten")
	}
}

// perIteration reports whether the CSV column col is read once an
// iteration: its CSV Data Set is in no loop of the thread group (a loop's
// pass reads a row of one in a loop: loopRows).
func (c *converter) perIteration(col string) bool {
	src, _, _ := strings.Cut(c.csvCols[col], ".")
	for e, name := range c.csvSource {
		if name != src {
			continue
		}
		for p := e.Parent; p != nil; p = p.Parent {
			switch p.Tag {
			case "LoopController", "WhileController", "ForeachController":
				return false
			}
		}
	}
	return true
}

// randomVariable makes a Random Variable a data source of its numbers,
// handed out at random: one value per iteration, as JMeter draws one as
// each iteration starts.
func (c *converter) randomVariable(e *element) {
	lo, err1 := c.intProp(e, "minimumValue")
	hi, err2 := c.intProp(e, "maximumValue")
	name := e.str("variableName")
	format, ok := javaNumberFormat(e.str("outputFormat"))
	if err1 != nil || err2 != nil || lo > hi || name == "" || !ok {
		c.drop(e, "a random variable from "+strconv.Quote(e.str("minimumValue"))+" to "+strconv.Quote(e.str("maximumValue"))+" in the format "+strconv.Quote(e.str("outputFormat"))+": a data source with range and mode: random gives one")
		return
	}
	c.done(e)
	src := c.dataName(name)
	c.data[src] = &dataOut{Range: &rangeOut{From: lo, To: hi, Format: format}, Mode: "random"}
	c.dataVars[name] = src
}

// intProp is a property of e as a number, its variables filled in.
func (c *converter) intProp(e *element, name string) (int64, error) {
	lit, ok := c.literalValue(strings.TrimSpace(e.str(name)), e)
	if !ok {
		return 0, fmt.Errorf("not a number")
	}
	return strconv.ParseInt(strings.TrimSpace(lit), 10, 64)
}

// counter makes a Counter a data source of its numbers: a counter shared
// by all threads is a sequential range (the next number to whichever VU
// asks); one per thread is listed.
func (c *converter) counter(e *element) {
	name := e.str("CounterConfig.name")
	num := func(prop string) (int64, error) { return c.intProp(e, prop) }
	start, err1 := num("CounterConfig.start")
	incr, err2 := num("CounterConfig.incr")
	end := int64(math.MaxInt32)
	var err3 error
	if s := strings.TrimSpace(e.str("CounterConfig.end")); s != "" {
		end, err3 = num("CounterConfig.end")
	}
	format, ok := javaNumberFormat(e.str("CounterConfig.format"))
	switch {
	case e.boolean("CounterConfig.per_user"):
		c.drop(e, "a counter per thread: perflab's ${iteration} counts a VU's iterations from 0")
		return
	case err1 != nil || err2 != nil || err3 != nil || incr <= 0 || end < start || name == "" || !ok:
		c.drop(e, "a counter from "+strconv.Quote(e.str("CounterConfig.start"))+" by "+strconv.Quote(e.str("CounterConfig.incr"))+": a data source with range gives one")
		return
	}
	c.done(e)
	src := c.dataName(name)
	if (end-start)/incr >= 10_000_000 {
		end = start + (10_000_000-1)*incr
		c.note(e, "a counter without an end: the data source counts to "+strconv.FormatInt(end, 10)+" and starts again")
	}
	c.data[src] = &dataOut{Range: &rangeOut{From: start, To: end, Step: incr, Format: format}}
	if incr == 1 {
		c.data[src].Range.Step = 0
	}
	c.dataVars[name] = src
}

// dataName is a data source's name for a JMeter variable.
func (c *converter) dataName(v string) string {
	if c.data == nil {
		c.data = map[string]*dataOut{}
	}
	name := varName(v)
	for base, i := name, 2; c.data[name] != nil; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	return name
}

// javaNumberFormat is a Java DecimalFormat of digits ("000") as a printf
// format ("%03d").
func javaNumberFormat(f string) (string, bool) {
	switch {
	case f == "":
		return "", true
	case strings.Trim(f, "0") == "":
		return fmt.Sprintf("%%0%dd", len(f)), true
	case strings.Trim(f, "#") == "":
		return "", true
	}
	return "", false
}

// cookieManagers sets http.cookies from the plan's Cookie Managers: none
// keeps no cookies, as JMeter keeps none without one; one clearing each
// iteration empties the jar as each iteration starts.
func (c *converter) cookieManagers(p *planOut) {
	var mgrs []*element
	c.doc.plan.each(func(e *element) {
		if e.Tag == "CookieManager" && enabledPath(e) {
			mgrs = append(mgrs, e)
		}
	})
	mode := "off"
	for i, m := range mgrs {
		c.done(m)
		this := "keep"
		if m.boolean("CookieManager.clearEachIteration") {
			this = "per_iteration"
		}
		if i > 0 && this != mode {
			c.note(m, "its cookies are kept "+strings.ReplaceAll(this, "_", " ")+" where another Cookie Manager's are kept "+strings.ReplaceAll(mode, "_", " ")+": perflab's http.cookies is the plan's")
			continue
		}
		mode = this
		if len(m.Props["CookieManager.cookies"].itemsOrNil()) > 0 {
			c.note(m, "its user-defined cookies: give them as a Cookie header")
		}
		if pol := m.str("CookieManager.policy"); pol != "" && pol != "standard" && pol != "default" && pol != "compatibility" {
			c.note(m, "the cookie policy "+pol+": perflab keeps cookies by RFC 6265")
		}
	}
	if len(mgrs) > 0 {
		var scoped []string
		for _, g := range c.doc.plan.Children {
			if !g.Enabled || !isThreadGroup(g) {
				continue
			}
			if !inScopeOf(g, mgrs) {
				scoped = append(scoped, strconv.Quote(g.Name))
			}
		}
		if len(scoped) > 0 {
			c.note(mgrs[0], "the thread groups "+strings.Join(scoped, ", ")+" have no Cookie Manager: perflab keeps cookies for every scenario")
		}
	}
	c.cookies = mode
	if mode != "keep" {
		p.HTTP = &httpOut{Cookies: mode}
	}
}

// inScopeOf reports whether a Cookie Manager of ms applies to thread
// group g: it is in g, or above it.
func inScopeOf(g *element, ms []*element) bool {
	for _, m := range ms {
		for a := m.Parent; a != nil; a = a.Parent {
			if a == g || a.Tag == "TestPlan" && m.Parent == a {
				return true
			}
		}
	}
	return false
}

func (p *prop) itemsOrNil() []*prop {
	if p == nil {
		return nil
	}
	return p.Items
}

// enabledPath reports whether e and every element above it are enabled.
func enabledPath(e *element) bool {
	for ; e != nil; e = e.Parent {
		if !e.Enabled {
			return false
		}
	}
	return true
}

func (c *converter) scenario(g *element, sc scope) *scenarioOut {
	s := &scenarioOut{Name: g.Name, VUs: c.load(g.str("ThreadGroup.num_threads"), g, false)}
	if r := g.str("ThreadGroup.ramp_time"); r != "" && r != "0" {
		s.RampUp = c.load(r, g, true)
	}
	loop := g.Props["ThreadGroup.main_controller"]
	loops := strings.TrimSpace(loop.get("LoopController.loops"))
	switch {
	case g.boolean("ThreadGroup.scheduler") && strings.TrimSpace(g.str("ThreadGroup.duration")) != "":
		s.Duration = c.load(g.str("ThreadGroup.duration"), g, true)
		if loops != "-1" && loops != "" {
			c.note(g, "its "+loops+" loops beside its duration: the converted scenario runs for the duration")
		}
		if d := strings.TrimSpace(g.str("ThreadGroup.delay")); d != "" && d != "0" {
			c.note(g, "its startup delay of "+d+" s: the scenario starts at once")
		}
	case loops == "-1" || loops == "" && loop.get("LoopController.continue_forever") == "true":
		c.note(g, "loops for ever with no duration: the converted scenario runs 1 iteration; give a duration with perflab run --duration")
		s.Iterations = 1
	default:
		s.Iterations = c.load(loops, g, false)
	}
	switch g.str("ThreadGroup.on_sample_error") {
	case "startnextloop", "startnextithread":
		s.OnError = "next_iteration"
	case "stopthread":
		s.OnError = "stop_vu"
	case "stoptest", "stoptestnow":
		s.OnError = "stop_vu"
		c.note(g, "on a sampler error the test stops: the converted scenario stops the VU")
	}
	c.group = g
	s.Flow = c.flowOf(g.Children, sc)
	c.group = nil
	pre, key := c.delayOf(sc.timers, g)
	c.placeTimers(s, key, pre)
	c.throughput(g, s, loops)
	return s
}

// ultimate converts an Ultimate Thread Group (a plugin's): its rows
// (threads, initial delay, startup, hold and shutdown times, in seconds)
// start and stop threads at once, so the scenario's VUs are their sum,
// which ramp_vus follows segment by segment; a start or stop of no
// duration takes a millisecond.
func (c *converter) ultimate(g *element, sc scope) *scenarioOut {
	s := &scenarioOut{Name: g.Name}
	type point struct{ t, v float64 }
	var rows [][]point
	for i, row := range g.Props["ultimatethreadgroupdata"].itemsOrNil() {
		var v [5]float64
		ok := len(row.Items) == 5
		for j := 0; ok && j < 5; j++ {
			lit, known := c.literalValue(row.Items[j].Value, g)
			f, err := strconv.ParseFloat(strings.TrimSpace(lit), 64)
			ok = known && err == nil && f >= 0
			v[j] = f
		}
		if !ok {
			c.note(g, fmt.Sprintf("its row %d is not five numbers (threads, delay, startup, hold, shutdown): left out", i+1))
			continue
		}
		start, up, hold, down := v[1], math.Max(v[2], 0.001), v[3], math.Max(v[4], 0.001)
		rows = append(rows, []point{{start, 0}, {start + up, v[0]}, {start + up + hold, v[0]}, {start + up + hold + down, 0}})
	}
	var times []float64
	for _, r := range rows {
		for _, p := range r {
			times = append(times, p.t)
		}
	}
	sort.Float64s(times)
	at := func(t float64) float64 {
		sum := 0.0
		for _, r := range rows {
			for k := 0; k+1 < len(r); k++ {
				if t >= r[k].t && t <= r[k+1].t {
					sum += r[k].v + (r[k+1].v-r[k].v)*(t-r[k].t)/(r[k+1].t-r[k].t)
					break
				}
			}
		}
		return math.Round(sum*1000) / 1000
	}
	prev := 0.0
	for _, t := range times {
		if t-prev < 1e-9 {
			continue
		}
		s.RampVUs = append(s.RampVUs, rampOut{Target: at(t), Duration: strconv.FormatFloat(math.Round((t-prev)*1000), 'f', -1, 64) + "ms"})
		prev = t
	}
	if len(s.RampVUs) == 0 {
		c.note(g, "no row to run: the scenario runs 1 VU once")
		s.VUs, s.Iterations = 1, 1
	} else {
		s.VUs = 0
	}
	if n := g.Props["ThreadGroup.main_controller"].get("LoopController.loops"); n != "-1" && n != "" {
		c.note(g, "its "+n+" loops: perflab's VUs loop until the ramp ends")
	}
	c.group = g
	s.Flow = c.flowOf(g.Children, sc)
	c.group = nil
	pre, key := c.delayOf(sc.timers, g)
	c.placeTimers(s, key, pre)
	return s
}

// load is a thread group's number (threads, loops) or seconds (ramp-up,
// duration) as the scenario's field: a number, a duration, or a
// variable's placeholder (seconds: ${name}s), resolved by fixup.
func (c *converter) load(v string, e *element, seconds bool) any {
	t := c.value(strings.TrimSpace(v), e)
	if n, err := strconv.Atoi(t); err == nil {
		if seconds {
			return strconv.Itoa(n) + "s"
		}
		return n
	}
	if seconds {
		return loadField{t, "s"}
	}
	return loadField{t, ""}
}

// loadField is a scenario's field written with a template: fixup resolves
// it to a variable's placeholder, or a number, and appends unit.
type loadField struct{ t, unit string }

// throughput makes a thread group that a throughput timer paces an
// arrival-rate scenario: its threads are its VUs, started beforehand and
// at most. JMeter's timers pace samples, perflab's rate starts
// iterations, so the rate is the samples' over the steps of an
// iteration.
func (c *converter) throughput(g *element, s *scenarioOut, loops string) {
	steps := countSteps(s.Flow)
	threads, _ := s.VUs.(int)
	for _, k := range g.Children {
		if !k.Enabled || !isThroughputTimer(k) {
			continue
		}
		if steps == 0 {
			c.note(k, "a throughput timer of a thread group without requests")
			continue
		}
		var perSec float64 // the samples a second of the thread group
		var ramp []rampOut
		num := func(name string) (float64, bool) {
			v, ok := c.literalValue(k.str(name), k)
			f, err := strconv.ParseFloat(v, 64)
			if !ok || err != nil || f < 0 {
				c.note(k, "its "+name+" "+strconv.Quote(k.str(name))+" (not a number)")
				return 0, false
			}
			return f, true
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
					c.note(k, "a throughput per thread of a thread group whose threads are a variable")
					continue
				}
				perSec *= float64(threads)
			case "1", "3": // all active threads, of every thread group
				c.note(k, "a throughput shared by every thread group: it is this scenario's alone")
			}
		case "PreciseThroughputTimer":
			t, ok1 := num("throughput")
			period, ok2 := num("throughputPeriod")
			if !ok1 || !ok2 || period == 0 {
				continue
			}
			perSec = t / period
			if s.Duration == nil {
				if d := k.str("duration"); d != "" && d != "0" {
					s.Duration = c.load(d, k, true)
				}
			}
		case "kg.apc.jmeter.timers.VariableThroughputTimer":
			rows := k.Props["load_profile"]
			if rows == nil || len(rows.Items) == 0 {
				c.note(k, "a throughput shaping timer without rows")
				continue
			}
			prev := -1.0
			for i, row := range rows.Items {
				if len(row.Items) != 3 {
					c.note(k, fmt.Sprintf("its row %d (not start, end, duration)", i+1))
					ramp = nil
					break
				}
				var v [3]float64
				for j, it := range row.Items {
					lit, ok := c.literalValue(it.Value, k)
					f, err := strconv.ParseFloat(lit, 64)
					if !ok || err != nil || f < 0 {
						c.note(k, fmt.Sprintf("its row %d's %q (not a number)", i+1, it.Value))
						ramp = nil
						break
					}
					v[j] = f
				}
				if prev < 0 {
					s.StartRate = v[0] / float64(steps)
				} else if v[0] != prev {
					c.note(k, fmt.Sprintf("its row %d starts at %g/s where the row before ended at %g/s: perflab's rate ramps from one to the other over the row", i+1, v[0], prev))
				}
				ramp = append(ramp, rampOut{Target: v[1] / float64(steps), Duration: strconv.FormatFloat(v[2], 'f', -1, 64) + "s"})
				prev = v[1]
			}
			if ramp == nil {
				continue
			}
		}
		c.done(k)
		if threads == 0 {
			c.note(k, "the thread group's threads are a variable: its arrival rate's max_vus is that variable")
		}
		s.MaxVUs = s.VUs
		if ramp != nil {
			s.RampRate, s.Duration = ramp, nil
		} else {
			rate := perSec / float64(steps)
			s.Rate = rate
			if s.Duration == nil {
				// Loops at that pace: the time JMeter takes for them.
				n, err := strconv.Atoi(loops)
				if err != nil || n <= 0 || threads == 0 || rate == 0 {
					c.note(k, "paced loops without a duration: the arrival rate runs for 60s")
					s.Duration = "60s"
				} else {
					s.Duration = strconv.Itoa(int(math.Ceil(float64(n*threads)/rate))) + "s"
				}
			}
		}
		if s.RampUp != nil {
			c.note(g, "its ramp-up "+strconv.Quote(g.str("ThreadGroup.ramp_time"))+" s: the arrival rate starts at once")
			s.RampUp = nil
		}
		s.Iterations = nil
		return
	}
}

func isThroughputTimer(e *element) bool {
	switch e.Tag {
	case "ConstantThroughputTimer", "PreciseThroughputTimer", "kg.apc.jmeter.timers.VariableThroughputTimer":
		return true
	}
	return false
}

// countSteps is the requests of a flow, in blocks, transactions and
// fragments.
func countSteps(flow []*stepOut) int {
	n := 0
	for _, s := range flow {
		if s.URL != "" {
			n++
		}
		n += countSteps(s.Steps)
	}
	return n
}

// sortedKeys are m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

package convert

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func regexpMust(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// scope is what applies to the samplers under an element, gathered from
// the elements around them (JMeter's scoping rules): the configuration,
// timers, post-processors and assertions of every level above a sampler,
// outer levels first.
type scope struct {
	headers  []*element // Header Managers
	defaults []*element // HTTP Request Defaults
	timers   []*element
	pre      []*element // pre-processors
	post     []*element // post-processors: extractors
	asserts  []*element
	auth     []*element // Authorization Managers
	loops    []*loopCtx // the loops around, the innermost last
	inTx     bool       // in a transaction
	// phase: in a setUp or tearDown thread group, which perflab's setup
	// and teardown run once, with no duration of their own: a loop for
	// ever is bounded.
	phase bool
}

// loopCtx is a loop a step is in: its index names the pass, for a Once
// Only Controller in it (run on the loop's first pass) and JMeter's
// __jm__NAME__idx.
type loopCtx struct {
	e   *element
	out *loopOut
}

// index names the loop's index variable, giving it one when it has none.
func (l *loopCtx) index(c *converter) string {
	if l.out.Index == "" {
		l.out.Index = "__jm__" + strings.Trim(badIdent.ReplaceAllString(l.e.Name, "_"), "_") + "__idx"
		if !isIdent(l.out.Index) {
			l.out.Index = "loop_index"
		}
	}
	return l.out.Index
}

var badIdent = regexpMust(`[^A-Za-z0-9_]+`)

// stepConv is what the JMeter converter keeps about a step it made.
type stepConv struct {
	src *element // the element it comes from
	// pre is the delay of the timers that run before the sampler, preKey
	// which timers they are.
	pre    *delay
	preKey string
	// frag names the fragment a Module or Include Controller's target
	// becomes: this block's steps are its steps.
	frag string
	// doWhile: a While Controller whose condition is checked after its
	// first pass (a blank one), or reads what its body extracts.
	doWhile, alwaysFirst bool
	// exprs: the step's If and its loop's expressions hold marks.
	resolved bool
	// pause: a Flow Control Action's pause (its duration holds the delay
	// of its timers).
	pause bool
	// preSets and postSets are what scripts run before and after the
	// sampler set (see scriptSets): set: steps before and after the step.
	preSets, postSets ordered
}

func (s *stepOut) cv() *stepConv {
	if s.conv == nil {
		s.conv = &stepConv{}
	}
	return s.conv
}

// enter is the scope inside e: in's, with what e holds added.
func (c *converter) enter(e *element, in scope) scope {
	out := in
	cp := func(s []*element) []*element { return append([]*element(nil), s...) }
	out.headers, out.defaults, out.timers = cp(in.headers), cp(in.defaults), cp(in.timers)
	out.pre, out.post, out.asserts, out.auth = cp(in.pre), cp(in.post), cp(in.asserts), cp(in.auth)
	out.loops = append([]*loopCtx(nil), in.loops...)
	for _, k := range e.Children {
		if !k.Enabled {
			continue
		}
		switch kind(k) {
		case kindHeaders:
			out.headers = append(out.headers, k)
		case kindDefaults:
			out.defaults = append(out.defaults, k)
		case kindTimer:
			if !isThroughputTimer(k) || !isThreadGroup(k.Parent) {
				out.timers = append(out.timers, k)
			}
		case kindPre:
			out.pre = append(out.pre, k)
		case kindPost:
			out.post = append(out.post, k)
		case kindAssertion:
			out.asserts = append(out.asserts, k)
		case kindAuth:
			out.auth = append(out.auth, k)
		}
	}
	return out
}

// Kinds of elements.
const (
	kindOther = iota
	kindSampler
	kindController
	kindHeaders
	kindDefaults
	kindTimer
	kindPre
	kindPost
	kindAssertion
	kindAuth
	kindGlobal   // read for the whole plan: variables, data, cookies
	kindConfig   // another configuration element
	kindListener // a listener
)

func kind(e *element) int {
	switch e.Tag {
	case "HTTPSamplerProxy", "HTTPSampler", "HTTPSampler2", "TestAction":
		return kindSampler
	case "HeaderManager":
		return kindHeaders
	case "ConfigTestElement":
		if e.has("HTTPsampler.Arguments") || e.has("HTTPSampler.domain") || e.has("HTTPSampler.path") || e.has("HTTPSampler.protocol") || e.has("HTTPSampler.port") {
			return kindDefaults
		}
		return kindConfig
	case "ConstantTimer", "UniformRandomTimer", "GaussianRandomTimer", "PoissonRandomTimer", "SyncTimer",
		"ConstantThroughputTimer", "PreciseThroughputTimer", "kg.apc.jmeter.timers.VariableThroughputTimer",
		"JSR223Timer", "BeanShellTimer", "BSFTimer":
		return kindTimer
	case "JSR223PreProcessor", "BeanShellPreProcessor", "BSFPreProcessor", "UserParameters", "RegExUserParameters",
		"AnchorModifier", "URLRewritingModifier", "SampleTimeout", "JDBCPreProcessor", "kg.apc.jmeter.modifiers.FifoPopPreProcessor":
		return kindPre
	case "RegexExtractor", "JSONPostProcessor", "BoundaryExtractor", "HtmlExtractor", "XPathExtractor", "XPath2Extractor",
		"JSR223PostProcessor", "BeanShellPostProcessor", "BSFPostProcessor", "DebugPostProcessor", "ResultAction",
		"JMESPathExtractor", "JDBCPostProcessor", "kg.apc.jmeter.modifiers.FifoPutPostProcessor",
		"com.atlantbh.jmeter.plugins.jsonutils.jsonpathextractor.JSONPathExtractor":
		return kindPost
	case "ResponseAssertion", "JSONPathAssertion", "DurationAssertion", "SizeAssertion", "JSR223Assertion",
		"BeanShellAssertion", "BSFAssertion", "XPathAssertion", "XPath2Assertion", "HTMLAssertion", "MD5HexAssertion",
		"CompareAssertion", "SMIMEAssertionTestElement", "XMLAssertion", "XMLSchemaAssertion", "JMESPathAssertion",
		"com.atlantbh.jmeter.plugins.jsonutils.jsonpathassertion.JSONPathAssertion":
		return kindAssertion
	case "AuthManager":
		return kindAuth
	case "Arguments", "CSVDataSet", "com.blazemeter.jmeter.RandomCSVDataSetConfig", "CookieManager", "RandomVariableConfig", "CounterConfig":
		return kindGlobal
	case "CacheManager", "DNSCacheManager", "KeystoreConfig", "LoginConfig", "JDBCDataSource", "HTTPClientConfig":
		return kindConfig
	case "ResultCollector", "Summariser", "BackendListener", "ResultSaver", "MailerResultCollector", "BeanShellListener", "JSR223Listener":
		return kindListener
	}
	switch {
	case strings.HasSuffix(e.Tag, "Controller") || e.Tag == "RunTime" || e.Tag == "InterleaveControl" || e.Tag == "com.blazemeter.jmeter.controller.ParallelSampler":
		return kindController
	case strings.HasSuffix(e.Tag, "Collector") || strings.HasSuffix(e.Tag, "Listener") || strings.HasSuffix(e.Tag, "Visualizer") ||
		strings.HasSuffix(e.Tag, "Uploader"):
		return kindListener
	case strings.HasSuffix(e.Tag, "Sampler"):
		return kindOther
	case strings.HasSuffix(e.Tag, "Timer"):
		return kindTimer
	case strings.HasSuffix(e.Tag, "PreProcessor"):
		return kindPre
	case strings.HasSuffix(e.Tag, "PostProcessor") || strings.HasSuffix(e.Tag, "Extractor"):
		return kindPost
	case strings.HasSuffix(e.Tag, "Assertion"):
		return kindAssertion
	case strings.HasSuffix(e.Tag, "Config") || strings.HasSuffix(e.Tag, "Manager"):
		return kindConfig
	}
	return kindOther
}

// isScoped reports whether e applies to the samplers in its scope (or to
// the plan) rather than being a step of the flow.
func isScoped(e *element) bool {
	switch kind(e) {
	case kindHeaders, kindDefaults, kindTimer, kindPre, kindPost, kindAssertion, kindAuth, kindGlobal, kindConfig, kindListener:
		return true
	}
	return false
}

// flowOf converts the samplers and controllers among els, in order.
func (c *converter) flowOf(els []*element, sc scope) []*stepOut {
	var out []*stepOut
	var endless *element // a Loop Controller before, which JMeter's thread never leaves
	for _, e := range els {
		if !e.Enabled {
			continue
		}
		if k := kind(e); endless != nil && (k == kindSampler || k == kindController) {
			c.drop(e, "never reached: it comes after the Loop Controller "+strconv.Quote(endless.Name)+", which loops for ever (JMeter's thread never leaves it)")
			continue
		}
		out = append(out, c.element(e, sc)...)
		if endlessLoop(e) {
			endless = e
		}
	}
	return out
}

// endlessLoop reports whether e is a Loop Controller that loops for ever
// (-1) with no Flow Control Action inside that leaves a loop: what comes
// after it is never reached.
func endlessLoop(e *element) bool {
	if e.Tag != "LoopController" {
		return false
	}
	if n, err := strconv.Atoi(strings.TrimSpace(e.str("LoopController.loops"))); err != nil || n >= 0 {
		return false
	}
	leaves := false
	e.each(func(k *element) {
		leaves = leaves || k.Enabled && k.Tag == "TestAction" && strings.TrimSpace(k.str("ActionProcessor.action")) == "6"
	})
	return !leaves
}

// element converts one sampler or controller, or lists it. A Test
// Fragment of the test plan runs only where a Module or Include
// Controller names it; one inside a thread group or a controller runs
// where it stands too, as a Simple Controller (as JMeter runs it). An
// element a Module Controller names that also runs where it stands is
// the fragment's use there too (the same steps, one operation each).
func (c *converter) element(e *element, sc scope) []*stepOut {
	if e.Tag == "TestFragmentController" && (e.Parent == nil || e.Parent.Tag == "TestPlan" || e.Parent.Tag == "WorkBench") {
		return nil
	}
	if c.moduleTarget(e) && !containsEl(c.modules, e) {
		c.modules = append(c.modules, e)
		defer func() { c.modules = c.modules[:len(c.modules)-1] }()
		return c.fragment(e, e.Name, sc)
	}
	switch kind(e) {
	case kindSampler:
		if e.Tag == "TestAction" {
			return c.testAction(e, sc)
		}
		if s := c.sampler(e, sc); s != nil {
			return []*stepOut{s}
		}
		return nil
	case kindController:
		return c.controller(e, sc)
	case kindListener:
		c.drop(e, "a listener: perflab keeps every result itself")
	case kindConfig:
		c.config(e)
	case kindHeaders, kindDefaults, kindTimer, kindPre, kindPost, kindAssertion, kindAuth, kindGlobal:
		// in the scope (enter), or read for the whole plan
	default:
		if set := c.scriptStep(e); set != nil {
			return []*stepOut{set}
		}
		c.other(e)
	}
	return nil
}

// scriptStep is a script sampler that only gives variables values (see
// scriptSets) as a set: step in its place; nil for any other element.
func (c *converter) scriptStep(e *element) *stepOut {
	if e.Tag != "JSR223Sampler" && e.Tag != "BeanShellSampler" {
		return nil
	}
	sets, ok := c.scriptSets(e)
	if !ok {
		return nil
	}
	c.done(e)
	return &stepOut{Set: sets, conv: &stepConv{src: e}}
}

// config lists a configuration element perflab has no counterpart of.
func (c *converter) config(e *element) {
	switch e.Tag {
	case "CacheManager":
		c.drop(e, "a cache: perflab sends every request (JMeter answers some from its cache, or asks whether they changed)")
	case "DNSCacheManager":
		c.drop(e, "a DNS cache: perflab resolves names through the system's resolver")
	case "KeystoreConfig":
		c.drop(e, "client certificates: not converted")
	default:
		c.drop(e, "a configuration element perflab does not know ("+e.Tag+")")
	}
}

// other lists an element the converter does not turn into a step, with
// what in perflab does what it is commonly used for.
func (c *converter) other(e *element) {
	switch e.Tag {
	case "JSR223Sampler", "BeanShellSampler", "BSFSampler", "JavaSampler":
		c.drop(e, "a script sampler ("+scriptLang(e)+"): scripts do not run in perflab; a request it makes is a step, a value it computes a variable (perflab run --set) or a data source, a branch it picks an if: or choose:")
	case "DebugSampler":
		c.drop(e, "a debug sampler: it sends nothing")
	case "ProxyControl":
		c.drop(e, "the HTTP(S) Test Script Recorder: it records, and is not run in a test")
	case "com.blazemeter.jmeter.controller.ParallelSampler":
		// A controller that runs its children at the same time.
	case "SystemSampler":
		c.drop(e, "a sampler that runs a command: perflab sends requests only")
	case "JDBCSampler", "TCPSampler", "SmtpSampler", "FTPSampler", "LDAPSampler", "JMSSampler", "MailReaderSampler", "BoltSampler", "AjpSampler":
		c.drop(e, "a sampler of another protocol ("+e.Tag+"): perflab sends HTTP, gRPC, WebSocket and message-bus steps")
	default:
		if strings.Contains(e.Tag, "wssampler") || strings.Contains(strings.ToLower(e.Tag), "websocket") {
			c.drop(e, "a WebSocket plugin's element ("+e.Tag+"): write it as perflab's ws: steps")
			return
		}
		c.drop(e, "not converted ("+e.Tag+")")
	}
}

func scriptLang(e *element) string {
	switch {
	case strings.HasPrefix(e.Tag, "BeanShell"):
		return "BeanShell"
	case e.str("scriptLanguage") != "":
		return e.str("scriptLanguage")
	}
	return "JSR223"
}

// wrap puts steps under one step that takes f's logic: the step itself
// when it is alone and has none of its own, else a block.
func wrap(steps []*stepOut, f func(*stepOut)) []*stepOut {
	if len(steps) == 0 {
		return nil
	}
	if len(steps) == 1 && plainStep(steps[0]) {
		f(steps[0])
		return steps
	}
	b := &stepOut{Steps: steps}
	f(b)
	return []*stepOut{b}
}

// plainStep reports whether s has no logic of its own and is no pause:
// logic can be put on it.
func plainStep(s *stepOut) bool {
	return s.If == "" && s.Loop == nil && !s.Once && s.Choose == nil && s.Use == "" && s.Else == nil &&
		(s.conv == nil || s.conv.frag == "" && !s.conv.pause) && (s.URL != "" || s.Transaction != "")
}

// controller converts a logic controller and what it holds.
func (c *converter) controller(e *element, sc scope) []*stepOut {
	inner := c.enter(e, sc)
	c.done(e)
	switch e.Tag {
	case "GenericController", "SimpleController", "RecordingController", "TestFragmentController":
		return c.flowOf(e.Children, inner)
	case "TransactionController":
		inner.inTx = true
		steps := c.flowOf(e.Children, inner)
		switch {
		case len(steps) == 0:
			c.note(e, "a transaction of nothing perflab converts: left out")
			return nil
		case sc.inTx:
			c.note(e, "a transaction inside a transaction: perflab does not nest them; its steps are timed in the outer one")
			return steps
		}
		if e.boolean("TransactionController.includeTimers") && len(inner.timers) > 0 {
			c.note(e, "its time includes its timers: a perflab transaction's time is its steps' (think time excluded)")
		}
		return []*stepOut{{Transaction: e.Name, Steps: steps, conv: &stepConv{src: e}}}
	case "OnceOnlyController":
		steps := c.flowOf(e.Children, inner)
		if len(sc.loops) > 0 {
			// The first pass of the loop it is in.
			idx := sc.loops[len(sc.loops)-1].index(c)
			return wrap(steps, func(s *stepOut) { s.If = idx + " == 0" })
		}
		return wrap(steps, func(s *stepOut) { s.Once = true })
	case "IfController":
		return c.ifController(e, inner)
	case "WhileController":
		return c.whileController(e, inner)
	case "LoopController":
		return c.loopController(e, inner)
	case "ForeachController":
		return c.foreach(e, inner)
	case "RandomController":
		return c.random(e, inner)
	case "RandomOrderController":
		c.note(e, "runs its children in a random order: perflab runs them in the order written")
		return c.flowOf(e.Children, inner)
	case "InterleaveControl":
		return c.interleave(e, inner)
	case "ThroughputController":
		return c.throughputController(e, inner)
	case "SwitchController":
		return c.switchController(e, inner)
	case "CriticalSectionController":
		c.note(e, "a critical section (lock "+strconv.Quote(e.str("CriticalSectionController.lockName"))+"): perflab's VUs run its steps at the same time")
		return c.flowOf(e.Children, inner)
	case "RunTime":
		c.note(e, "runs its children again and again for "+e.str("RunTime.seconds")+" s: perflab runs them once (perflab's expressions read no clock)")
		return c.flowOf(e.Children, inner)
	case "ModuleController":
		return c.module(e, sc)
	case "IncludeController":
		return c.include(e, sc)
	case "com.blazemeter.jmeter.controller.ParallelSampler":
		c.note(e, "a plugin's Parallel Controller runs its children at the same time: perflab runs them one after another")
		return c.flowOf(e.Children, inner)
	}
	c.note(e, "a controller perflab does not know ("+e.Tag+"): its children run in order, once")
	return c.flowOf(e.Children, inner)
}

// ifController converts an If Controller: its condition, checked once
// when the flow gets there, or before each of its children (Interpret
// Condition as Variable Expression is JMeter's "evaluate for all
// children").
func (c *converter) ifController(e *element, inner scope) []*stepOut {
	var kids [][]*stepOut
	n := 0
	for _, k := range e.Children {
		if k.Enabled {
			steps := c.element(k, inner)
			kids = append(kids, steps)
			n += len(steps)
		}
	}
	if n == 0 {
		return nil
	}
	raw := e.str("IfController.condition")
	cond, why := c.condition(raw, e.boolean("IfController.useExpression"), false, e)
	if why != "" {
		c.note(e, "its condition "+strconv.Quote(raw)+" is not converted ("+why+"): its steps never run until the plan says when (if: an expression of the variables by name, ==, &&, ||, !, response.ok, json(\"$.path\"))")
		cond = "false"
	}
	on := func(s *stepOut) {
		s.If = cond
		if s.conv == nil || s.conv.src == nil || s.URL == "" {
			s.cv().src = e
		}
	}
	if e.boolean("IfController.evaluateAll") {
		// The condition is checked again before each child.
		var out []*stepOut
		for _, steps := range kids {
			out = append(out, wrap(steps, on)...)
		}
		return out
	}
	var all []*stepOut
	for _, steps := range kids {
		all = append(all, steps...)
	}
	return wrap(all, on)
}

// whileController converts a While Controller: a blank condition runs the
// body, then again while the last sample succeeded (a do-while); LAST
// checks that before the first pass too; any other condition is checked
// before each pass, and only "false" ends the loop.
func (c *converter) whileController(e *element, inner scope) []*stepOut {
	raw := strings.TrimSpace(e.str("WhileController.condition"))
	l := &loopOut{Rows: c.loopRows(e)}
	ctx := &loopCtx{e: e, out: l}
	inner.loops = append(inner.loops, ctx)
	c.loopIndexAlias(e, ctx)
	body := c.flowOf(e.Children, inner)
	if len(body) == 0 {
		c.note(e, "a loop of nothing perflab converts: left out")
		return nil
	}
	s := &stepOut{Name: "", Steps: body, Loop: l, conv: &stepConv{src: e}}
	switch {
	case raw == "":
		l.While = "response.ok"
		s.conv.doWhile, s.conv.alwaysFirst = true, true
	case strings.EqualFold(raw, "LAST"):
		l.While = "response.ok"
	default:
		cond, why := c.condition(raw, true, true, e)
		if why != "" {
			c.note(e, "its condition "+strconv.Quote(raw)+" is not converted ("+why+"): the loop runs its steps once")
			return body
		}
		switch {
		case cond == "true" && inner.phase:
			c.note(e, "its condition "+strconv.Quote(raw)+" never reads \"false\": perflab's setup and teardown have no duration, so the loop ends after 1,000 passes")
			l.Max = 1000
		case cond == "true":
			c.note(e, "its condition "+strconv.Quote(raw)+" never reads \"false\": the loop runs until the scenario ends, as JMeter's")
		}
		l.While = cond
		s.conv.doWhile = true // if its condition reads what the body extracts
	}
	return []*stepOut{s}
}

// loopIndexAlias gives a loop the index variable JMeter calls
// __jm__NAME__idx when the plan reads it.
func (c *converter) loopIndexAlias(e *element, ctx *loopCtx) {
	jm := "__jm__" + e.Name + "__idx"
	if c.readsVar(jm) {
		c.loopIdx[jm] = ctx.index(c)
	}
}

// readsVar reports whether the plan refers to the JMeter variable name
// anywhere.
func (c *converter) readsVar(name string) bool {
	if c.refs == nil {
		c.refs = map[string]bool{}
		var walk func(e *element)
		walk = func(e *element) {
			for _, p := range e.Props {
				p.eachValue(func(v string) {
					for _, pc := range scan(v) {
						if pc.ref != "" {
							c.refs[pc.ref] = true
						}
						for _, a := range pc.args {
							for _, q := range scan(a) {
								if q.ref != "" {
									c.refs[q.ref] = true
								}
							}
						}
					}
					for _, m := range varsGet.FindAllStringSubmatch(v, -1) {
						c.refs[m[1]] = true
					}
				})
			}
			for _, k := range e.Children {
				walk(k)
			}
		}
		walk(c.doc.plan)
	}
	return c.refs[name]
}

var varsGet = regexpMust(`vars\.get(?:Object)?\(\s*["']([^"']+)["']\s*\)`)

func (p *prop) eachValue(f func(string)) {
	if p == nil {
		return
	}
	if p.Value != "" {
		f(p.Value)
	}
	for _, c := range p.Elem {
		c.eachValue(f)
	}
	for _, c := range p.Items {
		c.eachValue(f)
	}
}

// loopController converts a Loop Controller: a loop of its count (never
// unrolled), or, for -1, one that runs until the scenario ends.
func (c *converter) loopController(e *element, inner scope) []*stepOut {
	l := &loopOut{Rows: c.loopRows(e)}
	ctx := &loopCtx{e: e, out: l}
	inner.loops = append(inner.loops, ctx)
	c.loopIndexAlias(e, ctx)
	body := c.flowOf(e.Children, inner)
	if len(body) == 0 {
		return nil
	}
	raw := strings.TrimSpace(e.str("LoopController.loops"))
	if n, err := strconv.Atoi(raw); err == nil {
		switch {
		case n < 0 && inner.phase:
			c.note(e, "loops for ever: perflab's setup and teardown have no duration, so the loop ends after 1,000 passes")
			l.While, l.Max = "true", 1000
		case n < 0 && c.groupHasDuration():
			c.note(e, "loops for ever: the loop runs until the scenario ends")
			l.While = "true"
		case n < 0:
			// JMeter's thread never leaves it; a perflab run of iterations
			// would never end.
			c.note(e, "loops for ever in a thread group without a duration: the loop ends after 1,000 passes (give the scenario a duration, and remove max)")
			l.While, l.Max = "true", 1000
		case n == 0:
			c.note(e, "a loop of 0 passes: its steps never run")
			l.Count = 0
		default:
			l.Count = n
		}
	} else {
		t, ok := c.exprValue(raw, e)
		if !ok {
			c.note(e, "its count "+strconv.Quote(raw)+" is not converted: the loop runs once")
			t = "1"
		}
		l.Count = t
	}
	if l.Count == 1 && l.Index == "" && len(l.Rows) == 0 {
		return body
	}
	return []*stepOut{{Steps: body, Loop: l, conv: &stepConv{src: e}}}
}

// loopRows are the data sources of the CSV Data Sets that take a new row
// at each pass of loop e: JMeter reads a line as the nearest controller
// around the data set starts a pass, here the loop, or a Simple or
// Transaction Controller in it (which starts with each of its passes).
func (c *converter) loopRows(e *element) []string {
	var rows []string
	var walk func(e *element)
	walk = func(e *element) {
		for _, k := range e.Children {
			if !k.Enabled {
				continue
			}
			switch k.Tag {
			case "CSVDataSet", "com.blazemeter.jmeter.RandomCSVDataSetConfig":
				if src, ok := c.csvSource[k]; ok && !slices.Contains(rows, src) {
					rows = append(rows, src)
				}
			case "GenericController", "SimpleController", "TransactionController":
				walk(k)
			}
		}
	}
	walk(e)
	return rows
}

// groupHasDuration reports whether the thread group being converted runs
// for a time (a scheduler's duration, or a plugin's schedule).
func (c *converter) groupHasDuration() bool {
	g := c.group
	return g != nil && (g.boolean("ThreadGroup.scheduler") && strings.TrimSpace(g.str("ThreadGroup.duration")) != "" || g.Tag == "kg.apc.jmeter.threads.UltimateThreadGroup")
}

// exprValue is a JMeter value that is one variable (or property) as an
// expression reading it.
func (c *converter) exprValue(raw string, e *element) (string, bool) {
	ps := scan(raw)
	if len(ps) != 1 {
		return "", false
	}
	switch p := ps[0]; {
	case p.ref != "":
		return exprMarkMode(modeVar, p.ref), true
	case p.fn == "P" || p.fn == "property":
		t := c.function(p, e)
		if strings.HasPrefix(t, markOpen) {
			return exprOpen + t[1:len(t)-1] + exprClose, true
		}
	}
	return "", false
}

func exprMarkMode(mode byte, name string) string { return exprOpen + string(mode) + name + exprClose }

// foreach converts a ForEach Controller: a loop over the list an
// extraction with match all (JMeter's match number -1) gave, or over the
// variables PREFIX_1, PREFIX_2 ... the plan defines.
func (c *converter) foreach(e *element, inner scope) []*stepOut {
	in, out := strings.TrimSpace(e.str("ForeachController.inputVal")), strings.TrimSpace(e.str("ForeachController.returnVal"))
	l := &loopOut{Rows: c.loopRows(e)}
	ctx := &loopCtx{e: e, out: l}
	inner.loops = append(inner.loops, ctx)
	c.loopIndexAlias(e, ctx)
	if in == "" || out == "" {
		c.drop(e, "a ForEach Controller without its input or output variable")
		return nil
	}
	if e.has("ForeachController.useSeparator") && !e.boolean("ForeachController.useSeparator") {
		c.note(e, "its variables are named without _ ("+in+"1, "+in+"2 ...): read as "+in+"_1, "+in+"_2 ...")
	}
	if s, en := strings.TrimSpace(e.str("ForeachController.startIndex")), strings.TrimSpace(e.str("ForeachController.endIndex")); s != "" && s != "0" || en != "" {
		c.note(e, "its start and end indexes ("+s+", "+en+"): the loop goes over the whole list")
	}
	l.Over = exprMarkMode(modeList, in)
	l.As = markOpen + string(modeAs) + out + markClose
	body := c.flowOf(e.Children, inner)
	if len(body) == 0 {
		return nil
	}
	return []*stepOut{{Steps: body, Loop: l, conv: &stepConv{src: e}}}
}

// Modes of marks for loops: a list to go over, and the variable holding
// its item.
const (
	modeList = 'l'
	modeAs   = 'a'
)

// random converts a Random Controller: one of its children per pass, each
// as likely.
func (c *converter) random(e *element, inner scope) []*stepOut {
	var branches []*branchOut
	for _, k := range e.Children {
		if !k.Enabled || isScoped(k) {
			continue
		}
		steps := c.element(k, inner)
		branches = append(branches, &branchOut{Name: k.Name, Steps: steps})
	}
	if len(branches) == 0 {
		return nil
	}
	if len(branches) == 1 {
		return branches[0].Steps
	}
	return []*stepOut{{Choose: branches, conv: &stepConv{src: e}}}
}

// interleave converts an Interleave Controller: one child per pass, in
// turn, as the iteration's number picks it.
func (c *converter) interleave(e *element, inner scope) []*stepOut {
	var kids [][]*stepOut
	for _, k := range e.Children {
		if !k.Enabled || isScoped(k) {
			continue
		}
		kids = append(kids, c.element(k, inner))
	}
	if len(kids) == 0 {
		return nil
	}
	c.note(e, "runs one child per pass, in turn: perflab picks the child by the VU's iteration (iteration % "+strconv.Itoa(len(kids))+"), the same when the controller runs once an iteration")
	var conds []string
	for i := range kids {
		conds = append(conds, fmt.Sprintf("iteration %% %d == %d", len(kids), i))
	}
	return chain(conds, kids, nil, e)
}

// chain is an if/else chain: the first branch whose condition holds, else
// def.
func chain(conds []string, branches [][]*stepOut, def []*stepOut, e *element) []*stepOut {
	var out []*stepOut
	rest := def
	for i := len(conds) - 1; i >= 0; i-- {
		steps := branches[i]
		if len(steps) == 0 {
			steps = []*stepOut{{Think: "0s"}}
		}
		s := &stepOut{Steps: steps, If: conds[i], Else: rest, conv: &stepConv{src: e}}
		out = []*stepOut{s}
		rest = out
	}
	return out
}

// throughputController converts a Throughput Controller: in percent mode
// a choice, its steps with the percentage as weight and nothing with the
// rest (JMeter's is deterministic: p% of the passes exactly, where
// perflab's is random); in count mode per thread, once (1) or the VU's
// first N iterations.
func (c *converter) throughputController(e *element, inner scope) []*stepOut {
	steps := c.flowOf(e.Children, inner)
	if len(steps) == 0 {
		return nil
	}
	if e.str("ThroughputController.style") == "1" {
		raw := strings.TrimSpace(e.str("ThroughputController.percentThroughput"))
		lit, ok := c.literalValue(raw, e)
		p, err := strconv.ParseFloat(lit, 64)
		if !ok || err != nil {
			p = 100 // JMeter's when it cannot read it
			c.note(e, "its percentage "+strconv.Quote(raw)+" is not a number: 100, as JMeter takes it")
		}
		switch {
		case p >= 100:
			return steps
		case p <= 0:
			p = 0
		}
		rest := 100 - p
		return []*stepOut{{Choose: []*branchOut{{Name: e.Name, Weight: &p, Steps: steps}, {Name: "not " + e.Name, Weight: &rest}}, conv: &stepConv{src: e}}}
	}
	raw := strings.TrimSpace(e.str("ThroughputController.maxThroughput"))
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 {
		c.note(e, "its count "+strconv.Quote(raw)+" is not a number: its steps run every time")
		return steps
	}
	if !e.boolean("ThroughputController.perThread") {
		c.note(e, "runs "+raw+" times in all, counted over every thread: perflab counts per VU (its first "+raw+" iterations)")
	}
	if n == 1 {
		c.note(e, "runs the first time it is reached: perflab runs it once, in the VU's first iteration")
		return wrap(steps, func(s *stepOut) { s.Once = true })
	}
	c.note(e, "runs the first "+raw+" times it is reached: perflab runs it in the VU's first "+raw+" iterations")
	return wrap(steps, func(s *stepOut) { s.If = "iteration < " + raw })
}

// switchController converts a Switch Controller: its value picks a child
// by number (from 0; a number out of range, or an empty value, the
// first), else by name, else the child named "default", else none.
func (c *converter) switchController(e *element, inner scope) []*stepOut {
	var kids []*element
	var branches [][]*stepOut
	for _, k := range e.Children {
		if !k.Enabled || isScoped(k) {
			continue
		}
		kids = append(kids, k)
		branches = append(branches, c.element(k, inner))
	}
	if len(kids) == 0 {
		return nil
	}
	raw := e.str("SwitchController.value")
	pick := func(v string) int {
		v = strings.TrimSpace(v)
		if v == "" {
			return 0
		}
		if n, err := strconv.Atoi(v); err == nil {
			if n < 0 || n >= len(kids) {
				return 0
			}
			return n
		}
		for i, k := range kids {
			if k.Name == v {
				return i
			}
		}
		for i, k := range kids {
			if strings.EqualFold(k.Name, "default") {
				return i
			}
		}
		return -1
	}
	if lit, ok := c.literalValue(raw, e); ok && !strings.Contains(raw, "${") {
		i := pick(lit)
		if i < 0 {
			c.note(e, "its value "+strconv.Quote(raw)+" names no child: nothing runs")
			return nil
		}
		return branches[i]
	}
	v, ok := c.exprValue(strings.TrimSpace(raw), e)
	if !ok {
		c.note(e, "its value "+strconv.Quote(raw)+" is not converted: its first child runs")
		return branches[0]
	}
	// A number: that child (out of range: the first); else a name; else
	// default.
	def := -1
	for i, k := range kids {
		if strings.EqualFold(k.Name, "default") {
			def = i
		}
	}
	num := fmt.Sprintf(`%s matches "^[+-]?[0-9]+$"`, v)
	var conds []string
	var picked [][]*stepOut
	for i, k := range kids {
		if i == def {
			continue // the else of the chain
		}
		cond := fmt.Sprintf(`%s == %q || %s == %q`, v, strconv.Itoa(i), v, k.Name)
		if i == 0 {
			cond = fmt.Sprintf(`%s == "" || %s || (%s && !(int(%s) >= 1 && int(%s) < %d))`, v, cond, num, v, v, len(kids))
		}
		conds = append(conds, cond)
		picked = append(picked, branches[i])
	}
	var rest []*stepOut
	if def >= 0 {
		rest = branches[def]
		if len(conds) == 0 {
			return rest
		}
	}
	return chain(conds, picked, rest, e)
}

// module converts a Module Controller: the element its path names, taken
// into the flow where it stands (its own scope's elements with it, the
// module's around it), as a fragment the plan uses there.
func (c *converter) module(e *element, sc scope) []*stepOut {
	c.done(e)
	var path []string
	for _, it := range e.Props["ModuleController.node_path"].itemsOrNil() {
		path = append(path, it.Value)
	}
	target := c.resolveModule(path)
	switch {
	case target == nil:
		c.drop(e, "its target "+strings.Join(path, " > ")+" is not in the plan (JMeter stops the test)")
		return nil
	case containsEl(c.modules, target):
		c.drop(e, "its target "+strings.Join(path, " > ")+" holds this Module Controller: JMeter refuses the recursion")
		return nil
	}
	c.modules = append(c.modules, target)
	defer func() { c.modules = c.modules[:len(c.modules)-1] }()
	return c.fragment(target, target.Name, sc)
}

// fragment converts a Module or Include Controller's target in scope sc:
// a block that becomes a fragment of the plan.
func (c *converter) fragment(target *element, name string, sc scope) []*stepOut {
	var steps []*stepOut
	switch kind(target) {
	case kindController:
		steps = c.controller(target, sc)
	case kindSampler:
		steps = c.element(target, sc)
	default:
		c.drop(target, "a Module Controller's target that is no sampler or controller")
		return nil
	}
	if len(steps) == 0 {
		return nil
	}
	return []*stepOut{{Steps: steps, conv: &stepConv{src: target, frag: name}}}
}

// moduleTarget reports whether a Module Controller of the plan names e.
func (c *converter) moduleTarget(e *element) bool {
	if c.targets == nil {
		c.targets = map[*element]bool{}
		c.doc.plan.each(func(m *element) {
			if m.Tag != "ModuleController" || !enabledPath(m) {
				return
			}
			var path []string
			for _, it := range m.Props["ModuleController.node_path"].itemsOrNil() {
				path = append(path, it.Value)
			}
			if t := c.resolveModule(path); t != nil {
				c.targets[t] = true
			}
		})
	}
	return c.targets[e]
}

func containsEl(list []*element, e *element) bool {
	for _, x := range list {
		if x == e {
			return true
		}
	}
	return false
}

// resolveModule finds a Module Controller's target as JMeter does: the
// path's first name (the tree's root) is skipped, the others matched one
// level at a time against the elements' names, from the test plan (or
// the WorkBench); Module Controllers are not matched; when several match,
// the last one found wins.
func (c *converter) resolveModule(path []string) *element {
	if len(path) < 2 {
		return nil
	}
	roots := []*element{c.doc.plan}
	if c.doc.workbench != nil {
		roots = append(roots, c.doc.workbench)
	}
	var found *element
	var walk func(level []*element, i int)
	walk = func(level []*element, i int) {
		for _, e := range level {
			if e.Tag == "ModuleController" || e.Name != path[i] {
				continue
			}
			if i == len(path)-1 {
				found = e
			}
			if i+1 < len(path) {
				walk(e.Children, i+1)
			}
		}
	}
	walk(roots, 1)
	return found
}

// include converts an Include Controller: the first Test Fragment of the
// file it names (relative to the plan's directory), as a fragment.
func (c *converter) include(e *element, sc scope) []*stepOut {
	c.done(e)
	name := strings.TrimSpace(e.str("IncludeController.includepath"))
	if name == "" {
		c.drop(e, "an Include Controller without a file")
		return nil
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(c.dir, path)
	}
	frag, ok := c.included[path]
	if !ok {
		frag = c.readInclude(e, path)
		c.included[path] = frag
	}
	if frag == nil {
		return nil
	}
	if containsEl(c.modules, frag) {
		c.drop(e, "its file "+name+" includes itself: JMeter refuses the recursion")
		return nil
	}
	c.modules = append(c.modules, frag)
	defer func() { c.modules = c.modules[:len(c.modules)-1] }()
	c.done(frag)
	inner := c.enter(frag, sc)
	steps := c.flowOf(frag.Children, inner)
	if len(steps) == 0 {
		return nil
	}
	fname := frag.Name
	if fname == "" {
		fname = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	return []*stepOut{{Steps: steps, conv: &stepConv{src: frag, frag: fname}}}
}

// readInclude reads an included file's first Test Fragment, its disabled
// elements removed.
func (c *converter) readInclude(e *element, path string) *element {
	f, err := os.Open(path)
	if err != nil {
		c.drop(e, "its file "+path+" cannot be read: "+err.Error())
		return nil
	}
	defer f.Close()
	doc, err := readJMX(f, path)
	if err != nil {
		c.drop(e, "its file: "+err.Error())
		return nil
	}
	for _, k := range doc.plan.Children {
		if k.Tag == "TestFragmentController" && k.Enabled {
			// Its elements' paths name the file.
			k.each(func(x *element) { x.Path = filepath.Base(path) + ": " + x.Path })
			return k
		}
	}
	c.drop(e, "its file "+path+" has no enabled Test Fragment: JMeter includes nothing")
	return nil
}

// testAction converts a Flow Control Action: a pause is a pause step (of
// its duration and its timers' delay); other actions are listed.
func (c *converter) testAction(e *element, sc scope) []*stepOut {
	inner := c.enter(e, sc)
	pre, _ := c.delayOf(inner.timers, e)
	action := strings.TrimSpace(e.str("ActionProcessor.action"))
	if action != "1" {
		what := map[string]string{"0": "stops the thread", "2": "stops the thread at once", "3": "starts the thread's next iteration",
			"5": "starts the next pass of the loop it is in", "6": "leaves the loop it is in"}[action]
		if what == "" {
			what = "does action " + action
		}
		c.drop(e, "a Flow Control Action that "+what+": perflab has no such step (on_error: stop_vu or next_iteration acts on a failed step)")
		return nil
	}
	c.done(e)
	raw := strings.TrimSpace(e.str("ActionProcessor.duration"))
	lit, ok := c.literalValue(raw, e)
	ms, err := strconv.ParseFloat(strings.TrimSpace(lit), 64)
	if !ok || err != nil || ms < 0 {
		c.note(e, "its pause "+strconv.Quote(raw)+" is not a number of milliseconds: it pauses for its timers only")
		ms = 0
	}
	d := &delay{min: ms, max: ms}
	if pre != nil {
		d.min += pre.min
		d.max += pre.max
	}
	return []*stepOut{{Think: d.think(), conv: &stepConv{src: e, pause: true}}}
}

// unusedFragments lists the Test Fragments nothing took into the flow:
// JMeter runs a Test Fragment only where a Module or Include Controller
// names it.
func (c *converter) unusedFragments() {
	c.doc.plan.each(func(e *element) {
		if e.Tag == "TestFragmentController" && enabledPath(e) && !e.converted {
			c.drop(e, "a Test Fragment no Module or Include Controller uses: JMeter does not run it")
		}
	})
}

// unapplied lists the enabled elements that apply to samplers (timers,
// extractors, assertions, managers) but met no sampler perflab converts.
func (c *converter) unapplied() {
	var walk func(e *element)
	walk = func(e *element) {
		if !e.Enabled {
			return
		}
		if !e.converted && !e.listed && isScoped(e) {
			c.drop(e, "applies to no sampler perflab converts")
		}
		for _, k := range e.Children {
			walk(k)
		}
	}
	walk(c.doc.plan)
}

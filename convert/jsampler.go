package convert

import (
	"fmt"
	"regexp"

	"gopkg.in/yaml.v3"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

var (
	charsetName = regexp.MustCompile(`^[A-Z0-9][A-Z0-9_.:+-]*$`)
	headerName  = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_|~`-]+$")
)

// jmeterOK are the statuses JMeter's HTTP sampler takes as a success
// (200-399) that servers send: a step that does not follow redirects
// takes a 3xx as JMeter does.
var jmeterOK = []int{200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 306, 307, 308}

// sampler converts an HTTP Request into a step, with what its scope
// applies to it: headers, defaults, authentication, extractors,
// assertions and the timers before it.
func (c *converter) sampler(e *element, sc scope) *stepOut {
	inner := c.enter(e, sc)
	c.done(e)
	props, args := c.effective(e, inner.defaults)
	s := &stepOut{Name: e.Name, conv: &stepConv{src: e}}
	method := strings.ToUpper(strings.TrimSpace(props["HTTPSampler.method"]))
	if method == "" {
		method = "GET"
	}
	if method != "GET" {
		s.Method = method
	}
	s.URL = c.samplerURL(e, props)
	headers := c.headerValues(inner.headers)
	contentType := ""
	for k, v := range headers {
		if strings.EqualFold(k, "Content-Type") {
			contentType = v
		}
	}
	// The sampler's encoding, which JMeter's entities name (UTF-8 when it
	// gives none, or one perflab cannot read).
	charset, ok := c.literalValue(strings.TrimSpace(props["HTTPSampler.contentEncoding"]), e)
	charset = strings.ToUpper(strings.TrimSpace(charset))
	if !ok || charset == "" || !charsetName.MatchString(charset) {
		charset = "UTF-8"
	}
	raw := props["HTTPSampler.postBodyRaw"] == "true"
	if !raw && len(args) > 0 {
		raw = true // every argument without a name: their values are the body
		for _, a := range args {
			if a.get("Argument.name") != "" {
				raw = false
			}
		}
	}
	inQuery := method == "GET" || method == "DELETE" || method == "OPTIONS"
	switch {
	case raw:
		var b strings.Builder
		for _, a := range args {
			b.WriteString(c.argValue(a, e, false))
		}
		s.Body = b.String()
		if contentType == "" {
			// HttpClient's StringEntity: text/plain in the sampler's
			// encoding, which JMeter sends when no header gives a type.
			headers["Content-Type"] = "text/plain; charset=" + charset
		}
	case len(args) > 0:
		var q []string
		for _, a := range args {
			name := a.get("Argument.name")
			if name == "" {
				continue
			}
			q = append(q, c.argPair(a, e, inQuery))
		}
		switch {
		case inQuery:
			sep := "?"
			if strings.Contains(s.URL, "?") {
				sep = "&"
			}
			s.URL += sep + strings.Join(q, "&")
			if method == "DELETE" {
				// HttpClient's DELETE of JMeter takes a body: the
				// arguments go as a form too.
				c.setForm(s, args, e)
				if contentType == "" {
					headers["Content-Type"] = "application/x-www-form-urlencoded; charset=" + charset
				}
			}
		case method == "HEAD" || method == "TRACE":
			c.note(e, "its parameters: JMeter sends none with a "+method)
		default:
			c.setForm(s, args, e)
			if contentType == "" {
				headers["Content-Type"] = "application/x-www-form-urlencoded; charset=" + charset
			}
		}
	case method == "POST":
		// An empty form: JMeter sends its content type all the same.
		if contentType == "" {
			headers["Content-Type"] = "application/x-www-form-urlencoded; charset=" + charset
		}
		s.Body = ""
	}
	if props["HTTPSampler.DO_MULTIPART_POST"] == "true" {
		c.note(e, "a multipart/form-data body: perflab sends its fields as an application/x-www-form-urlencoded form")
	}
	if files := e.Props["HTTPsampler.Files"]; files != nil && files.Elem != nil {
		if list := files.Elem["HTTPFileArgs.files"]; list != nil && len(list.Items) > 0 {
			c.note(e, "its files to upload: not converted (a body of a file is data: {file: ...} and body: ${NAME})")
		}
	}
	if props["HTTPSampler.image_parser"] == "true" {
		c.note(e, "downloads the page's embedded resources: perflab requests only the page")
	}
	if p := strings.TrimSpace(props["HTTPSampler.proxyHost"]); p != "" {
		c.note(e, "goes through the proxy "+p+": perflab connects directly")
	}
	if t := strings.TrimSpace(props["HTTPSampler.response_timeout"]); t != "" {
		if lit, ok := c.literalValue(t, e); ok {
			if ms, err := strconv.Atoi(lit); err == nil && ms > 0 {
				s.Timeout = strconv.Itoa(ms) + "ms"
			}
		}
	}
	if t := strings.TrimSpace(props["HTTPSampler.connect_timeout"]); t != "" && t != "0" {
		c.note(e, "its connect timeout "+t+" ms: perflab's is the plan's http.connect_timeout")
	}
	if props["HTTPSampler.follow_redirects"] != "true" && props["HTTPSampler.auto_redirects"] != "true" {
		none := 0 // JMeter's sampler takes the 3xx as it is; perflab's steps follow it by default
		s.Redirects = &none
	}
	c.authorize(s, e, inner.auth, headers)
	for k, v := range headers {
		if top, ok := c.topHeaders()[k]; ok && top == v {
			continue // the plan's own
		}
		if s.Headers == nil {
			s.Headers = map[string]string{}
		}
		s.Headers[k] = v
	}
	for _, p := range inner.pre {
		if p.Tag != "JSR223PreProcessor" && p.Tag != "BeanShellPreProcessor" {
			c.preProcessor(p)
			continue
		}
		if sets, ok := c.scriptSets(p); ok {
			c.done(p)
			for _, kv := range sets {
				s.conv.preSets.set(kv.K, kv.V)
			}
			continue
		}
		c.preProcessor(p)
	}
	c.judge(s, e, inner)
	if s.Redirects != nil && s.Check["status"] == nil {
		if s.Check == nil {
			s.Check = map[string]any{}
		}
		s.Check["status"] = flowInts(jmeterOK)
	}
	s.conv.pre, s.conv.preKey = c.delayOf(inner.timers, e)
	return s
}

// flowInts is a list of numbers written on one line.
type flowInts []int

func (f flowInts) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, v := range f {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(v)})
	}
	return n, nil
}

// effective are a sampler's properties with its HTTP Request Defaults
// merged in as JMeter merges them: a default fills a property the
// sampler leaves missing or empty, the innermost defaults first; the
// defaults' parameters follow the sampler's.
func (c *converter) effective(e *element, defaults []*element) (map[string]string, []*prop) {
	props := map[string]string{}
	for k, p := range e.Props {
		if p.Elem == nil && p.Items == nil {
			props[k] = p.Value
		}
	}
	args := e.Props["HTTPsampler.Arguments"].args()
	for i := len(defaults) - 1; i >= 0; i-- {
		d := defaults[i]
		c.done(d)
		for k, p := range d.Props {
			if p.Elem == nil && p.Items == nil && strings.TrimSpace(props[k]) == "" {
				props[k] = p.Value
			}
		}
		args = append(args, d.Props["HTTPsampler.Arguments"].args()...)
	}
	return props, args
}

// mergeDefaults are the properties of HTTP Request Defaults, the
// innermost (last) first.
func mergeDefaults(_ *element, defaults []*element) map[string]string {
	props := map[string]string{}
	for i := len(defaults) - 1; i >= 0; i-- {
		for k, p := range defaults[i].Props {
			if p.Elem == nil && p.Items == nil && strings.TrimSpace(props[k]) == "" {
				props[k] = p.Value
			}
		}
	}
	return props
}

// origin is the scheme, host and port of properties: "" when they name no
// host.
func (c *converter) origin(props map[string]string) string {
	owner := (*element)(nil)
	host := strings.TrimSpace(props["HTTPSampler.domain"])
	if host == "" {
		return ""
	}
	proto := strings.TrimSpace(props["HTTPSampler.protocol"])
	port := strings.TrimSpace(props["HTTPSampler.port"])
	if proto == "" {
		proto = "http"
		if port == "443" {
			proto = "https"
		}
	}
	if lit, ok := c.literalValue(proto, owner); ok && !strings.Contains(proto, "${") {
		proto = strings.ToLower(lit)
	}
	o := c.value(proto, owner) + "://" + c.value(host, owner)
	if port != "" && !(proto == "http" && port == "80") && !(proto == "https" && port == "443") {
		o += ":" + c.value(port, owner)
	}
	return o
}

// samplerURL is a sampler's URL: its path when that is a whole URL, else
// its origin (none when it is the plan's target) and path, which JMeter
// starts with a / when it does not. A path that starts with a variable
// perflab cannot read is written as it is: perflab joins it to the target
// with one /, whether its value starts with one or not, as JMeter does.
func (c *converter) samplerURL(e *element, props map[string]string) string {
	rawPath := strings.TrimSpace(props["HTTPSampler.path"])
	if tail := strings.TrimLeft(props["HTTPSampler.path"], " \t\r\n")[len(rawPath):]; rawPath != "" && strings.Trim(tail, " ") == "" {
		rawPath += tail // JMeter sends the spaces that end a path (%20)
	}
	lit, known := c.literalValue(rawPath, e)
	lower := strings.ToLower(lit)
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		return c.value(rawPath, e)
	}
	path := c.value(rawPath, e)
	// A path JMeter starts with a / when it has none; one that starts with
	// a variable perflab cannot read is taken to have one.
	if known && !strings.HasPrefix(lit, "/") || !known && !strings.HasPrefix(rawPath, "${") && !strings.HasPrefix(rawPath, "/") {
		path = "/" + path
	}
	o := c.origin(props)
	if o == c.target && c.target != "" {
		return path
	}
	if o == "" && c.target == "" {
		c.note(e, "names no host, and nor do HTTP Request Defaults: JMeter fails it; the step's URL is its path")
	}
	return o + path
}

// argValue is an argument's value; encoded, when JMeter encodes it (its
// literal text: a variable's value goes in as it is), for a query.
func (c *converter) argValue(a *prop, e *element, query bool) string {
	v := a.get("Argument.value")
	if a.get("HTTPArgument.always_encode") == "true" {
		return c.encoded(v, e, query)
	}
	if query {
		return c.valueAs(v, e, modeRaw)
	}
	return c.value(v, e)
}

// encoded is a value URL-encoded as JMeter encodes it: its text, and, in
// a query, its variables' values (perflab encodes what it puts in a
// query); in a body variables' values go in as they are.
func (c *converter) encoded(v string, e *element, query bool) string {
	var b strings.Builder
	for _, p := range scan(v) {
		switch {
		case p.text != "":
			b.WriteString(literal(url.QueryEscape(p.text)))
		case p.ref != "":
			b.WriteString(mark(modeVar, p.ref))
		default:
			b.WriteString(c.function(p, e))
		}
	}
	_ = query
	return b.String()
}

// argPair is name=value of a query parameter: encoded or as written, as
// the argument says; a name without a value and without "=" when it
// asks for none.
func (c *converter) argPair(a *prop, e *element, query bool) string {
	name := a.get("Argument.name")
	var n string
	if a.get("HTTPArgument.always_encode") == "true" {
		n = c.encoded(name, e, query)
	} else {
		n = c.valueAs(name, e, modeRaw)
	}
	v := c.argValue(a, e, query)
	if v == "" && a.get("HTTPArgument.use_equals") == "false" {
		return n
	}
	return n + "=" + v
}

// setForm makes the arguments s's form: (plan.Step.Form), which perflab
// encodes as HttpClient encodes them, values of variables included: a
// value JMeter takes as encoded already is decoded first (here where it
// is literal text, by ${decoded:...} where it is a variable's). Names
// that repeat or hold a variable, which a form: cannot say, make a body:
// of the form as written, its values of variables sent as they are
// (listed).
func (c *converter) setForm(s *stepOut, args []*prop, e *element) {
	var form ordered
	seen := map[string]bool{}
	for _, a := range args {
		name := a.get("Argument.name")
		if name == "" {
			continue
		}
		v := a.get("Argument.value")
		mode := byte(modeVar)
		if a.get("HTTPArgument.always_encode") != "true" {
			// JMeter URL-decodes the name and the value, variables
			// filled in, before it encodes them: ${decoded:...}.
			name, mode = unescapeQuery(name), modeDec
		}
		if seen[name] || strings.Contains(name, "${") {
			s.Body = c.formBody(args, e)
			c.note(e, "its form names a field twice or by a variable: it goes as a body: of the form as written, whose values of variables are sent as they are where JMeter encodes them")
			return
		}
		seen[name] = true
		form = append(form, kv{name, c.valueAs(v, e, mode)})
	}
	s.Form = form
}

// formBody is the arguments as an application/x-www-form-urlencoded body,
// as HttpClient encodes them: a value JMeter takes as encoded already is
// decoded first.
func (c *converter) formBody(args []*prop, e *element) string {
	var pairs []string
	for _, a := range args {
		name := a.get("Argument.name")
		if name == "" {
			continue
		}
		v := a.get("Argument.value")
		if a.get("HTTPArgument.always_encode") != "true" {
			name, v = unescapeQuery(name), unescapeQuery(v)
		}
		pairs = append(pairs, c.encoded(name, e, false)+"="+c.encoded(v, e, false))
	}
	return strings.Join(pairs, "&")
}

// unescapeQuery decodes a value as Java's URLDecoder does, keeping it
// when it is no valid encoding (JMeter would fail the sample); ${...}
// is kept as it is.
func unescapeQuery(s string) string {
	if strings.Contains(s, "${") {
		return s
	}
	out, err := url.QueryUnescape(s)
	if err != nil {
		return s
	}
	return out
}

// headerValues are the headers of Header Managers (outer first): for a
// name given twice (in any case) the innermost value.
func (c *converter) headerValues(mgrs []*element) map[string]string {
	out := map[string]string{}
	for _, m := range mgrs {
		c.done(m)
		hs := m.Props["HeaderManager.headers"]
		if hs == nil {
			continue
		}
		for _, h := range hs.Items {
			n := strings.TrimSpace(h.get("Header.name"))
			if n == "" {
				continue
			}
			if !headerName.MatchString(n) {
				c.note(m, "its header "+strconv.Quote(n)+": not a header's name (a token of letters, digits and !#$%&'*+-.^_`|~), not sent")
				continue
			}
			for k := range out {
				if strings.EqualFold(k, n) {
					delete(out, k)
				}
			}
			out[n] = c.value(h.get("Header.value"), m)
		}
	}
	return out
}

// topHeaders are the test plan's own headers (the plan's).
func (c *converter) topHeaders() map[string]string {
	if c.planHeaders == nil {
		var mgrs []*element
		for _, k := range c.doc.plan.Children {
			if k.Enabled && k.Tag == "HeaderManager" {
				mgrs = append(mgrs, k)
			}
		}
		c.planHeaders = c.headerValues(mgrs)
	}
	return c.planHeaders
}

// authorize gives a step the credentials of the Authorization Manager in
// its scope (the outermost: JMeter keeps the last one it meets, going
// out) whose entry's URL starts its URL, as JMeter picks the first such
// entry.
func (c *converter) authorize(s *stepOut, e *element, mgrs []*element, headers map[string]string) {
	if len(mgrs) == 0 {
		return
	}
	m := mgrs[0]
	c.done(m)
	for _, other := range mgrs[1:] {
		c.note(other, "an Authorization Manager inside another's scope: JMeter uses the outer one")
	}
	list := m.Props["AuthManager.auth_list"]
	stepURL, _ := c.literalURL(s.URL)
	for _, a := range list.itemsOrNil() {
		prefix, ok := c.literalValue(a.get("Authorization.url"), m)
		if !ok {
			prefix = a.get("Authorization.url")
		}
		if !urlHasPrefix(stepURL, prefix) {
			continue
		}
		typ := "basic"
		switch strings.ToUpper(strings.TrimSpace(a.get("Authorization.mechanism"))) {
		case "", "BASIC", "BASIC_DIGEST":
		case "DIGEST":
			typ = "digest"
		default:
			c.note(m, "its "+a.get("Authorization.mechanism")+" entry for "+strconv.Quote(a.get("Authorization.url"))+": perflab authenticates with basic and digest")
			return
		}
		for k := range headers {
			if strings.EqualFold(k, "Authorization") {
				c.note(e, "an Authorization header beside the Authorization Manager's credentials: the step sends the header")
				return
			}
		}
		s.Auth = &authOut{Type: typ, User: c.value(a.get("Authorization.username"), m), Password: c.value(a.get("Authorization.password"), m)}
		return
	}
}

// urlHasPrefix reports whether u starts with prefix, as JMeter matches an
// authorization's URL: also with the scheme's port written.
func urlHasPrefix(u, prefix string) bool {
	if strings.HasPrefix(u, prefix) {
		return true
	}
	for _, d := range []struct{ scheme, port string }{{"http://", "80"}, {"https://", "443"}} {
		if strings.HasPrefix(u, d.scheme) {
			rest := u[len(d.scheme):]
			host, path, _ := strings.Cut(rest, "/")
			if !strings.Contains(host, ":") && strings.HasPrefix(d.scheme+host+":"+d.port+"/"+path, prefix) {
				return true
			}
		}
	}
	return false
}

// literalURL is a step's URL as text: the target's before a path, and
// variables with their values where those are known.
func (c *converter) literalURL(u string) (string, bool) {
	if strings.HasPrefix(u, "/") {
		u = c.target + u
	}
	return c.literalTemplate(u)
}

// preProcessor lists a pre-processor, which runs before each sampler in
// its scope.
func (c *converter) preProcessor(e *element) {
	switch e.Tag {
	case "JSR223PreProcessor", "BeanShellPreProcessor", "BSFPreProcessor":
		c.drop(e, "a script run before each sampler in its scope ("+scriptLang(e)+"): scripts do not run in perflab; a value it sets is a variable (perflab run --set) or a data source")
	case "UserParameters":
		c.drop(e, "User Parameters: a variable per thread is a data source (mode per-vu)")
	case "AnchorModifier":
		c.drop(e, "the HTML Link Parser: a link of the page is an extract (css with attribute href)")
	case "URLRewritingModifier":
		c.drop(e, "URL rewriting of a session id: an extract of the id, placed in the URL")
	default:
		c.drop(e, "a pre-processor perflab does not know ("+e.Tag+")")
	}
}

// delay is what timers make a VU wait before a sampler: uniformly from
// min to max milliseconds.
type delay struct{ min, max float64 }

func (d *delay) think() any {
	ms := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) + "ms" }
	if d.min == d.max {
		return ms(d.min)
	}
	return ordered{{"min", ms(d.min)}, {"max", ms(d.max)}}
}

// delayOf sums the delays of the timers that run before sampler e (JMeter
// sleeps once, for their sum), and says which they are.
func (c *converter) delayOf(timers []*element, e *element) (*delay, string) {
	d := &delay{}
	var keys []string
	randoms := 0
	for _, t := range timers {
		num := func(name string) float64 {
			raw := strings.TrimSpace(t.str(name))
			if raw == "" {
				return 0
			}
			lit, ok := c.literalValue(raw, t)
			f, err := strconv.ParseFloat(strings.TrimSpace(lit), 64)
			if !ok || err != nil || f < 0 {
				c.note(t, "its "+name+" "+strconv.Quote(raw)+" is not a number of milliseconds: JMeter reads 0, and so does the plan")
				return 0
			}
			return f
		}
		switch t.Tag {
		case "ConstantTimer":
			v := num("ConstantTimer.delay")
			d.min += v
			d.max += v
		case "UniformRandomTimer":
			v, r := num("ConstantTimer.delay"), num("RandomTimer.range")
			d.min += v
			d.max += v + r
			if r > 0 {
				randoms++
			}
		case "GaussianRandomTimer":
			v, r := num("ConstantTimer.delay"), num("RandomTimer.range")
			d.min += v
			d.max += v
			if r > 0 {
				c.note(t, fmt.Sprintf("a Gaussian delay: perflab pauses for its constant delay (%g ms), without its deviation (%g ms)", v, r))
			}
		case "PoissonRandomTimer":
			v, r := num("ConstantTimer.delay"), num("RandomTimer.range")
			d.min += v + r
			d.max += v + r
			c.note(t, fmt.Sprintf("a Poisson delay: perflab pauses for its mean (%g ms)", v+r))
		case "SyncTimer":
			c.drop(t, "a synchronizing timer: perflab's VUs do not wait for each other")
			continue
		case "JSR223Timer", "BeanShellTimer", "BSFTimer":
			c.drop(t, "a script's delay ("+scriptLang(t)+"): a think: time")
			continue
		case "ConstantThroughputTimer", "PreciseThroughputTimer", "kg.apc.jmeter.timers.VariableThroughputTimer":
			c.drop(t, "a throughput timer inside a controller: not converted (one directly under the thread group makes its arrival rate)")
			continue
		default:
			c.drop(t, "a timer perflab does not know ("+t.Tag+")")
			continue
		}
		c.done(t)
		keys = append(keys, t.Path)
	}
	if len(keys) == 0 {
		return nil, ""
	}
	if randoms > 1 {
		c.note(e, "several random timers: perflab pauses for a uniform time between their sums' least and most")
	}
	sort.Strings(keys)
	return d, strings.Join(keys, "|")
}

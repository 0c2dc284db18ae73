package plan

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/perflab/perflab/internal/inputfile"
	"github.com/perflab/perflab/internal/secret"
)

// Override is a --set name=value given on the command line, or a
// --secret name=value.
type Override struct {
	Name, Value string
	// Secret: the value is a secret (--secret): it is taken as it is (a
	// list is not a sweep) and a run does not keep it (Hidden).
	Secret bool
}

// Hidden reports whether a run keeps the value as secret.Redacted: it is
// a secret (--secret), or its name says it is one (secret.Name: token,
// api_key, password ...).
func (o Override) Hidden() bool { return o.Secret || secret.Name(o.Name) }

// Kept is the value as a run keeps it (summary.json, the history).
func (o Override) Kept() string {
	if o.Hidden() {
		return secret.Redacted
	}
	return o.Value
}

// ParseOverride splits "name=value".
func ParseOverride(s string) (Override, error) {
	name, value, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(name) == "" {
		return Override{}, fmt.Errorf("%q: want name=value", s)
	}
	return Override{Name: strings.TrimSpace(name), Value: value}, nil
}

// Options controls Load.
type Options struct {
	// Set overrides plan variables, as JMeter's -J properties do. A value in
	// brackets ([1, 5, 8]) sweeps the variable.
	Set []Override
	// LookupEnv reads environment variables; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Load replaces the load of scenarios (--vus, --duration, ...): the
	// plan's Source is then the plan with the load given.
	Load LoadOverride
}

// Plan limits. A plan describes a test; data goes in data files (csv, file,
// glob, range), which these limits do not count. The largest plan of
// examples/ is 3.3 KB and has 7 variables.
const (
	// MaxPlanBytes is the largest plan file read: 4 MiB. Decoding YAML
	// with the positions of every node for error messages takes about 12
	// times the file's size (a 50 MB plan of comments made perflab run
	// peak at 612 MB), and the plan is copied into every run's
	// summary.json and history: 4 MiB costs at most about 50 MB once.
	// The files a plan includes are copied with it, and share the
	// limit: the plan and they together are at most MaxPlanBytes.
	MaxPlanBytes = 4 << 20
	// MaxVars is the most variables a plan may declare: each costs about
	// 1 KB of memory through decoding, validation and the summary (500,000
	// made perflab run peak at 472 MB and wrote a 27 MB summary.json, which
	// lists every variable).
	MaxVars = 10000
)

// Load reads, decodes and validates a plan file. The error, if any, is an
// ErrorList with file:line:column for each problem; a file over
// MaxPlanBytes is refused unread. The file may be a regular file or a
// named pipe (<(...), /dev/stdin), which is read up to the limit; a
// directory or a device is refused unopened.
func Load(path string, opts Options) (*Plan, error) {
	src, err := inputfile.ReadStream(path, MaxPlanBytes)
	var tb *inputfile.TooBigError
	var nr *inputfile.NotRegularError
	switch {
	case errors.As(err, &tb):
		return nil, tooBig(path, tb.Size)
	case errors.As(err, &nr):
		return nil, ErrorList{{File: path, Msg: "not a plan: " + nr.Error()}}
	case err != nil:
		return nil, err
	}
	return Parse(src, path, opts)
}

// tooBig is the error of a plan of size bytes (-1: unknown) over
// MaxPlanBytes.
func tooBig(name string, size int64) error {
	what := (&inputfile.TooBigError{Size: size}).What()
	return ErrorList{{File: name, Msg: fmt.Sprintf("the plan is %s: plans are limited to %d MiB; put data in data files (data: csv, file, glob, range)", what, MaxPlanBytes>>20)}}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseYAML parses a file's YAML into its document, whose Content[0] is
// its value, or says where it is not YAML (empty: what an empty file is
// said to be).
func parseYAML(src []byte, name, empty string) (*yaml.Node, ErrorList) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		msg := err.Error()
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, ErrorList{{File: name, Line: line, Col: 1, Msg: "YAML: " + m[2]}}
		}
		if line, col, what, ok := notText(src); ok {
			// A binary file: the parser does not say where.
			return nil, ErrorList{{File: name, Line: line, Col: col, Msg: "YAML: " + strings.TrimPrefix(msg, "yaml: ") + " (" + what + ")"}}
		}
		return nil, ErrorList{{File: name, Msg: msg}}
	}
	if len(doc.Content) == 0 {
		return nil, ErrorList{{File: name, Msg: empty}}
	}
	return &doc, nil
}

// notText finds the first character of src that YAML does not take (a
// control character, a byte that is not UTF-8), as yaml.v3 refuses them
// without saying where: its line and column and what it is.
func notText(src []byte) (line, col int, what string, ok bool) {
	line, col = 1, 0
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRune(src[i:])
		col++
		switch {
		case r == utf8.RuneError && size == 1:
			return line, col, fmt.Sprintf("the byte %#x", src[i]), true
		case r == '\n':
			line, col = line+1, 0
		case !yamlPrintable(r):
			return line, col, fmt.Sprintf("%U", r), true
		}
		i += size
	}
	return 0, 0, "", false
}

// yamlPrintable reports whether YAML takes r in a file (YAML 1.2's
// printable characters, as yaml.v3 checks them).
func yamlPrintable(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0x7e || r == 0x85 ||
		r >= 0xa0 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd || r >= 0x10000 && r <= 0x10ffff
}

// Parse decodes and validates plan source; name is used in messages and to
// find data files relative to it.
func Parse(src []byte, name string, opts Options) (*Plan, error) {
	p, err := parse(src, name, opts)
	if errs, ok := err.(ErrorList); ok {
		flagErrors(errs)
	}
	return p, err
}

func parse(src []byte, name string, opts Options) (*Plan, error) {
	if len(src) > MaxPlanBytes {
		return nil, tooBig(name, int64(len(src)))
	}
	doc, errs := parseYAML(src, name, "the plan is empty")
	if errs != nil {
		return nil, errs
	}
	d := &decoder{file: name}
	p := &Plan{File: name, Source: bytes.Clone(src), dir: filepath.Dir(name)}
	if !opts.Load.Empty() {
		given, errs := applyLoad(doc, opts.Load)
		if len(errs) > 0 {
			return nil, errs
		}
		if given != nil {
			p.Source = given
		}
	}
	d.decode(doc.Content[0], reflect.ValueOf(p).Elem())
	if len(d.errs) > 0 {
		return nil, d.errs.sorted(name)
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	v := &validator{decoder: d, p: p, dir: filepath.Dir(name), lookupEnv: opts.LookupEnv}
	v.at = v.report
	v.applyOverrides(opts.Set)
	v.validate()
	if len(d.errs) > 0 {
		return nil, d.errs.sorted(name)
	}
	p.Warnings = v.warnings.sorted(name)
	return p, nil
}

// applyOverrides replaces variable values with --set values.
func (v *validator) applyOverrides(set []Override) {
	for _, o := range set {
		var target *Var
		var names []string
		for _, vr := range v.p.Vars {
			names = append(names, vr.Name)
			if vr.Name == o.Name {
				target = vr
			}
		}
		flag := "--set"
		if o.Secret {
			flag = "--secret"
		}
		if target == nil {
			v.errs = append(v.errs, &Error{File: flag, Msg: fmt.Sprintf("%s: the plan has no variable %q%s", o.Name, o.Name, suggest(o.Name, names))})
			continue
		}
		target.Secret = target.Secret || o.Secret
		val := strings.TrimSpace(o.Value)
		if !o.Secret && strings.HasPrefix(val, "[") && strings.HasSuffix(val, "]") {
			var list []string
			if err := yaml.Unmarshal([]byte(val), &list); err != nil || len(list) == 0 {
				v.errs = append(v.errs, &Error{File: "--set", Msg: fmt.Sprintf("%s: want a list such as [1, 5, 8], got %s", o.Name, val)})
				continue
			}
			target.Values, target.List = list, true
			continue
		}
		target.Values, target.List = []string{o.Value}, false
	}
}

package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// foreignFlags are other tools' flags that perflab's docs and messages
// name where no tool's name comes before them on the line.
var foreignFlags = map[string]string{
	"parallel-max":                     "curl",
	"system-tags":                      "k6",
	"summary-export":                   "k6",
	"no-color":                         "k6",
	"web.enable-remote-write-receiver": "prometheus",
}

// flagRef is a long flag: --name, in text.
var flagRef = regexp.MustCompile(`(?:^|[\s\x60(\[|"'=,])--([a-z][a-z0-9]*(?:[-.][a-z0-9]+)*)`)

// otherTools are the tools other than perflab whose command lines
// perflab's docs and messages show.
const otherTools = `kubectl|k6|docker|go|curl|jmeter|ghz|wrk|psql|prometheus|python3|node|git`

// Every --flag that perflab's docs and messages name is a flag of the
// command they name it for: one that follows "perflab CMD" on a line is
// one of CMD's; one that a message of perflab CMD prints (in the command's
// function) is one of CMD's; any other is a flag of one of perflab's
// commands, or another tool's (named before it on the line, or in
// foreignFlags). perflab run once advised --token, which is perflab
// serve's; run's is --serve-token.
func TestFlagsNamedExist(t *testing.T) {
	flags := map[string]map[string]bool{}
	anyCmd := map[string]bool{"help": true}
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	// A command line's tool: perflab CMD (or a command in a code span,
	// `run --serve`), or another tool. The flags that follow it, on its
	// line (in its code span, if it is in one), are its own.
	toolRef := regexp.MustCompile(`(?:\bperflab\s+|\x60)(` + strings.Join(names, "|") + `)\b|\b(?:` + otherTools + `)\b`)
	help := regexp.MustCompile(`(?m)^  -([a-z0-9][a-z0-9.-]*)`)
	for _, c := range commands {
		_, _, errs := runCLI(t, c.name, "-h")
		set := map[string]bool{"help": true}
		for _, m := range help.FindAllStringSubmatch(errs, -1) {
			set[m[1]] = true
			anyCmd[m[1]] = true
		}
		flags[c.name] = set
	}
	if !flags["run"]["serve-token"] || !flags["serve"]["token"] || flags["run"]["token"] {
		t.Fatalf("the flags read from the help are not the commands': %v", flags)
	}
	// A server's messages name the flags of the command serving.
	for _, s := range []struct {
		cmd string
		lf  listenFlags
	}{{"serve", serveFlags}, {"run", runServeFlags}, {"run", metricsFlags}} {
		for _, f := range []string{s.lf.listen, s.lf.token, s.lf.public, s.lf.hosts} {
			if !flags[s.cmd][strings.TrimPrefix(f, "--")] {
				t.Errorf("%s is not a flag of perflab %s", f, s.cmd)
			}
		}
	}
	// check checks the flags of text (a line of a doc, a string of a
	// message) at where; cmd is the command the text is of, if known.
	checked := 0
	check := func(where, text, cmd string) {
		// span is the code span a place of the text is in (odd), or
		// the prose between two (even).
		span := func(at int) int { return strings.Count(text[:at], "\x60") }
		tools := toolRef.FindAllStringSubmatchIndex(text, -1)
		for _, m := range flagRef.FindAllStringSubmatchIndex(text, -1) {
			name := text[m[2]:m[3]]
			of := cmd // the tool the flag is of: the last named before it
			for _, tm := range tools {
				if tm[0] > m[2] {
					break
				}
				if in := span(tm[0]); in%2 == 1 && in != span(m[2]) {
					continue // in a code span of its own
				}
				of = "other"
				if tm[2] >= 0 {
					of = text[tm[2]:tm[3]]
				}
			}
			checked++
			switch {
			case of == "other":
			case flags[of] != nil:
				if !flags[of][name] {
					t.Errorf("%s: --%s is not a flag of perflab %s: %.160q", where, name, of, text)
				}
			case !anyCmd[name] && foreignFlags[name] == "":
				t.Errorf("%s: --%s is a flag of no perflab command: %.160q", where, name, text)
			}
		}
	}
	root := filepath.Join("..", "..")
	// The messages: every string of perflab's Go code.
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		cmd := ""
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GenDecl:
				cmd = ""
			case *ast.FuncDecl:
				// A command's function, cmdRun: its messages are run's.
				cmd = ""
				if name, ok := strings.CutPrefix(n.Name.Name, "cmd"); ok && filepath.Base(filepath.Dir(path)) == "perflab" {
					cmd = strings.ToLower(name)
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					s, err := strconv.Unquote(n.Value)
					for i, line := range strings.Split(s, "\n") {
						if err == nil {
							check(fset.Position(n.Pos()).String()+" line "+strconv.Itoa(i+1), line, cmd)
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The docs, line by line.
	var docs []string
	for _, g := range []string{"*.md", "docs/*.md", "examples/*/README.md", "bench/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, m...)
	}
	slices.Sort(docs)
	for _, p := range docs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			check(p+":"+strconv.Itoa(i+1), line, "")
		}
	}
	if checked < 200 {
		t.Errorf("only %d flags named: the docs or the code were not read", checked)
	}
}

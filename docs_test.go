package perflab_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perflab/perflab/plan"
)

// docFiles are the Markdown files whose plans and links are checked.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	for _, pattern := range []string{"docs/*.md", "examples/README.md", "examples/*/README.md", "examples/*/*/README.md"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	return files
}

// fence is a fenced code block of a Markdown file.
type fence struct {
	file string
	line int    // of the opening fence, 1-based
	info string // the info string: "yaml plan dir=examples/x"
	body string
}

// fences returns the fenced code blocks of a Markdown file.
func fences(t *testing.T, file string) []fence {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fence
	var cur *fence
	var body strings.Builder
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if cur == nil {
			if info, ok := strings.CutPrefix(line, "```"); ok {
				cur = &fence{file: file, line: n, info: strings.TrimSpace(info)}
				body.Reset()
			}
			continue
		}
		if strings.TrimSpace(line) == "```" {
			cur.body = body.String()
			out = append(out, *cur)
			cur = nil
			continue
		}
		body.WriteString(line)
		body.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Errorf("%s:%d: code block not closed", file, cur.line)
	}
	return out
}

// planBlock reports whether a fence is marked as a complete plan (info
// string "yaml plan", see docs/README.md) and the directory its data files
// are relative to (dir=PATH, from the repository's root; default: the
// Markdown file's directory).
func planBlock(fc fence) (dir string, ok bool) {
	words := strings.Fields(fc.info)
	if len(words) < 2 || words[0] != "yaml" || words[1] != "plan" {
		return "", false
	}
	dir = filepath.Dir(fc.file)
	for _, w := range words[2:] {
		if d, found := strings.CutPrefix(w, "dir="); found {
			dir = filepath.FromSlash(d)
		}
	}
	return dir, true
}

// Every YAML block marked as a plan in the README, docs/ and the examples'
// READMEs is valid, as perflab validate checks it: the docs cannot rot.
// Environment variables are given a value (the docs' plans must not
// depend on the machine's environment).
func TestDocPlans(t *testing.T) {
	env := func(string) (string, bool) { return "x", true }
	n := 0
	for _, file := range docFiles(t) {
		for _, fc := range fences(t, file) {
			dir, ok := planBlock(fc)
			if !ok {
				continue
			}
			n++
			name := filepath.Join(dir, "doc-plan.yaml")
			if _, err := plan.Parse([]byte(fc.body), name, plan.Options{LookupEnv: env}); err != nil {
				t.Errorf("%s:%d: the plan does not validate:\n%s", fc.file, fc.line, inFile(err.Error(), name, fc))
			}
		}
	}
	if n == 0 {
		t.Error("no block marked as a plan (```yaml plan) found")
	}
	t.Logf("%d plans validated", n)
}

// inFile rewrites the positions of a block's errors, name:LINE:COL, as
// positions in its Markdown file.
func inFile(msg, name string, fc fence) string {
	re := regexp.MustCompile(regexp.QuoteMeta(name) + `:(\d+):`)
	return re.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(re.FindStringSubmatch(m)[1])
		return fmt.Sprintf("%s:%d:", fc.file, fc.line+n)
	})
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link of the README and docs/ points at a file that
// exists, and a link's #anchor at a heading of that file.
func TestDocLinks(t *testing.T) {
	files := append([]string{"README.md", "examples/README.md"}, mustGlob(t, "docs/*.md")...)
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				if path == "" {
					path = file
				} else {
					path = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %s: %v", file, i+1, target, err)
					continue
				}
				if anchor != "" && strings.HasSuffix(path, ".md") && !hasAnchor(t, path, anchor) {
					t.Errorf("%s:%d: link %s: no heading with anchor #%s in %s", file, i+1, target, anchor, path)
				}
			}
		}
	}
}

func mustGlob(t *testing.T, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) == 0 {
		t.Fatalf("%s: %v (%d files)", pattern, err, len(m))
	}
	return m
}

var notAnchor = regexp.MustCompile(`[^\p{L}\p{N}_ -]`)

// hasAnchor reports whether a Markdown file has a heading whose GitHub
// anchor is anchor.
func hasAnchor(t *testing.T, file, anchor string) bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		h := strings.TrimLeft(line, "#")
		if len(h) == len(line) || !strings.HasPrefix(h, " ") {
			continue
		}
		a := strings.ReplaceAll(notAnchor.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-")
		if a == anchor {
			return true
		}
	}
	return false
}

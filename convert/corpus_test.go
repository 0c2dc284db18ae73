package convert_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/perflab/perflab/convert"
	"github.com/perflab/perflab/plan"
)

// loadedBefore are the corpus plans whose conversion loaded, in this
// test's way, before the converter knew JMeter's logic (8 of 49): each
// must keep loading.
var loadedBefore = []string{
	"Azure-Samples__jmeter-aci-terraform__sample.jmx",
	"CivicActions__GlobalNet__test.jmx",
	"DEFRA__forms-perf-test__test.jmx",
	"HXSecurity__DongTai-Benchmark__jmeter.jmx",
	"RETIT__quarkus-carbon-emissions__jmeter.jmx",
	"aws-solutions__distributed-load-testing-on-aws__jmeter.jmx",
	"onap__policy-apex-pdp__apexPdpPerformanceTestPlan.jmx",
	"romankhar__WebSphere-Liberty-Autoscale-Docker__jmeter.jmx",
}

// corpusPlans are the committed plans of testdata/corpus, by SOURCES.
func corpusPlans(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "corpus", "SOURCES"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var plans []string
	var file, kind string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "file: "):
			file = strings.TrimPrefix(line, "file: ")
		case strings.HasPrefix(line, "kind: "):
			kind = strings.TrimPrefix(line, "kind: ")
		case line == "status: committed" && kind == "plan":
			plans = append(plans, file)
		}
	}
	sort.Strings(plans)
	return plans
}

// corpusRun is a corpus plan converted and loaded as perflab validate
// loads it.
type corpusRun struct {
	file  string
	res   *convert.Result
	err   error // loading the plan
	cause string
	// nothing is why a plan of which nothing converts into a request is
	// refused (res nil).
	nothing *convert.NothingToSendError
}

// sendNothing are the corpus's plans that send nothing: their only thread
// group is disabled. Converting them is refused.
var sendNothing = []string{"RWTH-i5-IDSG__ticketserver__benchmark.jmx"}

// loadCorpus converts every committed plan of the corpus and loads each
// as a user would after reading its notes: with the data files beside it
// (the corpus's copy, or a file of one row with the columns the plan
// reads) and --set values for the variables that have none (a number, a
// host).
func loadCorpus(t *testing.T) []*corpusRun {
	t.Helper()
	var runs []*corpusRun
	for _, file := range corpusPlans(t) {
		path := filepath.Join("testdata", "corpus", file)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := convert.JMeter(strings.NewReader(string(src)), path)
		var nothing *convert.NothingToSendError
		if errors.As(err, &nothing) {
			runs = append(runs, &corpusRun{file: file, nothing: nothing})
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		r := &corpusRun{file: file, res: res}
		dir := t.TempDir()
		out := filepath.Join(dir, "plan.yaml")
		if err := os.WriteFile(out, res.Plan, 0o644); err != nil {
			t.Fatal(err)
		}
		prefix := file[:strings.LastIndex(file, "__")+2]
		var doc struct {
			Vars map[string]string
			Data map[string]struct {
				CSV       string
				Header    bool
				Columns   []string
				Delimiter string
			}
		}
		if err := yaml.Unmarshal(res.Plan, &doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for name, d := range doc.Data {
			if d.CSV == "" {
				continue
			}
			dst := filepath.Join(dir, d.CSV)
			os.MkdirAll(filepath.Dir(dst), 0o755)
			if b, err := os.ReadFile(filepath.Join("testdata", "corpus", prefix+filepath.Base(d.CSV))); err == nil {
				os.WriteFile(dst, b, 0o644)
				continue
			}
			os.WriteFile(dst, []byte(stubCSV(name, d.Columns, d.Delimiter, d.Header, res.Plan)), 0o644)
		}
		if d := os.Getenv("PERFLAB_CORPUS_OUT"); d != "" { // to read the plans
			os.WriteFile(filepath.Join(d, strings.TrimSuffix(file, ".jmx")+".yaml"), res.Plan, 0o644)
		}
		var set []plan.Override
		given := map[string]bool{}
		for k, v := range doc.Vars {
			if v == "" {
				set = append(set, plan.Override{Name: k, Value: setValue(k)})
				given[k] = true
			}
		}
		for _, n := range res.Skipped {
			for _, m := range setHint.FindAllStringSubmatch(n, -1) {
				if _, ok := doc.Vars[m[1]]; ok && !given[m[1]] {
					set = append(set, plan.Override{Name: m[1], Value: setValue(m[1])})
					given[m[1]] = true
				}
			}
		}
		_, r.err = plan.Load(out, plan.Options{Set: set})
		if r.err != nil {
			r.cause = cause(r.err)
		}
		runs = append(runs, r)
	}
	return runs
}

// setHint is a note's advice to give a variable.
var setHint = regexp.MustCompile(`--set ([A-Za-z_][A-Za-z0-9_-]*)=VALUE`)

// setValue is a value a user gives a variable the plan leaves empty, by
// its name: a scheme, a host, a port, or a number.
func setValue(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "proto") || strings.Contains(n, "scheme"):
		return "http"
	case strings.Contains(n, "port"):
		return "8080"
	case strings.Contains(n, "host") || strings.Contains(n, "domain") || strings.Contains(n, "server") || strings.HasSuffix(n, "url"):
		return "localhost"
	}
	return "1"
}

// stubCSV is a data file for a source: its columns given (after a first
// line to skip, with skipFirst), or the columns the plan reads
// (${source.column}) on a header line, and a row.
func stubCSV(name string, cols []string, delim string, skipFirst bool, planText []byte) string {
	switch delim {
	case "":
		delim = ","
	case `\t`, "tab":
		delim = "\t"
	}
	row := func(n int) string { return strings.TrimSuffix(strings.Repeat("1"+delim, n), delim) }
	switch {
	case len(cols) > 0 && skipFirst: // named columns of a file whose first line is skipped
		return strings.Join(cols, delim) + "\n" + row(len(cols)) + "\n"
	case len(cols) > 0:
		return row(len(cols)) + "\n"
	}
	seen := map[string]bool{}
	var header []string
	for _, m := range regexp.MustCompile(`\$\{(?:raw:)?`+regexp.QuoteMeta(name)+`\.([A-Za-z0-9_-]+)`).FindAllSubmatch(planText, -1) {
		if c := string(m[1]); !seen[c] {
			seen[c] = true
			header = append(header, c)
		}
	}
	if len(header) == 0 {
		header = []string{"value"}
	}
	return strings.Join(header, delim) + "\n" + row(len(header)) + "\n"
}

var positioned = regexp.MustCompile(`^[^:]*:\d+:\d+: `)

// cause is what a plan's first error says, without its place and names.
func cause(err error) string {
	msg := strings.SplitN(err.Error(), "\n", 2)[0]
	msg = positioned.ReplaceAllString(msg, "")
	msg = regexp.MustCompile(`"[^"]*"`).ReplaceAllString(msg, `"…"`)
	msg = regexp.MustCompile(`\$\{[^}]*\}`).ReplaceAllString(msg, "${…}")
	if len(msg) > 90 {
		msg = msg[:90]
	}
	return msg
}

// Every committed plan of the corpus converts, but those that send
// nothing (sendNothing), which are refused; the share that loads is at
// least 90%; every enabled element of each is converted or listed, none
// dropped in silence; a plan that loaded before still loads. The figures
// are printed (docs/import.md has them).
func TestCorpus(t *testing.T) {
	runs := loadCorpus(t)
	loaded := 0
	var conv, listed, dropped int
	causes := map[string]int{}
	refused := 0
	for _, r := range runs {
		if (r.nothing != nil) != slices.Contains(sendNothing, r.file) {
			t.Errorf("%s: refused as sending nothing: %v, want %v", r.file, r.nothing, slices.Contains(sendNothing, r.file))
		}
		if r.nothing != nil {
			refused++
			continue
		}
		if r.err == nil {
			loaded++
		} else {
			causes[r.cause]++
			t.Logf("%s does not load: %v", r.file, strings.SplitN(r.err.Error(), "\n", 2)[0])
		}
		conv += r.res.Elements.Converted
		listed += r.res.Elements.Listed
		dropped += len(r.res.Elements.Dropped)
		for _, d := range r.res.Elements.Dropped {
			t.Errorf("%s: dropped in silence: %s", r.file, d)
		}
	}
	total := conv + listed + dropped
	fmt.Printf("corpus: %d of %d plans convert and load (%.0f%%); %d refused, sending nothing\n", loaded, len(runs), 100*float64(loaded)/float64(len(runs)), refused)
	fmt.Printf("corpus: %d enabled elements: %d converted (%.1f%%), %d listed (%.1f%%), %d dropped in silence\n",
		total, conv, 100*float64(conv)/float64(total), listed, 100*float64(listed)/float64(total), dropped)
	type kv struct {
		k string
		n int
	}
	var top []kv
	for k, n := range causes {
		top = append(top, kv{k, n})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].n > top[j].n || top[i].n == top[j].n && top[i].k < top[j].k })
	for _, c := range top {
		fmt.Printf("corpus: does not load (%d): %s\n", c.n, c.k)
	}
	if 10*loaded < 9*len(runs) {
		t.Errorf("%d of %d plans load: want 90%% at least", loaded, len(runs))
	}
	for _, f := range loadedBefore {
		for _, r := range runs {
			if r.file == f && r.err != nil {
				t.Errorf("%s loaded before and no longer does: %v", f, r.err)
			}
		}
	}
}

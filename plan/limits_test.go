package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const tinyPlan = "target: http://127.0.0.1:1\nscenarios:\n  - {name: s, vus: 1, iterations: 1, flow: [{name: a, url: /}]}\n"

// A plan file over MaxPlanBytes is refused before it is read, naming the
// file, its size and the limit; one at the limit loads.
func TestPlanSizeLimit(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(tinyPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	// A sparse file: its size says it all, and Load must not read it.
	if err := os.Truncate(big, 50<<20); err != nil {
		t.Fatal(err)
	}
	_, err := Load(big, Options{})
	want := big + ": the plan is 50.0 MiB (52428800 bytes): plans are limited to 4 MiB"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s...", err, want)
	}
	// Parse, for plans given as text, has the same limit.
	src := tinyPlan + "#" + strings.Repeat("x", MaxPlanBytes-len(tinyPlan)-2) + "\n"
	if _, err := Parse([]byte(src), "at-limit.yaml", Options{}); err != nil {
		t.Errorf("a plan of exactly %d bytes: %v", len(src), err)
	}
	if _, err := Parse([]byte(src+"\n"), "over.yaml", Options{}); err == nil || !strings.Contains(err.Error(), "over.yaml: the plan is 4.0 MiB (4194305 bytes): plans are limited to 4 MiB") {
		t.Errorf("one byte over: %v", err)
	}
}

// A plan may declare at most MaxVars variables.
func TestPlanVariablesLimit(t *testing.T) {
	vars := func(n int) string {
		var b strings.Builder
		b.WriteString(tinyPlan + "vars:\n")
		for i := range n {
			fmt.Fprintf(&b, "  v%d: %d\n", i, i)
		}
		return b.String()
	}
	if _, err := Parse([]byte(vars(MaxVars)), "most.yaml", Options{}); err != nil {
		t.Errorf("%d variables: %v", MaxVars, err)
	}
	_, err := Parse([]byte(vars(MaxVars+1)), "many.yaml", Options{})
	if err == nil || err.Error() != "many.yaml:5:3: vars: 10001 variables: a plan may declare at most 10000 (put values in data files: data: csv, file, glob, range)" {
		t.Errorf("got %v", err)
	}
}

// sparse makes a file of size bytes that costs no disk: a reader that
// read it whole would take size bytes of memory, a limit checked by the
// size reads nothing.
func sparse(t *testing.T, path string, head string, size int64) {
	t.Helper()
	if err := os.WriteFile(path, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// The files a plan names are refused over their limits by their sizes,
// unread, each error at the plan's place and naming the limit.
func TestPlanFileLimits(t *testing.T) {
	dir := t.TempDir()
	sparse(t, filepath.Join(dir, "ca.pem"), "-----BEGIN CERTIFICATE-----\n", MaxCAFileBytes+1)
	sparse(t, filepath.Join(dir, "body.json"), `{"a": "`, MaxDataFileBytes+1)
	sparse(t, filepath.Join(dir, "users.csv"), "login\nann\n", MaxCSVBytes+1)
	sparse(t, filepath.Join(dir, "stubs.yaml"), "routes: []\n", 5<<20)
	src := `target: https://127.0.0.1:8443
http:
  ca_file: ca.pem
data:
  body: {file: body.json}
  users: {csv: users.csv}
simulators:
  - name: stubbed
    http: {listen: "127.0.0.1:18089", stubs: stubs.yaml}
scenarios:
  - {name: s, vus: 1, iterations: 1, flow: [{name: a, url: /}]}
`
	name := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(name, Options{})
	want := []string{
		name + ":3:12: http.ca_file: " + filepath.Join(dir, "ca.pem") + " is 4.0 MiB (4194305 bytes): a CA file may be 4 MiB",
		name + ":5:3: data body: " + filepath.Join(dir, "body.json") + " is 64.0 MiB (67108865 bytes): a data file of one value may be 64 MiB, held in memory and sent as it is",
		name + ":6:3: data users: " + filepath.Join(dir, "users.csv") + " is 1024.0 MiB (1073741825 bytes): a CSV data file may be 1 GiB, its rows held in memory for the run",
		name + ":9:11: simulator stubbed: " + filepath.Join(dir, "stubs.yaml") + " is 5.0 MiB (5242880 bytes): a stubs file may be 4 MiB",
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Errorf("got\n%v\nwant\n%s", err, strings.Join(want, "\n"))
	}
}

// A CA file is read only when it is one: a CA file not of a certificate
// says so at its place.
func TestCAFileOfNoCertificate(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Parse([]byte("target: https://127.0.0.1:8443\nhttp:\n  timeout: 5s\n  ca_file: ca.pem\n"+tinyPlan[len("target: http://127.0.0.1:1\n"):]), filepath.Join(dir, "p.yaml"), Options{})
	if err == nil || err.Error() != filepath.Join(dir, "p.yaml")+":4:12: http.ca_file: ca.pem holds no PEM certificate" {
		t.Errorf("got %v", err)
	}
}

// A plan given on the command line may be a named pipe, read up to the
// limit; a device or a directory is refused unread.
func TestPlanFileKinds(t *testing.T) {
	for _, name := range []string{"/dev/zero", t.TempDir()} {
		_, err := Load(name, Options{})
		if err == nil || !strings.HasPrefix(err.Error(), name+": not a plan: "+name+" is a ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	fifo := filepath.Join(t.TempDir(), "plan.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.WriteString(tinyPlan)
			w.Close()
		}
	}()
	if p, err := Load(fifo, Options{}); err != nil || len(p.Scenarios) != 1 {
		t.Errorf("a plan through a pipe: %v", err)
	}
}

// Validating a plan reads a data file as a stream and keeps none of it;
// ReadData, for a run, reads the rows and the content into memory, and
// refuses what changed since into something it cannot read, at the
// data source's place.
func TestDataReadForTheRunOnly(t *testing.T) {
	dir := t.TempDir()
	var csv strings.Builder
	csv.WriteString("id,name\n")
	for i := range 100_000 {
		fmt.Fprintf(&csv, "%d,user-%d\n", i, i)
	}
	for name, content := range map[string]string{"users.csv": csv.String(), "body.json": `{"items": [1, 2, 3]}`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := "data:\n  users: {csv: users.csv}\n  body: {file: body.json}\n" + tinyPlan
	name := filepath.Join(dir, "plan.yaml")
	p, err := Parse([]byte(src), name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	users, body := p.Data[0], p.Data[1]
	if users.Rows != nil || body.Content != "" || strings.Join(users.Cols, ",") != "id,name" {
		t.Fatalf("validation kept the data: %d rows, %d bytes of content, columns %q", len(users.Rows), len(body.Content), users.Cols)
	}
	if err := p.ReadData(); err != nil {
		t.Fatal(err)
	}
	if len(users.Rows) != 100_000 || users.Rows[99_999][1] != "user-99999" || body.Content != `{"items": [1, 2, 3]}` {
		t.Errorf("ReadData: %d rows, content %q", len(users.Rows), body.Content)
	}
	// A second plan of the same files, changed after validation.
	p, err = Parse([]byte(src), name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "body.json"), []byte(`{"items": [1, 2`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "users.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "users.csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = p.ReadData()
	want := name + ":2:3: data users: " + filepath.Join(dir, "users.csv") + " is a directory, not a regular file\n" +
		name + ":3:3: data body: body.json is not valid JSON"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}

// A JSON data file is checked as a stream: one value, whole.
func TestDataJSONChecked(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]string{
		`{"a": [1, 2, {"b": "c"}]}`: "",
		` "just a string" `:         "",
		`{"a": 1`:                   "body.json is not valid JSON: unexpected EOF",
		`{"a": 1} {"b": 2}`:         "body.json is not valid JSON: more than one value",
		`[1, 2,]`:                   "body.json is not valid JSON: invalid character ']' looking for beginning of value",
		``:                          "body.json is not valid JSON: unexpected EOF",
	} {
		if err := os.WriteFile(filepath.Join(dir, "body.json"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Parse([]byte("data:\n  body: {file: body.json}\n"+tinyPlan), filepath.Join(dir, "p.yaml"), Options{})
		if want == "" && err != nil || want != "" && (err == nil || !strings.HasSuffix(err.Error(), "data body: "+want)) {
			t.Errorf("%q: %v, want %q", content, err, want)
		}
	}
}

// A CSV file's delimiter is one character, or a tab by name; named
// columns are a row's first fields. A delimiter of anything but a CSV
// file, or of several characters, is refused at its source.
func TestDataDelimiter(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"semi.csv": "ann;1;extra\nbob;2\n", "tabs.tsv": "login\tpin\nann\t1\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	name := filepath.Join(dir, "plan.yaml")
	src := "data:\n  semi: {csv: semi.csv, header: false, columns: [login, pin], delimiter: \";\"}\n  tabs: {csv: tabs.tsv, delimiter: '\\t'}\n  tabs2: {csv: tabs.tsv, delimiter: tab}\n" + tinyPlan
	p, err := Parse([]byte(src), name, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ReadData(); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(p.Data[0].Rows, p.Data[1].Cols, p.Data[1].Rows, p.Data[2].Rows)
	if want := "[[ann 1] [bob 2]] [login pin] [[ann 1]] [[ann 1]]"; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
	src = "data:\n  semi: {csv: semi.csv, delimiter: \";;\"}\n  list: {values: [a], delimiter: \";\"}\n" + tinyPlan
	_, err = Parse([]byte(src), name, Options{})
	want := name + `:2:3: data semi: delimiter ";;": want one character (not a quote or a line break), or \t for a tab` + "\n" +
		name + ":3:3: data list: delimiter is for csv files"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}

// The plan and the files it includes are recorded together (summary.json,
// the history): together they may be MaxPlanBytes. One more byte in an
// included file is refused at the file that includes it, before that byte
// is parsed.
func TestIncludedBytesLimit(t *testing.T) {
	dir := t.TempDir()
	plan := "include: [a.yaml, b.yaml]\n" + tinyPlan
	frag := func(n int) string {
		const head = "fragments: {x: [{name: x, url: /x}]}\n#"
		return head + strings.Repeat("x", n-len(head)-1) + "\n"
	}
	half := (MaxPlanBytes - len(plan)) / 2
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("plan.yaml", plan)
	write("a.yaml", frag(half))
	write("b.yaml", strings.Replace(frag(MaxPlanBytes-len(plan)-half), "x:", "y:", 1))
	p, err := Load(filepath.Join(dir, "plan.yaml"), Options{})
	if err != nil {
		t.Fatalf("a plan and its files of %d bytes: %v", MaxPlanBytes, err)
	}
	if len(p.Included) != 2 {
		t.Fatalf("included: %d files", len(p.Included))
	}
	write("b.yaml", strings.Replace(frag(MaxPlanBytes-len(plan)-half+1), "x:", "y:", 1))
	_, err = Load(filepath.Join(dir, "plan.yaml"), Options{})
	want := filepath.Join(dir, "plan.yaml") + ":1:1: include b.yaml: the plan and the files it includes are 4.0 MiB (4194305 bytes) together, more than the 4 MiB a plan may be: they are kept whole with every run (summary.json, the history)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

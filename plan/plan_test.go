package plan

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func noEnv(string) (string, bool) { return "", false }

// Each invalid plan's messages are compared with its .golden file.
func TestInvalidPlansGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/invalid/*.yaml")
	if len(files) == 0 {
		t.Fatal("no test plans")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := Load(f, Options{LookupEnv: noEnv})
			if err == nil {
				t.Fatal("plan was accepted")
			}
			if _, ok := err.(ErrorList); !ok {
				t.Fatalf("error is %T, want ErrorList", err)
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(f, ".yaml") + ".golden"
			if *update {
				os.WriteFile(golden, []byte(got), 0o644)
			}
			want, _ := os.ReadFile(golden)
			if got != string(want) {
				t.Errorf("messages differ from %s (go test ./plan -update rewrites it)\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
}

func TestValidPlan(t *testing.T) {
	p, err := Load("testdata/valid/full.yaml", Options{LookupEnv: func(k string) (string, bool) {
		if k == "CPS_AUTH" {
			return "c2VjcmV0", true
		}
		return "", false
	}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "full" || len(p.Scenarios) != 2 || len(p.Setup) != 2 || len(p.Teardown) != 1 {
		t.Fatalf("decoded %+v", p)
	}
	if got := p.Env["CPS_AUTH"]; got != "c2VjcmV0" {
		t.Errorf("env not captured: %q", got)
	}
	// Sweeps: users [1, 5] x size [10, 20] => 4 stages, users slowest.
	var names []string
	for _, st := range p.Stages() {
		names = append(names, st.Name())
	}
	if want := []string{"users=1 size=10", "users=1 size=20", "users=5 size=10", "users=5 size=20"}; !reflect.DeepEqual(names, want) {
		t.Errorf("stages = %q, want %q", names, want)
	}
	if !p.SetupPerStage {
		t.Error("setup repeats ${size} times, so it must run per stage")
	}
	st := p.Stages()[2]
	vars := p.VarsFor(st)
	if n, _ := p.Scenarios[0].VUs.Int(vars, 1); n != 5 {
		t.Errorf("vus in stage 3 = %d, want 5", n)
	}
	if d, _ := p.Scenarios[1].Duration.Dur(vars); d.String() != "2s" {
		t.Errorf("duration = %v", d)
	}
	flow := p.Scenarios[0].Flow
	if !flow[1].IsTransaction() || len(flow[1].Steps) != 2 || flow[1].Steps[0].Method != "GET" {
		t.Errorf("transaction not decoded: %+v", flow[1])
	}
	if got := flow[0].JSON.Text.String(); got != `{"name":"anchor-${vu}-${iteration}","n":3,"ok":true,"tags":["a","b"],"none":null}` {
		t.Errorf("json body = %s", got)
	}
	if th := flow[2].Think; th == nil || th.Min.String() != "100ms" || th.Max.String() != "300ms" {
		t.Errorf("think = %+v", th)
	}
	// Validation reads the CSV file for its columns and keeps no row;
	// ReadData reads the rows for a run, once.
	users := p.Data[1]
	if users.Name != "users_csv" || users.Rows != nil || users.Cols[1] != "password" {
		t.Errorf("csv = %+v", users)
	}
	if err := p.ReadData(); err != nil || len(users.Rows) != 3 || users.Rows[2][0] != "cid" {
		t.Errorf("ReadData: %v, rows %q", err, users.Rows)
	}
	if devices := p.Data[2]; len(devices.Rows) != 1000 || devices.Rows[999][0] != "C201-7-25A-40A1" {
		t.Errorf("glob expanded to %d rows", len(devices.Rows))
	}
	if ids := p.Data[3]; len(ids.Rows) != 5 || ids.Rows[4][0] != "id-0009" {
		t.Errorf("range = %v", ids.Rows)
	}
}

func TestOverrides(t *testing.T) {
	env := func(k string) (string, bool) { return "x", k == "CPS_AUTH" }
	p, err := Load("testdata/valid/full.yaml", Options{LookupEnv: env, Set: []Override{{Name: "users", Value: "20"}, {Name: "size", Value: "[100, 200, 300]"}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Stages()); n != 3 {
		t.Fatalf("stages = %d, want 3 (users fixed, size swept over 3)", n)
	}
	if n, _ := p.Scenarios[0].VUs.Int(p.VarsFor(p.Stages()[0]), 1); n != 20 {
		t.Errorf("vus = %d, want 20", n)
	}
	_, err = Load("testdata/valid/full.yaml", Options{LookupEnv: env, Set: []Override{{Name: "userz", Value: "3"}}})
	if err == nil || !strings.Contains(err.Error(), `the plan has no variable "userz" (did you mean "users"?)`) {
		t.Errorf("unknown --set: %v", err)
	}
}

// A --secret value is taken as it is (brackets make no sweep), and a
// run keeps it, and any variable or --set value of a secret's name, as
// secret.Redacted.
func TestSecretOverrides(t *testing.T) {
	env := func(k string) (string, bool) { return "x", k == "CPS_AUTH" }
	p, err := Load("testdata/valid/full.yaml", Options{LookupEnv: env, Set: []Override{{Name: "ds", Value: "[a,b]", Secret: true}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range p.Vars {
		if v.Name == "ds" && (v.Swept() || !slices.Equal(v.Values, []string{"[a,b]"}) || !slices.Equal(v.Kept(), []string{"[redacted]"})) {
			t.Errorf("ds: values %q, swept %v, kept %q", v.Values, v.Swept(), v.Kept())
		}
		if v.Name == "users" && !slices.Equal(v.Kept(), v.Values) {
			t.Errorf("users kept as %q", v.Kept())
		}
	}
	if got := (&Var{Name: "api_token", Values: []string{"t1", "t2"}}).Kept(); !slices.Equal(got, []string{"[redacted]", "[redacted]"}) {
		t.Errorf("a variable named api_token is kept as %q", got)
	}
	for o, want := range map[Override]string{{Name: "users", Value: "5"}: "5", {Name: "users", Value: "5", Secret: true}: "[redacted]", {Name: "password", Value: "p"}: "[redacted]"} {
		if got := o.Kept(); got != want {
			t.Errorf("%+v kept as %q, want %q", o, got, want)
		}
	}
	_, err = Load("testdata/valid/full.yaml", Options{LookupEnv: env, Set: []Override{{Name: "userz", Value: "3", Secret: true}}})
	if err == nil || !strings.Contains(err.Error(), `--secret: userz: the plan has no variable "userz"`) || strings.Contains(err.Error(), "3") {
		t.Errorf("unknown --secret: %v", err)
	}
}

// Any plan is accepted, with every step named and its stages made, or
// refused with its problems in file order, each said once.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.yaml")
	for _, name := range files {
		b, _ := os.ReadFile(name)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := Parse(src, "testdata/valid/fuzz.yaml", Options{LookupEnv: noEnv})
		if err == nil {
			p.Stages() // must not panic on any accepted plan
			for _, sc := range p.Scenarios {
				for _, st := range sc.Flow {
					if st.Label() == "" && !st.IsPause() {
						t.Fatalf("scenario %s: a step without a name: %+v", sc.Name, st)
					}
				}
			}
			return
		}
		list, ok := err.(ErrorList)
		if !ok {
			t.Fatalf("error of type %T: %v", err, err)
		}
		for i := 1; i < len(list); i++ {
			a, b := list[i-1], list[i]
			if a.File != b.File {
				if b.File == list[0].File {
					t.Fatalf("the plan's errors after an included file's:\n%v", list)
				}
				continue
			}
			if a.Line > b.Line || a.Line == b.Line && a.Col > b.Col || *a == *b {
				t.Fatalf("errors out of order or repeated:\n%v", list)
			}
		}
	})
}

func TestParseThresholdErrors(t *testing.T) {
	for in, want := range map[string]string{
		"p75 regression vs Goldenrod < 10%":       "LABEL=VALUE",
		"p75 regression vs release=G < 10ms":      "PERCENT",
		"errors regression vs release=G < 10%":    "a regression is of one of",
		"p75 regression vs release=G < 10% abort": "cannot abort",
		"p95 < 500ms abort please":                "want [OPERATION:]",
		"dropped < 0.01":                          "a count of iterations is whole",
		"dropped < 5/s":                           "a share of the iterations due",
		"p95 == 500ms":                            "== is for what is counted",
		"total: p95 < 1s":                         "total has rps, errors, count and dropped",
		"dropped regression vs release=G < 10%":   "a regression is of one of",
	} {
		_, err := ParseThreshold(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", in, err, want)
		}
	}
}

func TestParseThreshold(t *testing.T) {
	cases := []struct {
		in      string
		op, met string
		cmp     string
		value   float64
		holdsAt float64
		failsAt float64
	}{
		{"p95 < 500ms", "", "p95", "<", 500, 499.9, 500},
		{"check-out: p75 <= 2s", "check-out", "p75", "<=", 2000, 2000, 2000.1},
		{"errors < 0.1%", "", "errors", "<", 0.001, 0.0009, 0.001},
		{"total: rps > 800", "total", "rps", ">", 800, 800.5, 800},
		{"GET /a b: max >= 1.5s", "GET /a b", "max", ">=", 1500, 1500, 1499},
		{"p75 regression vs release=Goldenrod < 10%", "", "p75", "<", 0.10, 0.0999, 0.10},
		{"check-in: rps regression vs release=R1 <= 5%", "check-in", "rps", "<=", 0.05, 0.05, 0.0501},
		{"errors < 5% abort", "", "errors", "<", 0.05, 0.049, 0.05},
		{"dropped < 1%", "", "dropped", "<", 0.01, 0.0099, 0.01},
		{"browse: dropped < 10", "browse", "dropped", "<", 10, 9, 10},
		{"total: dropped == 0 abort", "total", "dropped", "==", 0, 0, 1},
		{"errors == 0", "", "errors", "==", 0, 0, 0.0001},
	}
	for _, c := range cases {
		th, err := ParseThreshold(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if th.Operation != c.op || th.Metric != c.met || th.Op != c.cmp || math.Abs(th.Value-c.value) > 1e-9 {
			t.Errorf("%s: %+v", c.in, th)
		}
		if strings.Contains(c.in, "regression") != th.Regression() || strings.HasSuffix(c.in, "abort") != th.Abort {
			t.Errorf("%s: regression %v (baseline %q), abort %v", c.in, th.Regression(), th.Baseline, th.Abort)
		}
		if th.Share != (c.met == "dropped" && strings.HasSuffix(c.in, "%")) {
			t.Errorf("%s: share %v", c.in, th.Share)
		}
		if !th.Holds(c.holdsAt) || th.Holds(c.failsAt) {
			t.Errorf("%s: holds at %v: %v, at %v: %v", c.in, c.holdsAt, th.Holds(c.holdsAt), c.failsAt, th.Holds(c.failsAt))
		}
	}
}

// Percentages are exact fractions: errors <= 0.7% holds at 7 in 1000.
func TestThresholdPercentExact(t *testing.T) {
	for _, s := range []string{"errors <= 0.7%", "errors <= 0.1%", "errors <= 29%", "p75 regression vs release=A <= 0.7%"} {
		th, err := ParseThreshold(s)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]float64{"errors <= 0.7%": 0.007, "errors <= 0.1%": 0.001, "errors <= 29%": 0.29, "p75 regression vs release=A <= 0.7%": 0.007}[s]
		if th.Value != want {
			t.Errorf("%s: %v, want %v", s, th.Value, want)
		}
	}
	th, _ := ParseThreshold("errors <= 0.7%")
	if !th.Holds(7.0 / 1000) {
		t.Error("7 errors in 1000 exceed 0.7%")
	}
}

// A total regression has nothing to compare and is refused, not ignored.
func TestTotalRegressionRefused(t *testing.T) {
	if _, err := ParseThreshold("total: p75 regression vs release=A < 10%"); err == nil || !strings.Contains(err.Error(), "total has none") {
		t.Errorf("got %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1": 1, "10B": 10, "4MiB": 4 << 20, "4 MiB": 4 << 20, "512KiB": 512 << 10, "1KB": 1000, "2MB": 2e6, "1GiB": 1 << 30, "3gb": 3e9} {
		if got, err := ParseSize(in); got != want || err != nil {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "4M", "MiB", "1.5MiB", "4TiB", "99999999999GiB"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
	if got := FormatSize(4 << 20); got != "4 MiB" {
		t.Errorf("FormatSize(4 MiB) = %q", got)
	}
}

// A plan takes the fragments of the files it includes, and of those they
// include, each file once; a problem in an included file is placed in it.
func TestIncludedFragments(t *testing.T) {
	p, err := Load("testdata/include/plan.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	eachStep(p.Scenarios[0].Flow, func(s *Step) {
		if !s.IsBlock() {
			names = append(names, s.Name)
		}
	})
	if got := strings.Join(names, ","); got != "login,browse,logout" {
		t.Errorf("the flow's steps: %s", got)
	}
	// The files included, each once, as they were read, by their place
	// from the plan's directory.
	var files []string
	for _, f := range p.Included {
		src, err := os.ReadFile(filepath.Join("testdata/include", filepath.FromSlash(f.Path)))
		if err != nil || f.Source != string(src) {
			t.Errorf("%s: %q, want the file's text (%v)", f.Path, f.Source, err)
		}
		files = append(files, f.Path)
	}
	if got := strings.Join(files, ","); got != "common.yaml,more/logout.yaml" {
		t.Errorf("included: %s", got)
	}
	_, err = Load("testdata/include/bad.yaml", Options{})
	want := []string{
		"testdata/include/broken.yaml:4:17: unknown field \"urll\" (did you mean \"url\"?)",
		"testdata/include/missing.yaml: include: open testdata/include/missing.yaml: no such file or directory",
	}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("errors:\n%v\nwant among them:\n%s", err, w)
		}
	}
}

// An included file is recorded by its place from the plan's directory,
// wherever the file that includes it is: in a directory of its own, above
// the plan's, or named by an absolute path (it and what it includes
// relative to itself then recorded by their absolute paths).
func TestIncludedPaths(t *testing.T) {
	root := t.TempDir()
	abs := filepath.Join(root, "elsewhere")
	files := map[string]string{
		"tests/checkout/plan.yaml":         "include: [common/login.yaml, ../team/auth.yaml, " + filepath.Join(abs, "abs.yaml") + "]\n" + tinyPlan,
		"tests/checkout/common/login.yaml": "include: [../more/logout.yaml]\nfragments: {login: [{name: login, url: /login}]}\n",
		"tests/checkout/more/logout.yaml":  "fragments: {logout: [{name: logout, url: /logout}]}\n",
		"tests/team/auth.yaml":             "include: [deep/token.yaml]\nfragments: {auth: [{name: auth, url: /auth}]}\n",
		"tests/team/deep/token.yaml":       "include: [../../checkout/plan.yaml]\nfragments: {token: [{name: token, url: /token}]}\n",
		"elsewhere/abs.yaml":               "include: [rel.yaml]\nfragments: {abs: [{name: abs, url: /abs}]}\n",
		"elsewhere/rel.yaml":               "fragments: {rel: [{name: rel, url: /rel}]}\n",
	}
	for name, src := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Load(filepath.Join(root, "tests/checkout/plan.yaml"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"common/login.yaml", "more/logout.yaml", "../team/auth.yaml", "../team/deep/token.yaml", filepath.Join(abs, "abs.yaml"), filepath.Join(abs, "rel.yaml")}
	var got []string
	for _, f := range p.Included {
		got = append(got, f.Path)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("included:\n%q\nwant\n%q", got, want)
	}
	for i, name := range []string{"tests/checkout/common/login.yaml", "tests/checkout/more/logout.yaml", "tests/team/auth.yaml", "tests/team/deep/token.yaml", "elsewhere/abs.yaml", "elsewhere/rel.yaml"} {
		if p.Included[i].Source != files[name] {
			t.Errorf("%s: %q", name, p.Included[i].Source)
		}
	}
}

// Setup and teardown take a flow's logic, checked as a flow's is: what
// setup extracts or sets anywhere in it (in a loop, a branch, a
// transaction, a fragment) is there for the scenarios and teardown; an
// expression of setup that reads a swept variable makes it run per
// stage; a name a scenario sets is not teardown's; a name used before
// anything sets it is said at its place.
func TestLogicInSetupAndTeardown(t *testing.T) {
	src := `target: http://127.0.0.1:1
vars: {n: [1, 2]}
data: {ids: {values: [a, b]}}
fragments:
  login: [{name: login, url: /login, extract: {token: $.token}}]
setup:
  - use: login
  - {name: list, url: /list, extract: {items: {json: "$.items[*]", match: all}}}
  - name: each
    loop: {over: items, as: item_id, index: i, max: 5, rows: [ids]}
    steps:
      - {name: item, url: "/item/${item_id}/${i}/${ids}"}
  - if: response.ok && int(n) > 1
    steps: [{name: big, url: /big}]
    else: [{name: small, url: /small}]
  - choose:
      - {weight: 1, steps: [{name: a, url: /a}]}
      - {weight: 2, steps: []}
  - {name: once, url: /once, once: true}
  - set: {next: int(i) + 1}
  - transaction: prepare
    steps:
      - {name: make, method: POST, url: "/make/${index}", repeat: {count: 2}}
      - {name: made, url: "/made?t=${token}", extract: {made: $.id}}
  - name: poll
    loop: {while: 'json("$.state") != "done"', max: 3}
    steps: [{name: poll, url: /poll}]
scenarios:
  - name: s
    vus: 1
    iterations: 1
    flow:
      - name: use
        url: /use/${token}/${item_id}/${next}/${made}
        extract: {late: $.x}
teardown:
  - if: defined("made") && next != ""
    steps:
      - name: delete
        method: DELETE
        url: /made/${made}
  - {name: each left, method: DELETE, url: "/left/${item}", repeat: {for_each: ids}, if: "token != ''"}
`
	p, err := Parse([]byte(src), "case.yaml", Options{LookupEnv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if !p.SetupPerStage {
		t.Error("setup's if reads the swept n: it must run per stage")
	}
	bad := strings.Replace(src, "/use/${token}", "/use/${tokn}", 1)
	bad = strings.Replace(bad, "if: response.ok && int(n) > 1", "if: response.ok && count > 1", 1)
	bad = strings.Replace(bad, "/made/${made}", "/made/${late}", 1)
	_, err = Parse([]byte(bad), "case.yaml", Options{LookupEnv: noEnv})
	for _, w := range []string{
		"case.yaml:13:24: setup: if: count is not defined here",
		"case.yaml:34:19: undefined variable ${tokn} (did you mean \"token\"?)",
		"case.yaml:41:20: undefined variable ${late}",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("errors:\n%v\nwant among them:\n%s", err, w)
		}
	}
}

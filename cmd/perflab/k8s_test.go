package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/perflab/perflab/internal/k8stest"
	"github.com/perflab/perflab/internal/runtest"
	"github.com/perflab/perflab/k8s"
	"github.com/perflab/perflab/metrics"
	"github.com/perflab/perflab/plan"
	"github.com/perflab/perflab/store"
)

// envRef is Kubernetes' $(VAR) in a container's args.
var envRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// The manifests perflab k8s writes run as the cluster would run them:
// each of the Job's pods is a process with the ConfigMap's files at their
// paths, the Job's args, and in its environment its completion index and
// the DSN the Secret holds. The pods make one run of the plan: its data
// rows shared out, its counts the server's.
func TestK8sJobRunsAsProcesses(t *testing.T) {
	bin := perflabBin(t)
	dsn := pgSchema(t, "k8s_test")
	srv := newDistServer(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	var rows strings.Builder
	rows.WriteString("id\n")
	for i := range 12 {
		fmt.Fprintf(&rows, "u%02d\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "users.csv"), []byte(rows.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	planPath := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(planPath, []byte(`name: on-cluster
target: `+srv.URL+`
vars: {tag: x}
data:
  users: {csv: data/users.csv}
scenarios:
  - {name: users, vus: 1, iterations: 1, flow: [{name: user, url: "/${tag}/users/${users.id}"}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The load given on the command line is written into the ConfigMap's
	// plan, which the pods run as it is.
	code, manifests, errs := runCLI(t, "k8s", planPath, "--workers", "3", "--run-id", "k8s-1", "--store", dsn, "--set", "tag=k", "--vus", "6", "--iterations", "2")
	if code != exitOK {
		t.Fatalf("perflab k8s: %d\n%s", code, errs)
	}
	if strings.Contains(manifests, "perflab@") || strings.Contains(manifests, "postgres://") {
		t.Fatal("the manifests hold the DSN")
	}
	cm, job := k8stest.Decode(t, []byte(manifests))
	if p := cm.Data["plan.yaml"]; !strings.Contains(p, "{name: users, vus: 6, iterations: 2, flow:") || strings.Contains(strings.Join(job.Spec.Template.Spec.Containers[0].Args, " "), "--vus") {
		t.Errorf("the ConfigMap's plan:\n%s\nthe pods' args: %q", p, job.Spec.Template.Spec.Containers[0].Args)
	}
	// The pods' volumes, on this machine.
	pod := t.TempDir()
	podFiles(t, cm, job, filepath.Join(pod, "plan"))
	c := job.Spec.Template.Spec.Containers[0]
	var cmds []*exec.Cmd
	for i := range int(*job.Spec.Completions) {
		env := map[string]string{k8s.IndexEnv: fmt.Sprint(i), k8s.StoreEnv: dsn}
		var args []string
		for _, a := range c.Args {
			a = envRef.ReplaceAllStringFunc(a, func(m string) string { return env[envRef.FindStringSubmatch(m)[1]] })
			switch {
			case strings.HasPrefix(a, k8s.PlanDir+"/"):
				a = filepath.Join(pod, "plan", strings.TrimPrefix(a, k8s.PlanDir+"/"))
			case a == k8s.RunsDir:
				a = filepath.Join(pod, fmt.Sprintf("runs-%d", i))
			}
			args = append(args, a)
		}
		cmd := exec.Command(bin, args...)
		cmd.Stderr = &lockedBuilder{b: &strings.Builder{}}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		cmds = append(cmds, cmd)
	}
	codes, errs := wait(cmds)
	for _, c := range codes {
		if c != exitOK {
			t.Fatalf("exit codes %v\n%s", codes, errs)
		}
	}
	// Each user's row once: the pods shared the rows out.
	srv.mu.Lock()
	for i := range 12 {
		if n := srv.seen[fmt.Sprintf("/k/users/u%02d", i)]; n != 1 {
			t.Errorf("user u%02d requested %d times, want once", i, n)
		}
	}
	srv.mu.Unlock()
	st, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(store.Filter{ID: "k8s-1"})
	if err != nil || len(runs) != 1 || runs[0].Status != metrics.StatusCompleted {
		t.Fatalf("the run in the history: %+v %v", runs, err)
	}
	code, shown, _ := runCLI(t, "show", "--store", dsn, "k8s-1")
	if code != exitOK || !strings.Contains(shown, "summary = 12 in") {
		t.Errorf("show:\n%s", shown)
	}
	var merged bytes.Buffer
	for i := range 3 {
		if _, err := os.Stat(filepath.Join(pod, fmt.Sprintf("runs-%d", i), "k8s-1", "summary.json")); err == nil {
			fmt.Fprintf(&merged, "pod %d ", i)
		}
	}
	if merged.Len() == 0 {
		t.Error("no pod wrote the merged run's directory")
	}
}

// hostileName would end the comment line perflab k8s writes and start a
// document of its own, a Pod, which kubectl apply -f - would create.
const hostileName = "x\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: evil}\n"

// A plan named so is refused with its place, and perflab k8s writes
// nothing; the same name from an OpenAPI description's title is made one
// line by perflab convert, and the manifests of the converted plan are a
// ConfigMap and a Job, nothing else.
func TestK8sHostilePlanName(t *testing.T) {
	dir := t.TempDir()
	planPath := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(planPath, []byte("name: "+strconv.Quote(hostileName)+"\ntarget: http://127.0.0.1:1\nscenarios: [{vus: 1, iterations: 1, flow: [{url: /a}]}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "k8s", planPath, "--workers", "2", "--run-id", "r-1")
	if code != exitInvalidPlan || out != "" || !strings.Contains(errs, planPath+`:1:7: name "x\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: evil}\n" holds a line break (U+000A)`) {
		t.Errorf("k8s: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	api := filepath.Join(dir, "api.yaml")
	if err := os.WriteFile(api, []byte("openapi: 3.0.0\ninfo: {title: "+strconv.Quote(hostileName)+", version: '1'}\npaths: {/a: {get: {responses: {'200': {description: ok}}}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	converted := filepath.Join(dir, "converted.yaml")
	code, _, errs = runCLI(t, "convert", "openapi", api, "-o", converted)
	if code != exitOK || !strings.Contains(errs, "its line breaks and control characters, which a name may not hold, are spaces") {
		t.Fatalf("convert: exit %d: %s", code, errs)
	}
	code, out, errs = runCLI(t, "k8s", converted, "--workers", "2", "--run-id", "r-1")
	if code != exitOK {
		t.Fatalf("k8s: exit %d: %s", code, errs)
	}
	cm, job := k8stest.Decode(t, []byte(out))
	const name = "x --- apiVersion: v1 kind: Pod metadata: {name: evil} "
	if job.Annotations["perflab.dev/plan"] != name || job.Labels["perflab.dev/plan"] != "x-----apiVersion-v1-kind-Pod-metadata-name-evil" || cm.Name != "perflab-r-1" {
		t.Errorf("annotations %q labels %q name %s", job.Annotations, job.Labels, cm.Name)
	}
	if first, _, _ := strings.Cut(out, "\n"); first != "# perflab k8s: run r-1 of plan "+name+" on 2 workers" {
		t.Errorf("the comment: %q", first)
	}
	// A label is one line too.
	code, out, errs = runCLI(t, "k8s", converted, "--workers", "2", "--label", "release=R1\n---\nkind: Pod")
	if code != exitUsage || out != "" || !strings.Contains(errs, `label value "R1\n---\nkind: Pod" holds a line break (U+000A)`) {
		t.Errorf("k8s --label: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// So is the image, which is an image reference or refused.
	code, out, errs = runCLI(t, "k8s", converted, "--workers", "2", "--image", "perflab:1\n---\nkind: Pod")
	if code != exitUsage || out != "" || !strings.Contains(errs, `perflab: --image: image "perflab:1\n---\nkind: Pod": not an image reference`) {
		t.Errorf("k8s --image: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	src, err := os.ReadFile(converted)
	if err != nil || cm.Data["plan.yaml"] != string(src) {
		t.Errorf("the ConfigMap's plan: %q", cm.Data["plan.yaml"])
	}
}

// podFiles writes the ConfigMap's files where the pods' volume puts
// them, under dir (the pods' k8s.PlanDir), and returns the path there of
// the plan the pods run.
func podFiles(t *testing.T, cm *corev1.ConfigMap, job *batchv1.Job, dir string) string {
	t.Helper()
	vol := job.Spec.Template.Spec.Volumes[0].ConfigMap
	if vol == nil || vol.Name != cm.Name {
		t.Fatalf("the plan's volume: %+v", job.Spec.Template.Spec.Volumes[0])
	}
	for _, it := range vol.Items {
		data, ok := []byte(cm.Data[it.Key]), true
		if b, bin := cm.BinaryData[it.Key]; bin {
			data = b
		} else if _, ok = cm.Data[it.Key]; !ok {
			t.Fatalf("item %s: no key %s in the ConfigMap", it.Path, it.Key)
		}
		if !filepath.IsLocal(it.Path) {
			t.Fatalf("item path %q is not below the volume", it.Path)
		}
		p := filepath.Join(dir, filepath.FromSlash(it.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("two items at %s", it.Path)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := job.Spec.Template.Spec.Containers[0].Args
	if len(args) < 2 || args[0] != "run" || !strings.HasPrefix(args[1], k8s.PlanDir+"/") {
		t.Fatalf("the pods' args: %q", args)
	}
	return filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(args[1], k8s.PlanDir+"/")))
}

// The ConfigMap carries every file the plan loads: the files it
// includes (in a directory of their own, nested, above the plan's
// directory) and its data files, each where the plan finds it. The pods'
// plan, from the ConfigMap's files alone, loads as the plan did. A file
// named by an absolute path cannot go to the cluster, and is refused.
func TestK8sCarriesIncludes(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"tests/checkout/plan.yaml": `name: checkout
target: http://127.0.0.1:1
include: [frag.yaml, sub/nested.yaml, ../team/auth.yaml]
data:
  users: {csv: data/users.csv}
  regions: {csv: ../team/regions.csv}
scenarios:
  - {name: s, vus: 2, iterations: 1, flow: [{use: login}, {use: nested}, {use: deep}, {use: auth}, {name: u, url: "/${users.id}/${regions.name}"}]}
`,
		"tests/checkout/frag.yaml":       "fragments: {login: [{name: login, url: /login}]}\n",
		"tests/checkout/sub/nested.yaml": "include: [../more/deep.yaml]\nfragments: {nested: [{name: nested, url: /nested}]}\n",
		"tests/checkout/more/deep.yaml":  "fragments: {deep: [{name: deep, url: /deep}]}\n",
		"tests/team/auth.yaml":           "fragments: {auth: [{name: auth, url: /auth}]}\n",
		"tests/checkout/data/users.csv":  "id\nu1\nu2\n",
		"tests/team/regions.csv":         "name\neu\nus\n",
	}
	runtest.WriteTree(t, root, files)
	planPath := filepath.Join(root, "tests/checkout/plan.yaml")
	code, manifests, errs := runCLI(t, "k8s", planPath, "--workers", "2", "--run-id", "inc-1")
	if code != exitOK {
		t.Fatalf("perflab k8s: %d\n%s", code, errs)
	}
	cm, job := k8stest.Decode(t, []byte(manifests))
	want, err := plan.Load(planPath, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The pods' files, the plan's own gone.
	if err := os.RemoveAll(filepath.Join(root, "tests")); err != nil {
		t.Fatal(err)
	}
	podPlan := podFiles(t, cm, job, filepath.Join(t.TempDir(), "plan"))
	got, err := plan.Load(podPlan, plan.Options{})
	if err != nil {
		t.Fatalf("the pods' plan: %v", err)
	}
	if string(got.Source) != string(want.Source) || !slices.Equal(got.Included, want.Included) || len(got.Included) != 4 {
		t.Errorf("the pods' plan's files: %+v, want %+v", got.Included, want.Included)
	}
	if err := got.ReadData(); err != nil {
		t.Fatalf("the pods' data files: %v", err)
	}
	for _, d := range got.Data {
		if len(d.Rows) != 2 {
			t.Errorf("data %s: %d rows", d.Name, len(d.Rows))
		}
	}

	// An absolute path, which the pods do not have.
	abs := filepath.Join(t.TempDir(), "abs.yaml")
	if err := os.WriteFile(abs, []byte("fragments: {a: [{name: a, url: /a}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	planPath = filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(planPath, []byte("target: http://127.0.0.1:1\ninclude: ["+abs+"]\nscenarios: [{vus: 1, iterations: 1, flow: [{use: a}]}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "k8s", planPath, "--workers", "1", "--run-id", "inc-2")
	if code != exitUsage || out != "" || !strings.Contains(errs, abs+": a file the plan reads must be named from the plan's directory to go to the cluster with it") {
		t.Errorf("an absolute include: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

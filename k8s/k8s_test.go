package k8s

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/perflab/perflab/internal/k8stest"
)

// written is the manifests of a run as Write writes them, and as kubectl
// reads them back.
func written(t *testing.T, plan []byte, files []File, o Options) (*bytes.Buffer, *corev1.ConfigMap, *batchv1.Job) {
	t.Helper()
	cm, job, err := Manifests(plan, files, o)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, cm, job); err != nil {
		t.Fatal(err)
	}
	gotCM, gotJob := k8stest.Decode(t, buf.Bytes())
	return &buf, gotCM, gotJob
}

func TestManifests(t *testing.T) {
	plan := []byte("name: p\n")
	bin := []byte{0xff, 0x00, 0x01}
	buf, gotCM, gotJob := written(t, plan, []File{{Path: "data/users.csv", Data: []byte("id\n1\n")}, {Path: "blob.bin", Data: bin}}, Options{
		RunID: "20261126-101010-Checkout.Flow", Workers: 4, Image: "registry.example/perflab:1.2", Namespace: "load",
		SecretName: "perflab-store", SecretKey: "dsn", Args: []string{"--set", "users=40"},
		CPU: "2", Memory: "1Gi", JoinTimeout: 5 * time.Minute, TTL: time.Hour,
	})

	name := "perflab-20261126-101010-checkout-flow"
	if gotCM.Name != name || gotJob.Name != name || gotJob.Namespace != "load" || gotJob.Annotations["perflab.dev/run-id"] != "20261126-101010-Checkout.Flow" {
		t.Errorf("names: %s %s %s %v", gotCM.Name, gotJob.Name, gotJob.Namespace, gotJob.Annotations)
	}
	// The plan and its files, each at its path under the plan's directory.
	if gotCM.Data["plan.yaml"] != string(plan) {
		t.Errorf("plan.yaml: %q", gotCM.Data["plan.yaml"])
	}
	vols := gotJob.Spec.Template.Spec.Volumes
	if len(vols) != 2 || vols[0].ConfigMap == nil || vols[0].ConfigMap.Name != name {
		t.Fatalf("volumes %+v", vols)
	}
	paths := map[string]string{}
	for _, it := range vols[0].ConfigMap.Items {
		paths[it.Path] = it.Key
	}
	if k := paths["data/users.csv"]; gotCM.Data[k] != "id\n1\n" {
		t.Errorf("data/users.csv: key %q: %q", k, gotCM.Data[k])
	}
	if k := paths["blob.bin"]; !bytes.Equal(gotCM.BinaryData[k], bin) {
		t.Errorf("blob.bin: key %q: %v", k, gotCM.BinaryData[k])
	}

	s := gotJob.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 4 || *s.Parallelism != 4 || *s.BackoffLimit != 0 || *s.TTLSecondsAfterFinished != 3600 {
		t.Errorf("job spec: mode %v completions %d parallelism %d backoff %d ttl %d", *s.CompletionMode, *s.Completions, *s.Parallelism, *s.BackoffLimit, *s.TTLSecondsAfterFinished)
	}
	ps := s.Template.Spec
	if ps.RestartPolicy != corev1.RestartPolicyNever || len(ps.Containers) != 1 {
		t.Fatalf("pod: %+v", ps)
	}
	c := ps.Containers[0]
	want := []string{"run", "/plan/plan.yaml", "--segment", "$(JOB_COMPLETION_INDEX)/4", "--run-id", "20261126-101010-Checkout.Flow",
		"--store", "$(PERFLAB_STORE)", "--out", "/runs", "--progress", "plain", "--join-timeout", "5m0s", "--set", "users=40"}
	if !slices.Equal(c.Args, want) || c.Image != "registry.example/perflab:1.2" {
		t.Errorf("args %q image %s", c.Args, c.Image)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if e := env[IndexEnv]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("%s: %+v", IndexEnv, e)
	}
	if e := env[StoreEnv]; e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "perflab-store" || e.ValueFrom.SecretKeyRef.Key != "dsn" {
		t.Errorf("%s: %+v", StoreEnv, e)
	}
	if c.Resources.Requests.Cpu().String() != "2" || c.Resources.Requests.Memory().String() != "1Gi" || c.Resources.Limits.Memory().String() != "1Gi" {
		t.Errorf("resources %+v", c.Resources)
	}
	if strings.Contains(buf.String(), "postgres://") {
		t.Error("the manifests hold a DSN")
	}
	// The decoding is strict: a misspelt field is refused.
	docs := strings.Split(buf.String(), "\n---\n")
	if err := yaml.UnmarshalStrict([]byte(strings.Replace(docs[1], "completionMode:", "completionsMode:", 1)), &batchv1.Job{}); err == nil {
		t.Error("a misspelt field decoded")
	}
}

func TestManifestsRefuse(t *testing.T) {
	ok := Options{RunID: "r", Workers: 2, Image: "i", SecretName: "s", SecretKey: "k"}
	for name, tc := range map[string]struct {
		files []File
		o     func(*Options)
		msg   string
	}{
		"outside":   {files: []File{{Path: "../x.csv"}}, msg: "under the plan's directory"},
		"absolute":  {files: []File{{Path: "/etc/x.csv"}}, msg: "under the plan's directory"},
		"too big":   {files: []File{{Path: "big.csv", Data: make([]byte, 2<<20)}}, msg: "more than a ConfigMap holds"},
		"plan path": {o: func(o *Options) { o.PlanPath = "../plan.yaml" }, msg: "../plan.yaml: a file the plan reads must be under the plan's directory"},
		"no worker": {o: func(o *Options) { o.Workers = 0 }, msg: "at least 1"},
		"bad cpu":   {o: func(o *Options) { o.CPU = "lots" }, msg: "cpu"},
		"namespace": {o: func(o *Options) { o.Namespace = "Load\n---" }, msg: `namespace "Load\n---": a lowercase RFC 1123 label`},
		"secret":    {o: func(o *Options) { o.SecretName = "perflab store" }, msg: `the Secret's name "perflab store"`},
		"key":       {o: func(o *Options) { o.SecretKey = "dsn/x" }, msg: `the Secret's key "dsn/x"`},
		// An image that is not a reference: a line break (the YAML
		// encoder would carry it, and the kubelet refuse the pods), a
		// space, a capital in the repository, an empty tag, a tag of
		// 129 characters, a short digest.
		"image line break": {o: func(o *Options) { o.Image = "perflab:1\n---\nkind: Pod" }, msg: `image "perflab:1\n---\nkind: Pod": not an image reference`},
		"image space":      {o: func(o *Options) { o.Image = "perflab :1" }, msg: `image "perflab :1": not an image reference`},
		"image capital":    {o: func(o *Options) { o.Image = "registry.example/PerfLab:1" }, msg: "not an image reference"},
		"image empty tag":  {o: func(o *Options) { o.Image = "perflab:" }, msg: "not an image reference"},
		"image long tag":   {o: func(o *Options) { o.Image = "perflab:" + strings.Repeat("a", 129) }, msg: "not an image reference"},
		"image digest":     {o: func(o *Options) { o.Image = "perflab@sha256:abc" }, msg: "not an image reference"},
		"image scheme":     {o: func(o *Options) { o.Image = "https://registry.example/perflab:1" }, msg: "not an image reference"},
		"image long name":  {o: func(o *Options) { o.Image = strings.Repeat("a", 256) }, msg: "not an image reference"},
	} {
		o := ok
		if tc.o != nil {
			tc.o(&o)
		}
		if _, _, err := Manifests([]byte("name: p\n"), tc.files, o); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %q", name, err, tc.msg)
		}
	}
}

// A plan whose files climb above its directory is a directory down in the
// pods' (results.PlanLayout): the ConfigMap's item puts it there, and the
// pods run it from there.
func TestManifestsPlanPath(t *testing.T) {
	_, cm, job := written(t, []byte("name: p\n"), []File{{Path: "team/auth.yaml", Data: []byte("fragments: {}\n")}}, Options{
		RunID: "r", Workers: 1, Image: "i", SecretName: "s", SecretKey: "k", PlanPath: "_/plan.yaml"})
	paths := map[string]string{}
	for _, it := range job.Spec.Template.Spec.Volumes[0].ConfigMap.Items {
		paths[it.Path] = it.Key
	}
	if cm.Data[paths["_/plan.yaml"]] != "name: p\n" || cm.Data[paths["team/auth.yaml"]] != "fragments: {}\n" || len(paths) != 2 {
		t.Errorf("items %v", paths)
	}
	if args := job.Spec.Template.Spec.Containers[0].Args; args[1] != "/plan/_/plan.yaml" {
		t.Errorf("args %q", args)
	}
}

// Images as registries name them are taken as they are.
func TestManifestsImages(t *testing.T) {
	for _, image := range []string{
		"perflab",
		"perflab:latest",
		"registry.example/perflab:1.2",
		"registry.example:5000/team/perf-lab_tools/perflab:v1.2.3-rc.1",
		"localhost:5000/perflab",
		"127.0.0.1:5000/perflab:dev",
		"[::1]:5000/perflab:dev",
		"ghcr.io/perflab/perflab@sha256:" + strings.Repeat("0123456789abcdef", 4),
		"ghcr.io/perflab/perflab:1.2@sha256:" + strings.Repeat("0123456789abcdef", 4),
		"perflab:" + strings.Repeat("a", 128),
	} {
		_, _, job := written(t, []byte("name: p\n"), nil, Options{RunID: "r", Workers: 1, Image: image, SecretName: "s", SecretKey: "k"})
		if got := job.Spec.Template.Spec.Containers[0].Image; got != image {
			t.Errorf("image %q: %q", image, got)
		}
	}
}

func TestName(t *testing.T) {
	for id, want := range map[string]string{
		"demo-1":                   "perflab-demo-1",
		"20261126-002705.341-Plan": "perflab-20261126-002705-341-plan",
	} {
		if got := Name(id); got != want {
			t.Errorf("Name(%q) = %q, want %q", id, got, want)
		}
	}
	for _, id := range []string{hostile, "..", "", "-", "ÜBER", strings.Repeat("a-", 40)} {
		if errs := validation.IsDNS1123Label(Name(id)); len(errs) > 0 {
			t.Errorf("Name(%q) = %q: %v", id, Name(id), errs)
		}
	}
	long := Name(strings.Repeat("a", 100))
	if len(long) > 63 || !strings.HasPrefix(long, "perflab-aaa") || long == Name(strings.Repeat("a", 101)) {
		t.Errorf("a long id: %q", long)
	}
}

// hostile would be a document of its own where text is written into YAML
// as it is: a Pod, which kubectl apply would create.
const hostile = "x\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: evil}\n"

// Whatever text the plan, its files and its name hold, the manifests are
// a ConfigMap and a Job, and that text is in them as it was: the pods
// read the files as they were.
func TestManifestsHoldAnyText(t *testing.T) {
	files := map[string]string{
		"plan.yaml": "name: p\n---\napiVersion: v1\nkind: Pod\n...\n",
		"crlf.txt":  "a\r\n---\r\nkind: Pod\r---\rkind: Pod\n",
		"ls.txt":    "a\u2028---\u2029kind: Pod\u2028\n",
		"nel.txt":   "a\u0085--- b\u0085kind: Pod\n", // YAML reads NEL as a line break
		"ctl.txt":   "\x00\x01\x1b[31m\x7f\u0080\u009f",
		"lead.txt":  "\n---\n",
	}
	var list []File
	for _, name := range []string{"crlf.txt", "ls.txt", "nel.txt", "ctl.txt", "lead.txt"} {
		list = append(list, File{Path: name, Data: []byte(files[name])})
	}
	_, gotCM, gotJob := written(t, []byte(files["plan.yaml"]), list, Options{
		RunID: "r-1", Plan: hostile, Workers: 2, Image: "i", SecretName: "s", SecretKey: "k", Args: []string{"--set", "x=" + hostile},
	})
	for _, it := range gotJob.Spec.Template.Spec.Volumes[0].ConfigMap.Items {
		got, ok := gotCM.Data[it.Key]
		if b, bin := gotCM.BinaryData[it.Key]; bin {
			got, ok = string(b), !ok
		}
		if !ok || got != files[it.Path] {
			t.Errorf("%s: %q, want %q", it.Path, got, files[it.Path])
		}
	}
	c := gotJob.Spec.Template.Spec.Containers[0]
	if c.Image != "i" || c.Args[len(c.Args)-1] != "x="+hostile {
		t.Errorf("image %q args %q", c.Image, c.Args)
	}
	for _, meta := range []metav1.ObjectMeta{gotCM.ObjectMeta, gotJob.ObjectMeta} {
		if meta.Annotations["perflab.dev/plan"] != hostile || meta.Labels["perflab.dev/plan"] != "x-----apiVersion-v1-kind-Pod-metadata-name-evil" {
			t.Errorf("%s: annotations %q labels %q", meta.Name, meta.Annotations, meta.Labels)
		}
		for k, v := range meta.Labels {
			if errs := content.IsLabelValue(v); len(errs) > 0 {
				t.Errorf("label %s=%q: %v", k, v, errs)
			}
		}
	}
}

func TestLabelValue(t *testing.T) {
	for s, want := range map[string]string{
		"checkout":                      "checkout",
		"Checkout Flow (v2)":            "Checkout-Flow-v2",
		"-_.x.y_-":                      "x.y",
		"über":                          "ber",
		"":                              "",
		"---":                           "",
		strings.Repeat("a", 62) + "-bc": strings.Repeat("a", 62),
		hostile:                         "x-----apiVersion-v1-kind-Pod-metadata-name-evil",
	} {
		got := LabelValue(s)
		if got != want {
			t.Errorf("LabelValue(%q) = %q, want %q", s, got, want)
		}
		if errs := content.IsLabelValue(got); len(errs) > 0 {
			t.Errorf("LabelValue(%q) = %q: %v", s, got, errs)
		}
	}
}

package k8s

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Decode splits YAML documents and decodes each strictly into the API's
// type for its kind: an unknown or misspelt field, a duplicate key or a
// value of the wrong type is an error, as kubectl apply's server-side
// validation would make it.
func Decode(t *testing.T, b []byte) (*corev1.ConfigMap, *batchv1.Job) {
	t.Helper()
	var cm *corev1.ConfigMap
	var job *batchv1.Job
	for _, doc := range bytes.Split(b, []byte("\n---\n")) {
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatal(err)
		}
		switch head.APIVersion + " " + head.Kind {
		case "v1 ConfigMap":
			cm = &corev1.ConfigMap{}
			if err := yaml.UnmarshalStrict(doc, cm); err != nil {
				t.Fatalf("ConfigMap: %v", err)
			}
		case "batch/v1 Job":
			job = &batchv1.Job{}
			if err := yaml.UnmarshalStrict(doc, job); err != nil {
				t.Fatalf("Job: %v", err)
			}
		default:
			t.Fatalf("unexpected object %q %q:\n%s", head.APIVersion, head.Kind, doc)
		}
	}
	if cm == nil || job == nil {
		t.Fatalf("want a ConfigMap and a Job:\n%s", b)
	}
	return cm, job
}

func TestManifests(t *testing.T) {
	plan := []byte("name: p\n")
	bin := []byte{0xff, 0x00, 0x01}
	cm, job, err := Manifests(plan, []File{{Path: "data/users.csv", Data: []byte("id\n1\n")}, {Path: "blob.bin", Data: bin}}, Options{
		RunID: "20261126-101010-Checkout.Flow", Workers: 4, Image: "registry.example/perflab:1.2", Namespace: "load",
		SecretName: "perflab-store", SecretKey: "dsn", Args: []string{"--set", "users=40"},
		CPU: "2", Memory: "1Gi", JoinTimeout: 5 * time.Minute, TTL: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, cm, job); err != nil {
		t.Fatal(err)
	}
	gotCM, gotJob := Decode(t, buf.Bytes())

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
		"no worker": {o: func(o *Options) { o.Workers = 0 }, msg: "at least 1"},
		"bad cpu":   {o: func(o *Options) { o.CPU = "lots" }, msg: "cpu"},
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

func TestName(t *testing.T) {
	for id, want := range map[string]string{
		"demo-1":                   "perflab-demo-1",
		"20261126-002705.341-Plan": "perflab-20261126-002705-341-plan",
	} {
		if got := Name(id); got != want {
			t.Errorf("Name(%q) = %q, want %q", id, got, want)
		}
	}
	long := Name(strings.Repeat("a", 100))
	if len(long) > 63 || !strings.HasPrefix(long, "perflab-aaa") || long == Name(strings.Repeat("a", 101)) {
		t.Errorf("a long id: %q", long)
	}
}

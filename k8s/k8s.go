// Package k8s builds the Kubernetes objects that run a plan as a
// distributed run on a cluster (perflab k8s): a ConfigMap with the plan
// and its data files, and an Indexed Job whose pods are the run's workers,
// pod i running `perflab run --segment i/N`. The objects are the API's own
// Go types (k8s.io/api), written as YAML for kubectl apply.
//
// The workers meet in the team's PostgreSQL history, whose DSN the pods
// read from a Secret: the manifests name the Secret, never the password.
package k8s

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Options describe a distributed run on a cluster.
type Options struct {
	// RunID is the run's id, shared by its workers.
	RunID string
	// Plan is the plan's name: an annotation as it is, a label as
	// Kubernetes allows (LabelValue).
	Plan string
	// PlanPath is the plan's path in the pods' PlanDir, '/' between
	// names (default plan.yaml): below directories of its own when a
	// file it reads is above its directory (results.PlanLayout).
	PlanPath string
	// Workers is the number of pods (the Job's completions and
	// parallelism), each one worker.
	Workers int
	// Image is perflab's image (the repository's Dockerfile).
	Image     string
	Namespace string
	// SecretName and SecretKey name the Secret entry holding the run
	// history's postgres:// DSN.
	SecretName, SecretKey string
	// Args are more flags for every worker's perflab run (--set,
	// --label).
	Args []string
	// CPU and Memory are each worker's requests (Memory its limit too).
	CPU, Memory string
	// JoinTimeout is how long the workers wait for each other to start
	// (pods are scheduled and pull the image meanwhile).
	JoinTimeout time.Duration
	// TTL is how long the finished Job and its pods stay for kubectl
	// logs (0: until deleted).
	TTL time.Duration
}

// File is a file the plan reads, by the path the plan names it with
// (relative to the plan's directory).
type File struct {
	Path string
	Data []byte
}

// Paths in the workers' pods: the plan and the files it reads in
// PlanDir (the plan as PlanDir/plan.yaml, unless Options.PlanPath says
// otherwise), the run directories in RunsDir.
const (
	PlanDir = "/plan"
	RunsDir = "/runs"
)

// IndexEnv is the pod's completion index, its worker index.
const IndexEnv = "JOB_COMPLETION_INDEX"

// StoreEnv holds the history's DSN, from the Secret.
const StoreEnv = "PERFLAB_STORE"

// MaxConfigMap is what a ConfigMap may hold (1 MiB), less room for its
// metadata.
const MaxConfigMap = 1<<20 - 16<<10

// TooBigForConfigMap says why the plan's files cannot go to the cluster
// in its ConfigMap, and what to do.
const TooBigForConfigMap = "more than a ConfigMap holds (1 MiB): build the data files into an image of your own, or generate them (data: range, glob)"

// Manifests builds the ConfigMap holding the plan and its files, and the
// Job of the run's workers.
func Manifests(plan []byte, files []File, o Options) (*corev1.ConfigMap, *batchv1.Job, error) {
	switch {
	case o.Workers < 1:
		return nil, nil, fmt.Errorf("workers: %d: want at least 1", o.Workers)
	case o.RunID == "":
		return nil, nil, fmt.Errorf("no run id")
	case o.Image == "":
		return nil, nil, fmt.Errorf("no image")
	case o.SecretName == "" || o.SecretKey == "":
		return nil, nil, fmt.Errorf("no Secret for the history's DSN")
	}
	if err := CheckImage(o.Image); err != nil {
		return nil, nil, err
	}
	if o.Namespace != "" {
		if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
			return nil, nil, fmt.Errorf("namespace %q: %s", o.Namespace, strings.Join(errs, "; "))
		}
	}
	if errs := validation.IsDNS1123Subdomain(o.SecretName); len(errs) > 0 {
		return nil, nil, fmt.Errorf("the Secret's name %q: %s", o.SecretName, strings.Join(errs, "; "))
	}
	if errs := validation.IsConfigMapKey(o.SecretKey); len(errs) > 0 {
		return nil, nil, fmt.Errorf("the Secret's key %q: %s", o.SecretKey, strings.Join(errs, "; "))
	}
	name := Name(o.RunID)
	labels := map[string]string{"app.kubernetes.io/name": "perflab", "app.kubernetes.io/component": "worker", "perflab.dev/run": name}
	if v := LabelValue(o.Plan); v != "" {
		labels["perflab.dev/plan"] = v
	}
	annotations := map[string]string{"perflab.dev/run-id": o.RunID}
	if o.Plan != "" {
		annotations["perflab.dev/plan"] = o.Plan
	}
	meta := metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: labels, Annotations: annotations}

	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta,
		Data:       map[string]string{},
	}
	planPath := o.PlanPath
	if planPath == "" {
		planPath = "plan.yaml"
	}
	if _, err := inPlanDir(planPath); err != nil {
		return nil, nil, err
	}
	put(cm, "plan.yaml", plan)
	items := []corev1.KeyToPath{{Key: "plan.yaml", Path: planPath}}
	size := len(plan)
	for i, f := range files {
		rel, err := inPlanDir(f.Path)
		if err != nil {
			return nil, nil, err
		}
		base := keyChars.ReplaceAllString(path.Base(rel), "_")
		key := fmt.Sprintf("file%d-%s", i+1, base[:min(len(base), 200)])
		if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
			return nil, nil, fmt.Errorf("%s: no ConfigMap key for it: %s", f.Path, strings.Join(errs, "; "))
		}
		put(cm, key, f.Data)
		items = append(items, corev1.KeyToPath{Key: key, Path: rel})
		size += len(f.Data)
	}
	if size > MaxConfigMap {
		return nil, nil, fmt.Errorf("the plan and its files are %d KiB, %s", size>>10, TooBigForConfigMap)
	}

	n := int32(o.Workers)
	args := []string{"run", path.Join(PlanDir, planPath),
		"--segment", fmt.Sprintf("$(%s)/%d", IndexEnv, o.Workers),
		"--run-id", o.RunID,
		"--store", "$(" + StoreEnv + ")",
		"--out", RunsDir,
		"--progress", "plain",
	}
	if o.JoinTimeout > 0 {
		args = append(args, "--join-timeout", o.JoinTimeout.String())
	}
	args = append(args, o.Args...)
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	if o.CPU != "" {
		q, err := resource.ParseQuantity(o.CPU)
		if err != nil {
			return nil, nil, fmt.Errorf("cpu %q: %v", o.CPU, err)
		}
		res.Requests[corev1.ResourceCPU] = q
	}
	if o.Memory != "" {
		q, err := resource.ParseQuantity(o.Memory)
		if err != nil {
			return nil, nil, fmt.Errorf("memory %q: %v", o.Memory, err)
		}
		res.Requests[corev1.ResourceMemory] = q
		res.Limits[corev1.ResourceMemory] = q
	}
	no, yes := false, true
	uid := int64(65532) // the image's nonroot user
	grace := int64(120) // an interrupted worker writes its results, the last one merges
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			CompletionMode: ptr(batchv1.IndexedCompletion),
			Completions:    &n,
			Parallelism:    &n,
			// A worker is not retried within a run: its share of the
			// load would start late, out of step with the others.
			BackoffLimit: ptr(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                 corev1.RestartPolicyNever,
					TerminationGracePeriodSeconds: &grace,
					// Workers on different nodes where the cluster can:
					// one node's limits are what a distributed run is
					// for passing.
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
						MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway,
						LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"perflab.dev/run": name}},
					}},
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: &uid, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{
						Name:            "worker",
						Image:           o.Image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Args:            args,
						Env: []corev1.EnvVar{
							{Name: IndexEnv, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
								FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
							{Name: StoreEnv, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
								LocalObjectReference: corev1.LocalObjectReference{Name: o.SecretName}, Key: o.SecretKey}}},
						},
						Resources: res,
						VolumeMounts: []corev1.VolumeMount{
							{Name: "plan", MountPath: PlanDir, ReadOnly: true},
							{Name: "runs", MountPath: RunsDir},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes,
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "plan", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: name}, Items: items}}},
						{Name: "runs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}
	if o.TTL > 0 {
		job.Spec.TTLSecondsAfterFinished = ptr(int32(o.TTL / time.Second))
	}
	return cm, job, nil
}

// imageRef is the grammar of an image reference, NAME[:TAG][@DIGEST], as
// container runtimes parse it (the distribution project's reference
// package): a registry host (a DNS name, or an IPv6 address in brackets)
// and port, a repository path of lower case components, a tag of at most
// 128 word characters, dots and dashes, and a digest ALGORITHM:HEX.
var imageRef = func() *regexp.Regexp {
	const (
		component = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
		host      = `(?:` + component + `(?:\.` + component + `)*|\[[a-fA-F0-9:]+\])`
		path      = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`
		name      = `(?:` + host + `(?::[0-9]+)?/)?` + path + `(?:/` + path + `)*`
		tag       = `[\w][\w.-]{0,127}`
		digest    = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	)
	return regexp.MustCompile(`^(` + name + `)(?::` + tag + `)?(?:@` + digest + `)?$`)
}()

// MaxImageName is the longest name of an image (its registry and
// repository, without tag or digest), as the reference grammar allows.
const MaxImageName = 255

// CheckImage refuses what is not an image reference: the kubelet would
// refuse the pods (InvalidImageName) after kubectl apply had taken the
// manifests, and a line break or a space is no part of one.
func CheckImage(image string) error {
	m := imageRef.FindStringSubmatch(image)
	switch {
	case m == nil:
		return fmt.Errorf("image %q: not an image reference: want [REGISTRY[:PORT]/]REPOSITORY[:TAG][@DIGEST], as registry.example/perflab:1.2 (the repository in lower case, no scheme, space or line break)", image)
	case len(m[1]) > MaxImageName:
		return fmt.Errorf("image %q: not an image reference: its name is %d characters, at most %d", image, len(m[1]), MaxImageName)
	}
	return nil
}

// inPlanDir is a file's path in the pods' PlanDir, cleaned, or the error
// of a path that leads out of it.
func inPlanDir(name string) (string, error) {
	rel := filepath.ToSlash(name)
	if filepath.IsAbs(name) || rel == ".." || strings.HasPrefix(rel, "../") || strings.Contains(rel, "/../") {
		return "", fmt.Errorf("%s: a file the plan reads must be under the plan's directory to go to the cluster with it", name)
	}
	return path.Clean(rel), nil
}

var (
	keyChars   = regexp.MustCompile(`[^-._a-zA-Z0-9]`)
	nameChars  = regexp.MustCompile(`[^a-z0-9-]+`)
	labelChars = regexp.MustCompile(`[^-_.A-Za-z0-9]+`)
)

// Name is the objects' name for a run id: a DNS label (RFC 1123: lower
// case letters, digits and '-', at most 63 characters, as Kubernetes
// requires of a Job's name), "perflab-" and the id, shortened with a hash
// of the id when it is too long.
func Name(runID string) string {
	s := strings.Trim(nameChars.ReplaceAllString(strings.ToLower(runID), "-"), "-")
	name := "perflab-" + s
	if s != "" && len(validation.IsDNS1123Label(name)) == 0 {
		return name
	}
	h := sha256.Sum256([]byte(runID))
	sum := hex.EncodeToString(h[:4])
	return strings.TrimRight(name[:min(len(name), validation.DNS1123LabelMaxLength-9)], "-") + "-" + sum
}

// LabelValue is s as the value of a Kubernetes label: at most 63
// characters, letters, digits, '-', '_' and '.', beginning and ending
// with a letter or a digit; the others made '-', and "" when nothing is
// left.
func LabelValue(s string) string {
	v := labelChars.ReplaceAllString(s, "-")
	v = v[:min(len(v), content.LabelValueMaxLength)]
	v = strings.TrimFunc(v, func(r rune) bool { return r == '-' || r == '_' || r == '.' })
	if len(content.IsLabelValue(v)) > 0 {
		return ""
	}
	return v
}

// put keeps a file in the ConfigMap: as text (data) when YAML carries it
// as it is, else as bytes (binaryData, in base64). YAML holds UTF-8 text
// and no control character but tab, line feed and carriage return: the
// encoder refuses NUL and DEL, and reads NEL (U+0085) back as a line
// break (a space, or the start of a document).
func put(cm *corev1.ConfigMap, key string, b []byte) {
	if utf8.Valid(b) && !bytes.ContainsFunc(b, func(r rune) bool { return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' }) {
		cm.Data[key] = string(b)
		return
	}
	if cm.BinaryData == nil {
		cm.BinaryData = map[string][]byte{}
	}
	cm.BinaryData[key] = b
}

func ptr[T any](v T) *T { return &v }

// Write writes objects as YAML documents, for kubectl apply -f -. Each
// is the YAML encoder's, with the API types' own names and omissions:
// no text put in a field can end the field, or the document.
func Write(w io.Writer, objs ...any) error {
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

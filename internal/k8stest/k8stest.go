// Package k8stest reads what perflab k8s writes as kubectl would.
package k8stest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"

	yamlv3 "gopkg.in/yaml.v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Decode splits a stream of YAML documents as kubectl apply -f - does
// (apimachinery's YAML reader) and decodes each strictly into the API's
// type for its kind: an unknown or misspelt field, a duplicate key or a
// value of the wrong type is an error, as kubectl apply's server-side
// validation would make it. The stream must be one ConfigMap and one Job,
// in that order, and nothing else: as kubectl splits it, and as a YAML
// parser reads it.
func Decode(t testing.TB, b []byte) (*corev1.ConfigMap, *batchv1.Job) {
	t.Helper()
	var cm *corev1.ConfigMap
	var job *batchv1.Job
	var kinds []string
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue // as kubectl passes over an empty document
		}
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatalf("%v:\n%q", err, doc)
		}
		kinds = append(kinds, head.APIVersion+" "+head.Kind)
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
		}
	}
	if len(kinds) != 2 || cm == nil || job == nil {
		t.Fatalf("want a ConfigMap and a Job, got %q:\n%s", kinds, b)
	}
	// A YAML parser's own count of the documents.
	dec := yamlv3.NewDecoder(bytes.NewReader(b))
	n := 0
	for {
		var v yamlv3.Node
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("the stream is not YAML: %v", err)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d YAML documents, want 2:\n%s", n, b)
	}
	return cm, job
}

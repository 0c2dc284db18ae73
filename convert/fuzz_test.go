package convert_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/perflab/perflab/convert"
)

// Any bytes read as a JMeter plan, an OpenAPI description or a HAR file
// give a plan that is YAML, or an error naming the file: never a panic.
func FuzzConvert(f *testing.F) {
	for _, name := range []string{"elements.jmx", "throughput.jmx", "library.yaml", filepath.Join("har", "shop.har")} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(byte(0), string(b))
	}
	f.Add(byte(1), "openapi: 3.0.0\npaths: {/a: {get: {}}}")
	f.Add(byte(2), `{"log": {"entries": []}}`)
	f.Fuzz(func(t *testing.T, kind byte, src string) {
		var res *convert.Result
		var err error
		switch kind % 3 {
		case 0:
			res, err = convert.JMeter(strings.NewReader(src), "f.in")
		case 1:
			res, err = convert.OpenAPI(strings.NewReader(src), "f.in")
		default:
			res, err = convert.HAR(strings.NewReader(src), "f.in", convert.HAROptions{})
		}
		if err != nil {
			if !strings.Contains(err.Error(), "f.in") {
				t.Fatalf("an error without the file: %v", err)
			}
			return
		}
		var v any
		if err := yaml.Unmarshal(res.Plan, &v); err != nil {
			t.Fatalf("the plan is not YAML: %v\n%s", err, res.Plan)
		}
	})
}

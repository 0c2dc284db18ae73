package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// childEnv names, in the environment of a test's process of its own
// (InChild), the test it runs.
const childEnv = "PERFLAB_TEST_CHILD"

// InChild runs the calling test again in a process of its own, and
// reports whether this is that process: for a test that uses up a
// resource of its process (its file descriptors: ExhaustFiles) without
// touching the other tests of the package. In the parent it waits for the
// child, fails t with the child's output if the child failed or did not
// run the test, and returns false: the parent's part is done.
func InChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		return true
	}
	var pattern []string
	for _, part := range strings.Split(t.Name(), "/") {
		pattern = append(pattern, "^"+regexp.QuoteMeta(part)+"$")
	}
	cmd := exec.Command(os.Args[0], "-test.run="+strings.Join(pattern, "/"), "-test.count=1", "-test.v", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil:
		t.Fatalf("the test's own process failed: %v\n%s", err, out)
	case !bytes.Contains(out, []byte("--- PASS: "+t.Name())):
		t.Fatalf("the test's own process did not run it:\n%s", out)
	}
	t.Logf("in a process of its own:\n%s", out)
	return false
}

// Package testenv is the tests' one guard for what a test needs from its
// machine and cannot provide itself (a PostgreSQL server, Chromium, a JDK,
// a real message broker, a writable cgroup): without it the test is
// skipped, saying what is missing, on a developer's machine, and fails
// where the variable CI is set, as .ci/run sets it after installing and
// starting all of them. A test's skip is never silent, and CI never passes
// a test that did not run.
//
// It also gives a test a process of its own (InChild), for a test that
// uses up what its process may hold (its file descriptors: ExhaustFiles)
// without starving the other tests, and a VU's variables as a map (Vars).
package testenv

import (
	"os"
	"testing"
)

// CI reports whether the tests run in CI: the variable CI is set (to
// anything but "false" or "0").
func CI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}

// Missing ends t for want of what why names: a skip, or in CI a failure.
func Missing(t testing.TB, why string) {
	t.Helper()
	if CI() {
		t.Fatal(why + " (CI is set, and .ci/run provides it)")
	}
	t.Skip(why)
}

// Getenv returns the value of the environment variable name, or ends t
// through Missing when it is unset; hint says what sets it.
func Getenv(t testing.TB, name, hint string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		Missing(t, name+" is not set: "+hint)
	}
	return v
}

// Lookup returns the value of the environment variable name for a part of
// t that needs it, and whether it is set: unset, t's log says that part is
// left out, or in CI t fails; hint says what sets it.
func Lookup(t testing.TB, name, hint string) (string, bool) {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if CI() {
			t.Fatalf("%s is not set: %s (CI is set, and .ci/run provides it)", name, hint)
		}
		t.Logf("%s is not set: %s; the part of this test that needs it is left out", name, hint)
	}
	return v, v != ""
}

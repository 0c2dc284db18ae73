package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// The example at a reduced size: both modes complete every operation, and
// the table has a row per operation and thread count.
func TestCPSExample(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), "plan.yaml", t.TempDir(), "5", "[2,10]", &out); err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile(`(?m)^\| (2|10) \| (CREATE ANCHOR|CREATE NODE|UPDATE NODE|DELETE ANCHOR) \|`).FindAllString(out.String(), -1)
	if len(rows) != 8 || strings.Contains(out.String(), "NaN") {
		t.Errorf("table:\n%s", out.String())
	}
}

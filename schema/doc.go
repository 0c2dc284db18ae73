// Package schema holds the JSON Schemas (draft 2020-12) of perflab's two file
// formats: the plan users write (plan.schema.json, for editors' completion and
// checking) and the summary.json every run writes (summary.schema.json).
//
// In VS Code's YAML extension, a plan opts in with a first-line comment:
//
//	# yaml-language-server: $schema=path/to/schema/plan.schema.json
//
// The plan schema checks keys and shapes; the plan loader still gives the
// precise errors (undefined variables, missing files, bad URLs). The tests
// keep both schemas in step with the Go types they describe.
package schema

import _ "embed"

// Plan is plan.schema.json, the JSON Schema of plan files.
//
//go:embed plan.schema.json
var Plan []byte

// Summary is summary.schema.json, the JSON Schema of summary.json.
//
//go:embed summary.schema.json
var Summary []byte

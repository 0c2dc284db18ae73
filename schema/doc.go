// Package schema holds the JSON Schemas of perflab's two file formats: the
// plan users write (plan.schema.json, for editors' completion and checking)
// and the summary.json every run writes (summary.schema.json).
package schema

import _ "embed"

// Plan is the JSON Schema of plan files.
//
//go:embed plan.schema.json
var Plan []byte

// Summary is the JSON Schema of summary.json.
//
//go:embed summary.schema.json
var Summary []byte

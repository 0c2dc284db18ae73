// Package plan is the model of a perflab test plan: it decodes a YAML plan
// with the line and column of every value, validates it before anything is
// sent (unknown fields, wrong types, undefined variables, missing files), and
// expands sweeps into the stages a run executes.
//
// plan imports none of perflab's other packages except the leaf packages
// tmpl (placeholders) and dataset (data sources); the engine reads a *Plan
// and never the YAML.
package plan

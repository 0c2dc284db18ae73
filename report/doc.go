// Package report renders finished runs: the terminal table and JMeter-style
// summary line, summary.json (a stable, documented format; its JSON Schema is
// schema/summary.schema.json), the run directory with HdrHistogram interval
// logs, and live progress lines. It reads metrics results and never drives
// load.
package report

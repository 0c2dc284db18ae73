// Package report draws runs: the terminal tables and the JMeter-style
// summary line, Markdown for wikis, a self-contained HTML page with SVG
// charts, CSV tables, JUnit XML of the thresholds, the live progress line,
// and the printed forms of comparisons, drift and history. Each renderer
// is a function of the run model (package results) or of a judgement
// (package judge) onto an io.Writer; nothing here reads a run directory,
// the history, or judges.
package report

// Package store keeps the history of runs: every run's summary, labels and
// whole HDR histograms (per operation, per stage, per interval), in an
// embedded SQLite file by default, so that any percentile of any run can be
// asked later and runs can be compared across releases.
package store

// Package results is the model of a run's results, and its one home: what
// every view of a run (the command's tables, reports, comparisons, drift,
// the history, a merge of several load generators) loads first.
//
// A Run is a run's summary (summary.json: its stages, each operation's
// figures, thresholds, resources), each operation's HDR histograms per
// interval, kept compressed, and what the monitors sampled, with where it
// came from. It is read from a run directory (ReadDir; a run still going
// or killed is rebuilt from its interval log) or from the run history
// (FromStore), and several partial runs merge into one exactly (Merge).
//
// The package also writes the run directory as a run goes (CreateDir and
// its Writer: run.json, plan.yaml, latency.hlog, intervals.csv, then
// summary.json), builds a summary from the engine's record of a run
// (Summarize), and moves runs between directories and the history (Import,
// Export). Judgements of a run are package judge's; drawing it is package
// report's.
package results

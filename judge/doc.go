// Package judge passes judgement on runs: the plan's thresholds (and those
// marked abort while a stage goes), regressions against baseline runs,
// comparisons of two sets of runs with a statistical verdict, drift over
// a long run, the history of a plan's runs, and whether the load
// generator kept up. Each is a function of the run model (package
// results) that returns results, never text on a writer; the statistics
// themselves are package analyze's, and rendering the verdicts is package
// report's.
package judge

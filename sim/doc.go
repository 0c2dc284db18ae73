// Package sim is perflab's simulator: an HTTP stub server, configured in
// YAML, that stands in for a service under test or for the services it
// depends on. Each route answers with a status, headers and a templated body
// after a latency drawn from a distribution, may inject errors at a given
// ratio, and counts what it saw so a run's numbers can be cross-checked.
package sim

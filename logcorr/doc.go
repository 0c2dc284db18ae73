// Package logcorr correlates the requests perflab sent with the log lines the
// service under test wrote about them, by request id, and reports per
// operation how many requests the logs account for, the processing time the
// service logged, and perflab's end-to-end time for the matched and the
// unmatched requests: what engineers otherwise do with grep and a
// spreadsheet.
//
// # Inputs
//
// The requests come from requests.csv, which perflab writes in the run
// directory for the requests a plan marks for correlation (ReadRequests,
// ReadRequestsFile; WriteRequests writes it):
//
//	operation,id,start_unix_ns,end_unix_ns,ok
//	create-order,ev-17,1714557600000000000,1714557600042000000,true
//
// The logs are Sources: files or globs, and a Pattern that finds records in
// them. A Pattern has one of two shapes:
//
//   - line: one line per processed request, a regex with the named groups
//     (?P<id>...), (?P<start>...) and (?P<end>...), the two timestamps; or
//     (?P<id>...) and (?P<duration>...), the processing time itself, a bare
//     number in duration_unit (ms by default; us, ns, s) or a Go duration
//     with its unit ("12.5ms").
//   - start and end: two regexes, each with (?P<id>...) and (?P<ts>...),
//     for the lines that open and close a request's processing. An end
//     pairs with the oldest pending start of its id, so the lines of
//     concurrent requests may interleave; pairs may span the files of a
//     source.
//
// Timestamps follow time_layout: a Go layout (default RFC3339Nano, which
// also reads RFC3339 with or without a fraction; RFC3339, RFC3339Nano and
// DateTime name Go's constants), or unix, unix_ms, unix_us, unix_ns for
// numbers since the epoch (a fraction allowed, read exactly). location is
// the zone of layouts without one (default Local). With a time-of-day-only
// layout an end before its start has crossed midnight. In YAML:
//
//	files: [logs/audit.log*]
//	line: '^(?P<start>\S+) (?P<end>\S+) event=(?P<id>\S+)'
//	time_layout: "2006-01-02T15:04:05.000Z07:00"
//
// # Rules
//
// Only ids of requests are looked at: a record whose id is no request's (a
// line, or an end line) counts in LogRecordsUnmatched and is not parsed
// further, so a wrong layout shows only on requests' lines; start lines
// are kept only for requests' ids, so memory grows with the number of
// requests, not with the logs. Logs are streamed (lines up to 4 MiB; .gz
// files decompressed) in the order of the sources, then of their files;
// batches of lines are matched on all CPUs and their records applied in
// file order, so results do not depend on scheduling.
//
// A request's first complete record wins (in that order); later records
// for its id count as Duplicates, for retries and redeliveries. Requests
// that share an id take that id's records in turn. An end line with no
// pending start counts in UnpairedEnds, a start never ended in
// UnpairedStarts; neither matches. Lines that match but cannot be read (a
// timestamp that does not parse, an end before its start) count in
// ErrorCount and the first few are described in Errors.
//
// Per operation, Processing summarizes the logged times of the matched
// requests; EndToEndMatched and EndToEndUnmatched perflab's times (end minus
// start) of the matched and the unmatched requests; Overhead end-to-end
// minus processing per matched request. All Stats are in milliseconds,
// percentiles exact by nearest rank.
//
// Correlate fails before reading any log on a bad pattern (a regex that
// does not compile or lacks a required group, a bad layout, unit or
// location), a glob that matches nothing or a file that does not exist, and
// names a file it cannot read. Pattern.Validate checks a pattern alone, for
// a plan's loader.
package logcorr

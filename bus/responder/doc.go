// Package responder is a message-bus simulator: it consumes requests from
// topics, answers those that match its conditions with a templated reply
// after a delay drawn from a latency distribution, and counts what it saw,
// so that a load test's numbers can be checked against the responder's.
//
// # Specification
//
// A Spec is usually decoded from YAML:
//
//	topics: [orders]          # consumed topics (NATS subjects)
//	group: responders         # optional consumer group (Kafka) or queue group (NATS)
//	match:                    # all must hold; none means every message
//	  - {field: json.type, equals: order}
//	  - {field: header.reply-to}           # no equals: the field is present
//	reply:
//	  topic: ${header.reply-to}
//	  key: ${key}
//	  headers: {correlation-id: '${json.id}'}
//	  body: '{"id":"${json.id}","status":"accepted"}'
//	latency:                  # optional, exactly one of:
//	  fixed: 20ms
//	  # uniform: {min: 10ms, max: 30ms}
//	  # normal: {mean: 20ms, stddev: 5ms}   truncated at 0 (negative draws are redrawn)
//	  # lognormal: {p50: 20ms, p99: 120ms}  mu = ln p50, sigma = (ln p99 - ln p50) / 2.3263
//	seed: 1                   # the delays' random generator; the same seed gives the same delays
//	max_pending: 10000        # replies waiting for their delay; at the bound the responder stops consuming
//
// Fields are those of package bus: key, topic, header.NAME and json.PATH (a
// gjson path into the JSON body). A message matches a condition when it has
// the field and, if equals is set, the field's value is equals.
//
// # Reply templates
//
// The reply's topic, key, header values and body are templates: ${FIELD}
// is the value of FIELD in the request, "" when it has none, and
// ${FIELD:-TEXT} is TEXT when it has none. $${ is a literal "${". A
// json.PATH value is inserted as text (a string without its quotes), so a
// JSON string in a body needs quotes around the placeholder:
// "id":"${json.id}". Values are not escaped: one holding a quote or a
// backslash makes such a body invalid JSON.
//
// # Running
//
// Start subscribes before it returns, so requests published after that are
// all seen. Each matched request gets its reply after its delay, replies
// overlapping freely up to max_pending. Stats counts messages received,
// matched, replied, failed and canceled by Close.
package responder

// Package sim is perflab's HTTP simulator: a stub server, configured in YAML,
// that stands in for a service a load test targets or for the services that
// service depends on. `perflab sim stubs.yaml` serves it, and `perflab demo`
// starts it in-process as the demo's target.
//
// Each route answers with a status, headers and a templated body after a
// delay drawn from a latency distribution, may inject failures at a given
// ratio, and counts its requests so that a run's numbers can be checked
// against what the server saw (Server.Stats, Server.Unmatched).
//
// # Configuration
//
//	listen: 127.0.0.1:8080   # default 127.0.0.1:0, a free port; loopback hosts only
//	routes:
//	  - name: create anchor  # default "METHOD PATH"
//	    method: POST         # default GET (which also serves HEAD)
//	    path: /cps/api/v1/dataspaces/{dataspace}/anchors   # net/http ServeMux pattern
//	    status: 201          # default 200
//	    headers: {Content-Type: application/json}
//	    body: '{"anchor":"${query.anchor-name}","ds":"${path.dataspace}"}'
//	    latency:             # optional, exactly one of:
//	      fixed: 2ms
//	      # uniform: {min: 1ms, max: 3ms}
//	      # normal: {mean: 10ms, stddev: 2ms}   truncated at 0 (negative draws are redrawn)
//	      # lognormal: {p50: 20ms, p99: 120ms}  mu = ln p50, sigma = (ln p99 - ln p50) / 2.3263
//	    errors:              # optional injected failures
//	      ratio: 0.01        # probability in [0, 1]; or every: 3, the 3rd, 6th ... request
//	      # after: 8s        # optional: only from after (since the server's start)
//	      # for: 4s          # for this long (an error burst)
//	      status: 500        # default 500
//	      body: injected failure
//	    degrade:             # optional: slower after the server has served a while
//	      after: 2m
//	      # over: 10m        # optional: from the route's latency to this one in a
//	                         # straight line, from after to after + over
//	      latency: {lognormal: {p50: 60ms, p99: 400ms}}
//	      # for: 2s          # optional: back to the route's latency at after + for
//	    stall:               # optional: frozen for 1s at the end of every 10s from
//	      every: 10s         # the start; a request arriving then waits for the end
//	      for: 1s
//
// Unknown fields are errors, reported with their line, as are: a listen
// address that is not loopback, a duplicate method and path, an invalid or
// conflicting pattern (two patterns matching the same requests with neither
// more specific), a status outside 200-599 or a body on 204 and 304, a latency
// with zero or several distributions or with durations not positive and
// ordered, an error ratio outside [0, 1] or with every, a degradation's for not
// longer than its over, a stall not shorter than its
// period, and a body variable that does not exist.
//
// # Body templates
//
// A body is a template of package tmpl, parsed once and expanded per request,
// with these variables:
//
//	${path.NAME}    the path wildcard {NAME} or {NAME...}; NAME must be in the pattern
//	${query.NAME}   the first value of query parameter NAME, "" if absent
//	${header.NAME}  the first value of request header NAME, "" if absent
//	${method}       the request method
//	${path}         the request's URL path
//	${body}         the request body as text (read only when used, up to MaxRequestBody)
//	${route}        the route's name
//	${count}        the route's request number, from 1
//
// ${query.NAME:-10} gives 10 when the parameter is absent (when every use of
// the name has a fallback; otherwise an absent value is ""). $${ is a literal
// "${".
//
// # Serving
//
// A request's delay and failure decision are drawn from a generator seeded
// by the server seed (WithSeed), the route and the request's number on that
// route, so no lock is shared between requests, and with a fixed seed the
// n-th request to a route behaves the same whatever the concurrency. The
// delay comes first, also for injected failures; a client that goes away
// during it gets no response and is counted as Canceled. Requests that no
// route matches, including a known path with another method, get a 404 JSON
// body and are counted by Server.Unmatched. ServeMux's own redirects (a
// missing trailing slash, an unclean path) are counted by neither.
package sim

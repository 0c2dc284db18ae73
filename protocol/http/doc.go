// Package http sends the HTTP request of one plan step and judges its
// response: build the request from templates, send it, read the body fully,
// extract values, run checks, classify failures. It is the hot path of a
// load test, built on github.com/valyala/fasthttp so that a request costs
// little CPU and an idle virtual user holds no buffers.
//
// Requests are never retried: every request perflab counts is one the
// server was sent. A step's request may take several (its redirects
// followed, a digest challenge answered: session.go), each of which the
// result names (Result.Hops), so that each is counted.
package http

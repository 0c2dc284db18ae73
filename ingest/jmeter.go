package ingest

import (
	"strconv"
	"strings"

	"github.com/perflab/perflab/jtl"
	"github.com/perflab/perflab/metrics"
)

// JMeter is a JMeter result file's samples as a Source: labels become
// operations of their thread group, Transaction Controllers' samples
// transactions, and each failure an error kind (KindOf).
func JMeter(r jtl.Reader) Source { return &jmeter{r: r, failed: map[string]metrics.ErrKind{}} }

type jmeter struct {
	r jtl.Reader
	// failed is each thread's first failure since its last transaction:
	// a Transaction Controller's sample comes after its steps', and fails
	// as its first failed step did.
	failed map[string]metrics.ErrKind
}

func (j *jmeter) Next() (Sample, error) {
	s, err := j.r.Next()
	if err != nil {
		return Sample{}, err
	}
	out := Sample{Start: s.Start, Elapsed: s.Elapsed, Scenario: s.Group, Name: s.Label, Kind: metrics.KindStep, Thread: s.Thread, Bytes: s.Bytes}
	if s.Transaction {
		out.Kind = metrics.KindTransaction
		if !s.Success {
			out.Err = metrics.Other
			if k, ok := j.failed[s.Thread]; ok {
				out.Err = k
			}
		}
		delete(j.failed, s.Thread)
		return out, nil
	}
	out.Err = KindOf(s)
	if _, ok := j.failed[s.Thread]; !ok && out.Err != metrics.OK {
		j.failed[s.Thread] = out.Err
	}
	return out, nil
}

// KindOf is the error kind of a JMeter sample: OK when it succeeded; an
// HTTP status kind for a status JMeter did not accept; check_failed for
// an accepted status that an assertion failed; for the exceptions of
// "Non HTTP response code: ...", the kind perflab gives the same failure
// of its own.
func KindOf(s jtl.Sample) metrics.ErrKind {
	if s.Success {
		return metrics.OK
	}
	if code, err := strconv.Atoi(s.Code); err == nil && len(s.Code) == 3 {
		if code >= 400 || code < 200 {
			return metrics.StatusKind(code)
		}
		return metrics.CheckFailed
	}
	msg := s.Code + " " + s.Message
	has := func(subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(msg, sub) {
				return true
			}
		}
		return false
	}
	switch {
	case !strings.HasPrefix(s.Code, "Non HTTP response code"):
		// Another sampler's code ("0", a JDBC error): its assertion or
		// its own failure.
		if s.Failure != "" {
			return metrics.CheckFailed
		}
		return metrics.Other
	case has("UnknownHostException"):
		return metrics.DNS
	case has("javax.net.ssl", "SSLException", "SSLHandshakeException"):
		return metrics.TLS
	case has("ConnectTimeoutException", "connect timed out", "Connect timed out", "NoRouteToHostException"):
		return metrics.Connect
	case has("SocketTimeoutException", "Read timed out", "TimeoutException"):
		return metrics.Timeout
	case has("Connection refused", "ConnectException"):
		return metrics.ConnRefused
	case has("Connection reset"):
		return metrics.ConnReset
	case has("Broken pipe"):
		return metrics.Write
	case has("NoHttpResponseException", "failed to respond", "MalformedChunkCodingException", "ConnectionClosedException", "TruncatedChunkException"):
		return metrics.Read
	case has("IllegalArgumentException", "URISyntaxException", "MalformedURLException", "IllegalStateException"):
		return metrics.NotSent
	}
	return metrics.Other
}

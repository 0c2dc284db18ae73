package metrics

import "cmp"

// Failures are s's failures by kind and message, as Messages.List gives
// them, with, for each kind whose failures were not all counted with their
// words (a transaction's and a scenario's, whose failures are their
// steps'; a result recorded without them), the rest as an entry without a
// message: the entries of a kind add up to its errors (Errors). Nil when
// none failed. It reads what recording has already counted, once per
// finished interval: nothing is added to recording itself.
func (s *Stats) Failures() []ErrorMessage {
	var listed [NumErrKinds]int64
	list := s.Messages.List()
	for _, e := range list {
		if k, ok := ParseErrKind(e.Kind); ok {
			listed[k] += e.Count
		}
	}
	var out []ErrorMessage
	i := 0
	for k := ErrKind(1); k < numErrKinds; k++ {
		for ; i < len(list) && list[i].Kind == k.String(); i++ {
			out = append(out, list[i])
		}
		if rest := s.Errors[k] - listed[k]; rest > 0 {
			out = append(out, ErrorMessage{Kind: k.String(), Count: rest})
		}
	}
	return append(out, list[i:]...)
}

// MergeFailures adds the counts of b into a (Stats.Failures of two
// intervals, or of two runs' same interval), entry by entry of the same
// kind, message and other mark, and returns a: b's new entries follow a's,
// in b's order.
func MergeFailures(a, b []ErrorMessage) []ErrorMessage {
	for _, e := range b {
		found := false
		for i := range a {
			if a[i].Kind == e.Kind && a[i].Message == e.Message && a[i].Other == e.Other {
				a[i].Count += e.Count
				found = true
				break
			}
		}
		if !found {
			a = append(a, e)
		}
	}
	return a
}

// FailuresByKind are the failures' counts by kind (their kind's name),
// every message together.
func FailuresByKind(fs []ErrorMessage) map[string]int64 {
	out := map[string]int64{}
	for _, e := range fs {
		out[e.Kind] += e.Count
	}
	return out
}

// CompareKinds orders error kinds by name as the kinds' order (http_1xx
// before timeout), unknown names last, by name.
func CompareKinds(a, b string) int {
	ka, oka := ParseErrKind(a)
	kb, okb := ParseErrKind(b)
	switch {
	case oka && okb:
		return cmp.Compare(ka, kb)
	case oka != okb:
		if oka {
			return -1
		}
		return 1
	}
	return cmp.Compare(a, b)
}

// Written for perflab's comparison test (convert/compare_test.go) in place
// of FOLIO's script of this name, which its repository does not publish:
// FOLIO's picks check-in or check-out at random, by the percentages of its
// parameter; this one picks check-in every time, so that the requests are
// known (the converted plan is given goto_check_io=checkin). It sets what
// FOLIO's does: distribution (0 checks in, 1 checks out) and isFailed,
// which the sampler's assertion reads.
vars.put("distribution", "0")
vars.put("isFailed", "false")

// Written for perflab's comparison test (convert/compare_test.go) in place
// of FOLIO's script of this name, which its repository does not publish:
// FOLIO's picks check-in or check-out at random, by the percentages of its
// parameter; this one alternates, check-in first, so that both branches
// run in a known order. It sets what FOLIO's does: distribution (0 checks
// in, 1 checks out) and isFailed, which the sampler's assertion reads.
def n = (vars.get("branchCalls") ?: "0") as int
vars.put("branchCalls", String.valueOf(n + 1))
vars.put("distribution", String.valueOf(n % 2))
vars.put("isFailed", "false")

package results

import "fmt"

// Ms formats milliseconds with precision that suits their size: the form
// of every duration perflab prints, in tables and in the sentences of its
// judgements.
func Ms(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v < 10:
		return fmt.Sprintf("%.3f", v)
	case v < 1000:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// Human formats milliseconds as the reports the examples reproduce do: ms
// below a second, s above.
func Human(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.1f s", ms/1000)
	}
	return Ms(ms) + " ms"
}

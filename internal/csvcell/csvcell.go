// Package csvcell keeps the text perflab writes into CSV files from being
// read as formulas by the spreadsheets that open them (CSV injection).
//
// A spreadsheet takes a cell beginning with =, +, -, @, a tab or a
// carriage return as a formula; a step, scenario, monitor or metric name,
// or an id a service returned, may begin so. Such a text cell is written
// with a single quote before it, OWASP's rule, which spreadsheets show as
// text. Numbers (-3.5, +1e3) are no formulas and are left as they are, so
// only the text columns go through Escape, never the numeric ones.
//
// perflab reads its own CSV files back (intervals.csv, resources.csv,
// requests.csv): Unescape gives back the text Escape was given, whatever
// it was. A text beginning with a single quote followed by what Escape
// quotes is quoted once more, so the two are each other's inverse, and a
// file written before perflab escaped reads as it was, but for a text
// beginning with such a quote.
package csvcell

import "strconv"

// Escape is text as a CSV cell.
func Escape(text string) string {
	if quoted(text) {
		return "'" + text
	}
	return text
}

// Unescape is the text of a cell Escape wrote.
func Unescape(cell string) string {
	if len(cell) > 0 && cell[0] == '\'' && quoted(cell[1:]) {
		return cell[1:]
	}
	return cell
}

// quoted reports whether Escape puts a quote before s: it begins as a
// formula does, or with a quote followed by what Escape quotes.
func quoted(s string) bool {
	if s == "" {
		return false
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	case '\'':
		return quoted(s[1:])
	}
	return false
}

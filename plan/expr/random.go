package expr

import "unicode/utf8"

// alphanumerics are randomString's characters when it is given none.
const alphanumerics = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// RandomString makes randomString of an Env from a source of random
// numbers in [0, n) (a VU's).
func RandomString(intN func(n int) int) func(int, ...string) string {
	return func(n int, chars ...string) string {
		set := alphanumerics
		if len(chars) > 0 && chars[0] != "" {
			set = chars[0]
		}
		runes := []rune(set)
		if n <= 0 || len(runes) == 0 {
			return ""
		}
		b := make([]byte, 0, n*utf8.UTFMax)
		for range min(n, 1<<20) {
			b = utf8.AppendRune(b, runes[intN(len(runes))])
		}
		return string(b)
	}
}

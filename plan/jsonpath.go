package plan

import (
	"fmt"
	"strings"
)

// GJSONPath converts a JSON path as users write it ($.items[0].id,
// $['odd.key'].x) into the path syntax of github.com/tidwall/gjson, which the
// HTTP protocol uses to read bodies without decoding them. A path without a
// leading $ is taken to be gjson syntax already.
func GJSONPath(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty JSON path")
	}
	if p[0] != '$' {
		return p, nil
	}
	if p == "$" {
		return "@this", nil
	}
	var segs []string
	i := 1
	for i < len(p) {
		switch p[i] {
		case '.':
			j := i + 1
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			if j == i+1 {
				return "", fmt.Errorf("JSON path %q: empty name at offset %d", p, i)
			}
			segs = append(segs, escapeGJSON(p[i+1:j]))
			i = j
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return "", fmt.Errorf("JSON path %q: missing ] after offset %d", p, i)
			}
			inner := p[i+1 : i+end]
			switch {
			case inner == "*":
				segs = append(segs, "#")
			case len(inner) == 2 && (inner[0] == '\'' || inner[0] == '"') && inner[1] == inner[0]:
				// gjson has no path for an empty key, and an empty path
				// would leave the extraction without a rule.
				return "", fmt.Errorf("JSON path %q: empty name at offset %d", p, i)
			case len(inner) >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0]:
				segs = append(segs, escapeGJSON(inner[1:len(inner)-1]))
			case inner != "" && strings.Trim(inner, "0123456789") == "":
				segs = append(segs, inner)
			default:
				return "", fmt.Errorf("JSON path %q: want [number], [*] or ['name'], got [%s]", p, inner)
			}
			i += end + 1
		default:
			return "", fmt.Errorf("JSON path %q: want . or [ at offset %d", p, i)
		}
	}
	return strings.Join(segs, "."), nil
}

func escapeGJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '.', '*', '?', '|', '#', '@', '\\', '!', '=', '<', '>', '%':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

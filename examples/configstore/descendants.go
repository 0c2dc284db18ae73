package configstore

import (
	"fmt"
	"strconv"
)

// Descendants is how deep below a node a read goes: 0 for the node's own
// leaves, 1 for its children too, and so on; All for the whole subtree.
type Descendants int

// The named depths of CPS's descendants parameter.
const (
	None   Descendants = 0
	Direct Descendants = 1
	All    Descendants = -1
)

// ParseDescendants parses "none", "direct", "all" or a depth (-1 means all).
func ParseDescendants(s string) (Descendants, error) {
	switch s {
	case "none":
		return None, nil
	case "direct":
		return Direct, nil
	case "all":
		return All, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < -1 {
		return None, fmt.Errorf("%w: descendants %q: want none, direct, all or a depth", ErrBadInput, s)
	}
	return Descendants(n), nil
}

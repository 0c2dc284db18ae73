package testenv

// Vars are a VU's variables as a map, for a step run by a test
// (protocol/http's Vars: Lookup and Set).
type Vars map[string]string

// Lookup returns a variable's value.
func (v Vars) Lookup(name string) (string, bool) { s, ok := v[name]; return s, ok }

// Set sets a variable.
func (v Vars) Set(name, value string) { v[name] = value }

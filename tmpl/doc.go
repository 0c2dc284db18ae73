// Package tmpl expands the ${name} placeholders of plan strings: URLs, headers,
// bodies and simulator responses. A template is parsed once, when the plan is
// loaded, and expanded on every request without re-parsing.
//
// Syntax:
//
//	${name}            value of name; names may be dotted: ${users.login}, ${env.HOME}
//	${name:-fallback}  fallback when name is undefined
//	$${                a literal "${"
package tmpl

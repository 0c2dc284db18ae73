// Package configstore is a small configuration store modelled on ONAP CPS
// (configuration persistence service), written so that perflab's examples can
// load-test a real service with real data-size effects.
//
// Dataspaces hold anchors; each anchor holds one JSON data tree. The tree is
// split into data nodes: every JSON object is a container node, every entry of
// a JSON array of objects is a list-entry node, and every other member
// (string, number, boolean, null or array of those) is a leaf of the node
// that holds it. A list entry's key is its first member, which must be a
// leaf; the entry is addressed by that key, as in YANG's key-first encoding.
//
// Nodes are addressed by XPath-like paths:
//
//	/                                           the root (all top-level nodes)
//	/bookstore                                  a container
//	/bookstore/categories[@code='01']           a list entry, by its key
//	/network/nodes[@node-id='n7']/location
//
// Queries ("cps-path") select nodes anywhere in the tree:
//
//	//nodes[@status='up']                       any "nodes" entry whose leaf status is up
//	/network/nodes/termination-points[@tp-id='tp3']
//	//nodes[@vendor='acme' and @status='down']/location
//
// The grammar, for both:
//
//	path      = "/" | ( "/" step )+
//	query     = ( "/" | "//" ) step ( "/" step )*
//	step      = name [ "[" condition ( "and" condition )* "]" ]
//	condition = "@" name "=" ( "'" text "'" | '"' text '"' | number )
//	name      = [A-Za-z_] [A-Za-z0-9_.:-]*
//
// A module prefix in a step name ("ietf-network:networks") is ignored, as CPS
// does, so paths name nodes without it. In a node path a predicate must give
// the entry's key; in a query, conditions may test any leaf (a leaf-list
// matches if any of its values does). "//" is only allowed at the start of a
// query. Functions, wildcards, axes and "or" are rejected with ErrBadInput.
//
// Two storages sit behind the same Store: NewMemory keeps the trees in
// memory; OpenSQLite keeps one row per node in SQLite. In both, a "//" query
// examines every candidate node, so it costs more as the data grows, and
// NodesVisited counts that work.
package configstore

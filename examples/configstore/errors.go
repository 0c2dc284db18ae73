package configstore

import (
	"errors"
	"fmt"
)

// Errors returned by Store, wrapped with details; test them with errors.Is.
var (
	// ErrNotFound: the dataspace, anchor or node does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists: the dataspace, anchor or node already exists.
	ErrExists = errors.New("already exists")
	// ErrBadInput: a malformed name, path, query, parameter or JSON body.
	ErrBadInput = errors.New("bad input")
)

func dataspaceNotFound(ds string) error { return fmt.Errorf("dataspace %q: %w", ds, ErrNotFound) }

func anchorNotFound(a anchorRef) error {
	return fmt.Errorf("anchor %q in dataspace %q: %w", a.anchor, a.dataspace, ErrNotFound)
}

func nodeNotFound(xpath string) error { return fmt.Errorf("node %s: %w", xpath, ErrNotFound) }

func nodeExists(xpath string) error { return fmt.Errorf("node %s: %w", xpath, ErrExists) }

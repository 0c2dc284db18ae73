// Package linestest makes the long lines the readers of result files
// must refuse, without the memory they would take.
package linestest

import (
	"io"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/lines"
)

// Endless reads as Head, then N bytes of C, then Tail, counting in Given
// what was read: a 300 MB line costs a test nothing.
type Endless struct {
	Head, Tail string
	C          byte
	N, Given   int64
}

func (e *Endless) Read(p []byte) (int, error) {
	i := 0
	for ; i < len(p); i++ {
		switch at := e.Given; {
		case at < int64(len(e.Head)):
			p[i] = e.Head[at]
		case at < int64(len(e.Head))+e.N:
			p[i] = e.C
		case at < int64(len(e.Head))+e.N+int64(len(e.Tail)):
			p[i] = e.Tail[at-int64(len(e.Head))-e.N]
		default:
			if i == 0 {
				return 0, io.EOF
			}
			return i, nil
		}
		e.Given++
	}
	return i, nil
}

// Refused checks that reading e through next (a reader's Next) ends in
// an error starting with want, once about lines.MaxLine (16 MiB) of it
// is read: a reader that read a long line whole would read it all.
func Refused(t testing.TB, name string, e *Endless, next func() error, want string) {
	t.Helper()
	err := next()
	for err == nil {
		err = next()
	}
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("%s: %v, want %q", name, err, want)
	}
	if e.Given > lines.MaxLine+4<<20 {
		t.Errorf("%s: read %d MiB, want about %d", name, e.Given>>20, lines.MaxLine>>20)
	}
}

// Package inputfile opens the files a user names (a plan, the files a
// plan names, another tool's files) for reading in bounded memory: only
// regular files (a device such as /dev/zero, a directory, a named pipe is
// refused before anything is read, saying what it is), and no more than
// a limit of bytes, however the file grows while it is read.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
)

// TooBigError is a file over its limit.
type TooBigError struct {
	Name string
	// Size is the file's size, or -1 where it is not known (a stream
	// read one byte past the limit).
	Size int64
	Max  int64
	// Why says what the limit is and why there is one (Explain).
	Why string
}

func (e *TooBigError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("%s is %s: %s", e.Name, e.What(), e.Why)
	}
	return fmt.Sprintf("%s is %s: the limit is %s", e.Name, e.What(), FormatSize(e.Max))
}

// Explain gives a *TooBigError in err the reason of its limit, said in
// its message after the file's size ("a CA file may be 4 MiB"); other
// errors are returned as they are.
func Explain(err error, why string) error {
	var tb *TooBigError
	if errors.As(err, &tb) {
		e := *tb
		e.Why = why
		return &e
	}
	return err
}

// What is the size as it reads in a message: "47.7 MiB (50000116 bytes)",
// or "over the limit" where it is not known.
func (e *TooBigError) What() string {
	if e.Size < 0 {
		return "over the limit"
	}
	return fmt.Sprintf("%.1f MiB (%d bytes)", float64(e.Size)/(1<<20), e.Size)
}

// NotRegularError is a file that is not a regular file.
type NotRegularError struct {
	Name string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Name, kind(e.Mode))
}

// kind names what a file that is not a regular one is.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a file perflab reads (" + m.Type().String() + ")"
}

// Stat is the file's information (through symbolic links) if it is a
// regular file, else a *NotRegularError; nothing is opened.
func Stat(name string) (fs.FileInfo, error) {
	fi, err := stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Name: name, Mode: fi.Mode()}
	}
	return fi, nil
}

// stat is os.Stat, its errors said as opening's ("open x: no such file
// or directory"): the file is looked at to be opened.
func stat(name string) (fs.FileInfo, error) {
	fi, err := os.Stat(name)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		pe.Op = "open"
	}
	return fi, err
}

// Open opens a regular file for reading; anything else is refused
// unopened (opening a named pipe would wait for a writer). The file is
// checked again once open, in case it was replaced between.
func Open(name string) (*os.File, error) {
	if _, err := Stat(name); err != nil {
		return nil, err
	}
	return open(name, false)
}

// OpenStream opens a regular file or a named pipe (a plan or a result
// file given on the command line as <(...) or /dev/stdin, read as a
// stream within a limit); a directory, a device or a socket is refused
// unopened.
func OpenStream(name string) (*os.File, error) {
	fi, err := stat(name)
	if err != nil {
		return nil, err
	}
	if m := fi.Mode(); !m.IsRegular() && m&fs.ModeNamedPipe == 0 {
		return nil, &NotRegularError{Name: name, Mode: m}
	}
	return open(name, true)
}

func open(name string, pipes bool) (*os.File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if m := fi.Mode(); !m.IsRegular() && !(pipes && m&fs.ModeNamedPipe != 0) {
		f.Close()
		return nil, &NotRegularError{Name: name, Mode: m}
	}
	return f, nil
}

// ReadFile reads a regular file of at most max bytes. A file whose size
// is over max is refused unread (*TooBigError); one that grows past max
// while it is read is refused once max+1 bytes are read.
func ReadFile(name string, max int64) ([]byte, error) { return read(Open, name, max) }

// ReadStream reads a regular file or a named pipe (OpenStream) of at
// most max bytes.
func ReadStream(name string, max int64) ([]byte, error) { return read(OpenStream, name, max) }

func read(open func(string) (*os.File, error), name string, max int64) ([]byte, error) {
	f, err := open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > max {
		return nil, &TooBigError{Name: name, Size: fi.Size(), Max: max}
	}
	return io.ReadAll(Limit(f, name, max))
}

// OpenLimit opens a regular file of at most max bytes, to be read as a
// stream: a file over max is refused unopened, one that grows past max
// as it is read fails once max+1 bytes are read. why says what the limit
// is and why there is one, in either's *TooBigError (Explain).
func OpenLimit(name string, max int64, why string) (io.ReadCloser, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		f.Close()
		return nil, &TooBigError{Name: name, Size: fi.Size(), Max: max, Why: why}
	}
	return struct {
		io.Reader
		io.Closer
	}{&limited{r: f, name: name, left: max, max: max, why: why}, f}, nil
}

// Limit reads r, failing with a *TooBigError (of name) once it has given
// max bytes and there are more: unlike io.LimitReader, a stream over the
// limit is an error, not a stream cut short.
func Limit(r io.Reader, name string, max int64) io.Reader {
	return &limited{r: r, name: name, left: max, max: max}
}

type limited struct {
	r         io.Reader
	name, why string
	left      int64 // bytes it may still give
	max       int64
	over      bool
}

func (l *limited) Read(p []byte) (int, error) {
	if l.over {
		return 0, &TooBigError{Name: l.name, Size: -1, Max: l.max, Why: l.why}
	}
	if int64(len(p)) > l.left+1 { // one byte more tells a stream over the limit
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	if int64(n) > l.left {
		l.over = true
		n, l.left = int(l.left), 0
		return n, &TooBigError{Name: l.name, Size: -1, Max: l.max, Why: l.why}
	}
	l.left -= int64(n)
	return n, err
}

// FormatSize is a limit as messages and the documentation say it: 4 MiB,
// 64 KiB, 1 GiB, 10 bytes.
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

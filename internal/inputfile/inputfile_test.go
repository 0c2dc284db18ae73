package inputfile

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Every kind of file that is not a regular one is refused before a byte
// is read, naming the file and what it is: /dev/zero would never end, a
// named pipe would wait for a writer.
func TestNotRegularRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	link := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, want string }{
		{"/dev/zero", "/dev/zero is a character device, not a regular file"},
		{link, link + " is a character device, not a regular file"}, // through a link
		{dir, dir + " is a directory, not a regular file"},
		{fifo, fifo + " is a named pipe (FIFO), not a regular file"},
		{sock, sock + " is a socket, not a regular file"},
	} {
		_, err := ReadFile(c.name, 1<<20)
		var nr *NotRegularError
		if !errors.As(err, &nr) || err.Error() != c.want {
			t.Errorf("ReadFile(%s): %v, want %q", c.name, err, c.want)
		}
		if f, err := Open(c.name); err == nil || err.Error() != c.want {
			f.Close()
			t.Errorf("Open(%s): %v", c.name, err)
		}
	}
	// A stream may be a named pipe, never a device or a directory.
	for _, name := range []string{"/dev/zero", dir, sock} {
		if _, err := ReadStream(name, 1<<20); !errors.As(err, new(*NotRegularError)) {
			t.Errorf("ReadStream(%s): %v", name, err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "none"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

// A file over the limit is refused by its size, unread (a sparse file of
// 1 GiB costs nothing); one at the limit is read whole.
func TestSizeLimit(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 1<<30); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(big, 4<<20)
	var tb *TooBigError
	if !errors.As(err, &tb) || err.Error() != big+" is 1024.0 MiB (1073741824 bytes): the limit is 4 MiB" {
		t.Errorf("got %v", err)
	}
	exact := filepath.Join(dir, "exact")
	if err := os.WriteFile(exact, []byte(strings.Repeat("x", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(exact, 1000); err != nil || len(b) != 1000 {
		t.Errorf("at the limit: %d bytes, %v", len(b), err)
	}
	if _, err := ReadFile(exact, 999); !errors.As(err, &tb) || tb.Size != 1000 {
		t.Errorf("a byte over: %v", err)
	}
}

// A named pipe read as a stream is read up to its limit and refused one
// byte past it: what it sends cannot make the reader hold more.
func TestStreamLimit(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "plan.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(n int) {
		go func() {
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			defer w.Close()
			w.Write([]byte(strings.Repeat("y", n)))
		}()
	}
	write(4096)
	if b, err := ReadStream(fifo, 4096); err != nil || len(b) != 4096 {
		t.Errorf("at the limit: %d bytes, %v", len(b), err)
	}
	write(1 << 20)
	_, err := ReadStream(fifo, 4096)
	if err == nil || err.Error() != fifo+" is over the limit: the limit is 4 KiB" {
		t.Errorf("over: %v", err)
	}
}

// Limit gives a stream's bytes up to the limit, and an error instead of
// the byte past it, however the reads are cut.
func TestLimit(t *testing.T) {
	for _, size := range []int{0, 1, 9, 10} {
		b, err := io.ReadAll(Limit(strings.NewReader(strings.Repeat("z", size)), "s", 10))
		if err != nil || len(b) != size {
			t.Errorf("%d bytes: got %d, %v", size, len(b), err)
		}
	}
	r := Limit(strings.NewReader(strings.Repeat("z", 11)), "s", 10)
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if len(b) != 10 || err == nil || err.Error() != "s is over the limit: the limit is 10 bytes" {
		t.Errorf("11 bytes: got %d, %v", len(b), err)
	}
	if _, err := r.Read(make([]byte, 4)); err == nil {
		t.Error("read on after the error")
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{4 << 20: "4 MiB", 64 << 10: "64 KiB", 1 << 30: "1 GiB", 1000: "1000 bytes", 1536 << 10: "1536 KiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

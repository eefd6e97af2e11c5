package cacheread

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// content writes n pseudo-random bytes to a new file and returns them and
// the file, opened for reading and read once, so that the page cache holds
// it.
func content(t *testing.T, n int) ([]byte, *os.File) {
	t.Helper()
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := io.Copy(io.Discard, f); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	return b, f
}

// ranges are offsets and lengths to read at: within the file, across
// its end, at its end, past it, empty.
func ranges(size int) [][2]int {
	return [][2]int{
		{0, 1}, {0, 4096}, {1, 4095}, {4095, 2}, {0, size}, {7, size - 7},
		{size - 100, 100}, {size - 100, 200}, {size, 10}, {size + 5, 10},
		{size / 2, 0}, {12345, 256 << 10},
	}
}

func TestReadAt(t *testing.T) {
	want, f := content(t, 1<<20+12345)
	for _, plain := range []bool{false, true} {
		c := mustNew(t, f)
		c.plain.Store(plain || c.plain.Load())
		for _, r := range ranges(len(want)) {
			off, n := r[0], r[1]
			got := make([]byte, n)
			k, err := c.ReadAt(got, int64(off))
			// os.File's answer is the one to give.
			wk, werr := f.ReadAt(make([]byte, n), int64(off))
			if k != wk || err != werr { // nil or io.EOF, both
				t.Errorf("plain %v: ReadAt(%d bytes, %d) = %d, %v; os.File: %d, %v", plain, n, off, k, err, wk, werr)
			}
			if end := min(off+k, len(want)); k > 0 && !bytes.Equal(got[:k], want[off:end]) {
				t.Errorf("plain %v: ReadAt(%d bytes, %d): wrong bytes", plain, n, off)
			}
		}
	}
}

func TestReadAtNegativeOffset(t *testing.T) {
	_, f := content(t, 100)
	if n, err := mustNew(t, f).ReadAt(make([]byte, 10), -1); n != 0 || err == nil {
		t.Fatalf("ReadAt at -1 = %d, %v; want an error", n, err)
	}
}

// TestRead reads the file in pieces of several sizes and checks each
// piece and the File's offset after it; then Seek from each whence, and
// reads from there. The descriptor's own offset stays where it was.
func TestRead(t *testing.T) {
	want, f := content(t, 3<<20+777)
	for _, plain := range []bool{false, true} {
		c := mustNew(t, f)
		c.plain.Store(plain || c.plain.Load())
		var got []byte
		sizes := []int{1, 4096, 100_000, 1 << 20, 17}
		for i := 0; ; i++ {
			p := make([]byte, sizes[i%len(sizes)])
			n, err := c.Read(p)
			got = append(got, p[:n]...)
			if err == io.EOF {
				if n != 0 {
					t.Fatalf("plain %v: Read returned %d bytes with io.EOF", plain, n)
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if pos, _ := c.Seek(0, io.SeekCurrent); pos != int64(len(got)) {
				t.Fatalf("plain %v: offset %d after reading %d bytes", plain, pos, len(got))
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("plain %v: read %d bytes, not the file's %d", plain, len(got), len(want))
		}
		if n, err := c.Read(nil); n != 0 || err != nil {
			t.Fatalf("Read(nil) = %d, %v", n, err)
		}
		if pos, _ := f.Seek(0, io.SeekCurrent); pos != 0 {
			t.Fatalf("plain %v: the descriptor's offset moved to %d", plain, pos)
		}
		for _, sk := range []struct {
			off    int64
			whence int
			at     int
		}{
			{-100, io.SeekEnd, len(want) - 100},
			{5000, io.SeekStart, 5000},
			{-4000, io.SeekCurrent, 5000 + 200 - 4000}, // after the 200 bytes read from 5000
		} {
			pos, err := c.Seek(sk.off, sk.whence)
			if err != nil || pos != int64(sk.at) {
				t.Fatalf("plain %v: Seek(%d, %d) = %d, %v; want %d", plain, sk.off, sk.whence, pos, err, sk.at)
			}
			p := make([]byte, 200)
			n, err := io.ReadFull(c, p)
			wantN := min(200, len(want)-sk.at)
			if n != wantN || !bytes.Equal(p[:n], want[sk.at:sk.at+n]) || (n < 200) != (err == io.ErrUnexpectedEOF) {
				t.Fatalf("plain %v: after Seek to %d: %d, %v", plain, sk.at, n, err)
			}
		}
		if _, err := c.Seek(-1, io.SeekStart); err == nil {
			t.Error("Seek to -1: no error")
		}
		if _, err := c.Seek(0, 7); err == nil {
			t.Error("Seek with whence 7: no error")
		}
	}
}

// TestNewAtOffset: a File reads from where the descriptor was when New
// made it.
func TestNewAtOffset(t *testing.T) {
	want, f := content(t, 10_000)
	if _, err := f.Seek(1000, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	c := mustNew(t, f)
	p := make([]byte, 10)
	if n, err := io.ReadFull(c, p); n != 10 || err != nil || !bytes.Equal(p, want[1000:1010]) {
		t.Fatalf("first Read of a File made at 1000: %d, %v, %v", n, err, p)
	}
	if pos, _ := c.Seek(0, io.SeekCurrent); pos != 1010 {
		t.Fatalf("offset %d, want 1010", pos)
	}
}

func mustNew(t *testing.T, f *os.File) *File {
	t.Helper()
	c, err := New(f)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReadAtConcurrent reads the file from several goroutines at once
// (with -race, it checks that ReadAt shares no state but the descriptor).
func TestReadAtConcurrent(t *testing.T) {
	want, f := content(t, 2<<20)
	c := mustNew(t, f)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			p := make([]byte, 64<<10)
			for off := g * len(p); off+len(p) <= len(want); off += 4 * len(p) {
				if n, err := c.ReadAt(p, int64(off)); n != len(p) || err != nil || !bytes.Equal(p, want[off:off+len(p)]) {
					t.Errorf("ReadAt at %d: %d, %v", off, n, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestClosed checks that a File of a closed file fails as os.File does.
func TestClosed(t *testing.T) {
	_, f := content(t, 100)
	c := mustNew(t, f)
	f.Close()
	if _, err := c.ReadAt(make([]byte, 10), 0); !errors.Is(err, os.ErrClosed) {
		t.Errorf("ReadAt of a closed file: %v, want os.ErrClosed", err)
	}
	if _, err := c.Read(make([]byte, 10)); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Read of a closed file: %v, want os.ErrClosed", err)
	}
}

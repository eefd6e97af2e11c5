//go:build linux

package cacheread

import (
	"bytes"
	"io"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCachedServesAll checks that the raw read serves a file the page
// cache holds, all of it, without falling back: where it does not (a
// file system without RWF_NOWAIT for buffered reads), the test says so
// and skips.
func TestCachedServesAll(t *testing.T) {
	want, f := content(t, 1<<20+3)
	c := mustNew(t, f)
	p := make([]byte, len(want))
	done := 0
	for done < len(p) {
		n, ok := c.cached(p[done:], int64(done))
		if !ok || n == 0 {
			break
		}
		done += n
	}
	if c.plain.Load() {
		t.Skipf("the test's file system refuses RWF_NOWAIT (%s): File reads the ordinary way there", t.TempDir())
	}
	if done != len(p) || !bytes.Equal(p, want) {
		t.Fatalf("the raw read served %d of the %d bytes in the page cache", done, len(p))
	}
	// At the end: 0 bytes, not an error, and still raw.
	if n, ok := c.cached(make([]byte, 10), int64(len(want))); n != 0 || !ok || c.plain.Load() {
		t.Fatalf("raw read at the end: %d, %v (plain %v)", n, ok, c.plain.Load())
	}
}

// TestUncached drops the file from the page cache and reads it: the raw
// read returns what it can at once, nothing where the page cache holds
// nothing (EAGAIN, which is no refusal: the File goes on trying it), and
// the ordinary read gives the rest.
func TestUncached(t *testing.T) {
	want, f := content(t, 4<<20)
	if err := f.Sync(); err != nil { // clean pages, which FADV_DONTNEED drops
		t.Fatal(err)
	}
	drop := func() {
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			t.Fatal(err)
		}
	}
	c := mustNew(t, f)
	p := make([]byte, 256<<10)
	off := int64(1 << 20)
	part := want[off : off+int64(len(p))]

	// Whether the file system has RWF_NOWAIT: a raw read of the file, in
	// the page cache still.
	if _, ok := c.cached(p[:1], 0); !ok || c.plain.Load() {
		t.Skipf("the test's file system refuses RWF_NOWAIT (%s)", t.TempDir())
	}
	drop()
	n, ok := c.cached(p, off)
	if !ok || n == len(p) || c.plain.Load() {
		t.Fatalf("raw read of a dropped file: %d bytes, ok %v, plain %v; want fewer than %d, ok, not plain", n, ok, c.plain.Load(), len(p))
	}
	if !bytes.Equal(p[:n], part[:n]) {
		t.Fatal("raw read of a dropped file: wrong bytes")
	}

	drop()
	if n, err := c.ReadAt(p, off); n != len(p) || err != nil || !bytes.Equal(p, part) {
		t.Fatalf("ReadAt of a dropped file: %d, %v", n, err)
	}
	drop()
	if _, err := c.Seek(off, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if n, err := io.ReadFull(c, p); n != len(p) || err != nil || !bytes.Equal(p, part) {
		t.Fatalf("Read of a dropped file: %d, %v", n, err)
	}
	if c.plain.Load() {
		t.Fatal("reads of a dropped file made the File read the ordinary way from then on")
	}
}

package bufin

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"testing"
	"testing/iotest"
)

func data(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

// TestTakeSkip reads a stream in runs of every length up to twice the
// buffer, by Take and Skip alternately, from sources that return one byte
// or a whole buffer at a time: the bytes and offsets are the stream's.
func TestTakeSkip(t *testing.T) {
	const size = 16
	src := data(2000)
	for _, name := range []string{"whole", "one byte"} {
		var r io.Reader = bytes.NewReader(src)
		if name == "one byte" {
			r = iotest.OneByteReader(r)
		}
		b := New(r, size)
		off := 0
		for n := 0; off+n <= len(src); n = (n + 1) % (2*size + 1) {
			if b.Offset() != int64(off) {
				t.Fatalf("%s: Offset %d, want %d", name, b.Offset(), off)
			}
			if n%3 == 0 {
				if k := b.Skip(int64(n)); k != int64(n) {
					t.Fatalf("%s: Skip(%d) = %d at %d", name, n, k, off)
				}
			} else {
				p, ok := b.Take(n)
				if !ok || !bytes.Equal(p, src[off:off+n]) {
					t.Fatalf("%s: Take(%d) at %d = %v, %v", name, n, off, p, ok)
				}
			}
			off += n
			if got := b.ReadOffset() - b.Offset(); got != int64(len(b.Buffered())) {
				t.Fatalf("%s: ReadOffset - Offset = %d, %d bytes buffered", name, got, len(b.Buffered()))
			}
		}
	}
}

// TestEnd: at the end of the source, a short run is not consumed and can
// still be read as Buffered, a long run is consumed as far as the input
// goes, Skip says how far it got, and Err is io.EOF.
func TestEnd(t *testing.T) {
	src := data(100)
	b := New(bytes.NewReader(src), 32)
	b.Skip(90)
	if _, ok := b.Take(20); ok {
		t.Fatal("Take(20) of 10 bytes succeeded")
	}
	if b.Offset() != 90 || !bytes.Equal(b.Buffered(), src[90:]) || b.Err() != io.EOF {
		t.Fatalf("after a short Take: offset %d, buffered %v, err %v", b.Offset(), b.Buffered(), b.Err())
	}
	if b.Fill(11) || !b.Fill(10) {
		t.Fatal("Fill: wrong at the end")
	}
	if _, ok := b.Take(1000); ok || b.Offset() != 100 {
		t.Fatalf("Take(1000) of 10 bytes: offset %d", b.Offset())
	}

	b = New(bytes.NewReader(src), 32)
	if k := b.Skip(1000); k != 100 || b.Offset() != 100 {
		t.Fatalf("Skip(1000) of 100 bytes = %d, offset %d", k, b.Offset())
	}
}

// TestLongRun: a run longer than the buffer is copied out whole, reusing
// the Reader's slice; one that claims far more than the input holds
// allocates for what is there, not for the claim.
func TestLongRun(t *testing.T) {
	src := data(10000)
	b := New(iotest.HalfReader(bytes.NewReader(src)), 64)
	p, ok := b.Take(5000)
	if !ok || !bytes.Equal(p, src[:5000]) {
		t.Fatal("Take(5000) wrong")
	}
	q, ok := b.Take(4000)
	if !ok || !bytes.Equal(q, src[5000:9000]) || &q[0] != &p[0] {
		t.Fatal("second long Take wrong or not reusing the slice")
	}

	allocs := testing.AllocsPerRun(5, func() {
		b := New(bytes.NewReader(src), 64)
		b.Take(1 << 40)
	})
	// The Reader and its buffer, then the copy's growth: about 2·log2(10000/64) steps.
	if allocs > 40 {
		t.Errorf("a 1 TiB Take of a 10 kB input: %v allocations", allocs)
	}
}

// TestSourceError: the source's first error is kept and reading stops
// there.
func TestSourceError(t *testing.T) {
	boom := errors.New("boom")
	b := New(io.MultiReader(bytes.NewReader(data(50)), iotest.ErrReader(boom)), 32)
	if _, ok := b.Take(40); !ok {
		t.Fatal("Take(40) of 50 bytes failed")
	}
	if b.Fill(20) || b.Err() != boom || b.ReadOffset() != 50 {
		t.Fatalf("after the error: err %v, read offset %d", b.Err(), b.ReadOffset())
	}
}

// TestReset reuses the buffer of the same size.
func TestReset(t *testing.T) {
	b := New(bytes.NewReader(data(100)), 32)
	b.Take(50)
	buf := &b.buf[0]
	b.Reset(bytes.NewReader(data(10)), 32)
	if &b.buf[0] != buf || b.Offset() != 0 || b.Err() != nil || b.Size() != 32 {
		t.Fatal("Reset did not start afresh on the same buffer")
	}
	if p, ok := b.Take(10); !ok || !bytes.Equal(p, data(10)) {
		t.Fatal("Take after Reset wrong")
	}
}

// TestReadFull: ReadFull hands over the buffered bytes and then the
// source's, from either kind of source, keeping the stream offsets, and
// says how far it got at the end of the source.
func TestReadFull(t *testing.T) {
	src := data(1000)
	for _, name := range []string{"whole", "one byte"} {
		var r io.Reader = bytes.NewReader(src)
		if name == "one byte" {
			r = iotest.OneByteReader(r)
		}
		b := New(r, 16)
		b.Take(5)
		p := make([]byte, 300)
		if n := b.ReadFull(p); n != 300 || !bytes.Equal(p, src[5:305]) {
			t.Fatalf("%s: ReadFull = %d", name, n)
		}
		if b.Offset() != 305 || b.ReadOffset()-b.Offset() != int64(len(b.Buffered())) {
			t.Fatalf("%s: Offset %d ReadOffset %d after ReadFull", name, b.Offset(), b.ReadOffset())
		}
		if q, ok := b.Take(10); !ok || !bytes.Equal(q, src[305:315]) {
			t.Fatalf("%s: Take after ReadFull = %v", name, q)
		}
		if n := b.ReadFull(make([]byte, 1000)); n != 1000-315 || b.Err() != io.EOF || b.Offset() != 1000 {
			t.Fatalf("%s: ReadFull past the end = %d, %v, offset %d", name, n, b.Err(), b.Offset())
		}
	}
}

// TestSetBytes: a Reader set to a slice reads it at its offset, ends there
// with the error given, never writes to it, and a Reset does not take the
// slice as its buffer.
func TestSetBytes(t *testing.T) {
	p := data(50)
	var b Reader
	b.SetBytes(p, 1000, io.ErrUnexpectedEOF)
	if q, ok := b.Take(20); !ok || !bytes.Equal(q, p[:20]) || b.Offset() != 1020 {
		t.Fatalf("Take = %v, %v at %d", q, ok, b.Offset())
	}
	if _, ok := b.Take(40); ok || b.Err() != io.ErrUnexpectedEOF || b.ReadOffset() != 1050 {
		t.Fatalf("Take past the end: ok, or error %v, ReadOffset %d", b.Err(), b.ReadOffset())
	}
	if !bytes.Equal(p, data(50)) || b.Offset() != 1020 || len(b.Buffered()) != 30 {
		t.Fatalf("Take past the end: the slice changed, or offset %d with %d bytes buffered", b.Offset(), len(b.Buffered()))
	}
	b.Reset(bytes.NewReader(data(10)), len(p))
	b.Fill(10)
	if &b.buf[0] == &p[0] {
		t.Fatal("Reset reuses the slice of SetBytes as its buffer")
	}
}

// countingSeeker is a ReadSeeker that counts the bytes read from it, and
// whose Seek can be made to fail.
type countingSeeker struct {
	*bytes.Reader
	read     int
	asks     []int // the size of each Read's slice
	seeks    int
	seekFail bool
}

func (c *countingSeeker) Read(p []byte) (int, error) {
	n, err := c.Reader.Read(p)
	c.read += n
	c.asks = append(c.asks, len(p))
	return n, err
}

func (c *countingSeeker) Seek(off int64, whence int) (int64, error) {
	c.seeks++
	if c.seekFail {
		return 0, errors.New("no seeking")
	}
	return c.Reader.Seek(off, whence)
}

// TestSkipSeeks: Skip seeks past a long run of a source that is an
// io.Seeker instead of reading it, with a read-ahead of a few bytes
// (SetReadAhead) reading little of what it skips; the bytes and offsets
// after it are the stream's. A run past the end is skipped as far as the
// input goes, as by reading, and a source whose Seek fails is read.
func TestSkipSeeks(t *testing.T) {
	src := data(10000)
	for _, c := range []struct {
		name       string
		ahead      int
		seekFail   bool
		readAtMost int
	}{
		{"read-ahead 8", 8, false, 100},
		{"no read-ahead", 0, false, 6 * 64},
		{"seek fails", 8, true, 10000},
	} {
		s := &countingSeeker{Reader: bytes.NewReader(src), seekFail: c.seekFail}
		b := New(s, 64)
		b.SetReadAhead(c.ahead)
		off := 0
		for _, n := range []int{3, 5000, 7, 100, 64, 2000} {
			if k := b.Skip(int64(n)); k != int64(n) {
				t.Fatalf("%s: Skip(%d) = %d at %d", c.name, n, k, off)
			}
			off += n
			p, ok := b.Take(4)
			if !ok || !bytes.Equal(p, src[off:off+4]) || b.Offset() != int64(off+4) {
				t.Fatalf("%s: after Skip(%d), Take(4) = %v, %v at offset %d, want %v at %d", c.name, n, p, ok, b.Offset(), src[off:off+4], off+4)
			}
			off += 4
		}
		if s.read > c.readAtMost {
			t.Errorf("%s: %d bytes read from the source to skip 7,175 of 7,199, want at most %d", c.name, s.read, c.readAtMost)
		}
		if k := b.Skip(int64(len(src))); k != int64(len(src)-off) || b.Err() != io.EOF || b.Offset() != int64(len(src)) {
			t.Errorf("%s: Skip past the end: %d bytes skipped to offset %d, error %v; want %d to %d, io.EOF", c.name, k, b.Offset(), b.Err(), len(src)-off, len(src))
		}
	}
}

// TestSkipSeeksOnce: after the first, each Skip past the buffer costs the
// source one Seek (a system call for a file), where the source holds the
// bytes; a source read from an offset other than 0 is skipped at its own
// offsets; and a source that grows after the Reader asked its end is
// skipped into what it gained.
func TestSkipSeeksOnce(t *testing.T) {
	src := data(100_000)
	s := &countingSeeker{Reader: bytes.NewReader(src)}
	if _, err := s.Seek(1000, io.SeekStart); err != nil { // the stream starts at 1000
		t.Fatal(err)
	}
	s.seeks = 0
	b := New(s, 64)
	b.SetReadAhead(8)
	off := 0
	for i := range 20 {
		if k := b.Skip(3000); k != 3000 {
			t.Fatalf("Skip(3000) = %d at %d", k, off)
		}
		off += 3000
		p, ok := b.Take(4)
		if !ok || !bytes.Equal(p, src[1000+off:1000+off+4]) || b.Offset() != int64(off+4) {
			t.Fatalf("after skip %d: Take(4) = %v, %v at offset %d, want %v at %d", i, p, ok, b.Offset(), src[1000+off:1000+off+4], off+4)
		}
		off += 4
	}
	// The first Skip asks the offset and the end, then seeks: 3; each of
	// the 19 others seeks once.
	if s.seeks != 3+19 {
		t.Errorf("%d Seeks for 20 skips, want %d", s.seeks, 3+19)
	}

	// A source that grows: a file, with bytes added after its end was asked.
	name := t.TempDir() + "/grows"
	if err := os.WriteFile(name, src[:10_000], 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b = New(f, 64)
	b.SetReadAhead(8)
	if k := b.Skip(5000); k != 5000 {
		t.Fatalf("Skip(5000) = %d", k)
	}
	w, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(src[10_000:50_000]); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if k := b.Skip(30_000); k != 30_000 {
		t.Fatalf("Skip(30000) into what the file gained = %d", k)
	}
	if p, ok := b.Take(4); !ok || !bytes.Equal(p, src[35_000:35_004]) || b.Offset() != 35_004 {
		t.Fatalf("after skipping into what the file gained: Take(4) = %v, %v at %d", p, ok, b.Offset())
	}
	// Past the end: as far as the file goes, and the bytes there are read.
	if k := b.Skip(100_000); k != 50_000-35_004 || b.Err() != io.EOF {
		t.Fatalf("Skip past the end = %d, %v; want %d, io.EOF", k, b.Err(), 50_000-35_004)
	}
}

// TestSkipAsCrunchReads: a Reader as crunch's passes make where other
// goroutines read most of the dump (a buffer of 256 KiB, reads of 64 KiB
// at most) seeks past a skip of 16 KiB or more beyond what it holds,
// asks for 4 KiB in its first read after a seek and for 64 KiB in the
// next, and reads through a shorter skip; the bytes and offsets are the
// stream's throughout. Without a read ahead it reads through a skip that
// its buffer's size covers.
func TestSkipAsCrunchReads(t *testing.T) {
	src := data(1 << 20)
	type step struct {
		skip  int
		take  int
		seeks int   // the source's seeks so far
		asks  []int // the sizes asked of the source by this step
	}
	// Each step skips, then takes: a record's header of 9 bytes, as pass
	// 2's goroutine reads one after a run of objects, and last 70 KiB.
	steps := []step{
		{skip: 0, take: 9, asks: []int{64 << 10}},
		{skip: 100 << 10, take: 9, seeks: 3, asks: []int{4 << 10}}, // the first seek asks the offset and the end
		{skip: 20 << 10, take: 9, seeks: 4, asks: []int{4 << 10}},
		{skip: 10 << 10, take: 9, seeks: 4, asks: []int{64 << 10}}, // 10 KiB: read
		{skip: 0, take: 70 << 10, seeks: 4, asks: []int{64 << 10}}, // with 58 KiB held
	}
	s := &countingSeeker{Reader: bytes.NewReader(src)}
	b := New(s, 256<<10)
	b.SetReadAhead(64 << 10)
	off := 0
	for i, st := range steps {
		s.asks = s.asks[:0]
		if k := b.Skip(int64(st.skip)); k != int64(st.skip) {
			t.Fatalf("step %d: Skip(%d) = %d at %d", i, st.skip, k, off)
		}
		off += st.skip
		p, ok := b.Take(st.take)
		if !ok || !bytes.Equal(p, src[off:off+st.take]) || b.Offset() != int64(off+st.take) {
			t.Fatalf("step %d: after Skip(%d), Take(%d) at offset %d: %v; want the stream's bytes to %d", i, st.skip, st.take, b.Offset(), ok, off+st.take)
		}
		off += st.take
		if s.seeks != st.seeks || !slices.Equal(s.asks, st.asks) {
			t.Errorf("step %d (skip %d, take %d): %d seeks so far, reads asking %v; want %d, %v", i, st.skip, st.take, s.seeks, s.asks, st.seeks, st.asks)
		}
	}

	// SkipPast, for bytes another reader read: the 10 KiB that Skip read
	// are sought past, and the read after asks for 4 KiB.
	s = &countingSeeker{Reader: bytes.NewReader(src)}
	b = New(s, 256<<10)
	b.SetReadAhead(64 << 10)
	b.Take(9)
	if k := b.Skip(100 << 10); k != 100<<10 || s.seeks != 3 {
		t.Fatalf("Skip(100 KiB) = %d with %d seeks, want all with 3", k, s.seeks)
	}
	b.Take(9)
	s.asks = s.asks[:0]
	if k := b.SkipPast(10 << 10); k != 10<<10 || s.seeks != 4 {
		t.Errorf("SkipPast(10 KiB) = %d with %d seeks so far, want all with 4", k, s.seeks)
	}
	at := int(b.Offset())
	if p, ok := b.Take(9); !ok || !bytes.Equal(p, src[at:at+9]) || !slices.Equal(s.asks, []int{4 << 10}) {
		t.Errorf("after SkipPast(10 KiB): Take(9) = %v, %v at offset %d, reads asking %v; want the stream's bytes, one read of 4 KiB", p, ok, at, s.asks)
	}

	// No read ahead (one core's Reader, which reads all it skips): a
	// skip of 20 KiB past what the buffer holds is read, not sought.
	s = &countingSeeker{Reader: bytes.NewReader(src)}
	b = New(s, 256<<10)
	b.Take(9)
	s.asks = s.asks[:0]
	if k := b.Skip(256<<10 - 9 + 20<<10); k != 276<<10-9 || s.seeks != 0 || !slices.Equal(s.asks, []int{256 << 10}) || b.Offset() != 276<<10 {
		t.Errorf("no read ahead: Skip(276 KiB - 9) = %d to offset %d with %d seeks, reads asking %v; want no seek and one read of 256 KiB", k, b.Offset(), s.seeks, s.asks)
	}
}

// Package bufin is the buffered input of the hprof and bmd readers: one
// buffer read ahead from a source, byte runs handed out without copying,
// and the stream offset of every byte.
//
// Unlike bufio.Reader it lets a caller ask for n bytes at once and get them
// as one slice of its buffer (Fill, Buffered, Take), which is what decoding
// fixed-size fields needs, and it copies runs longer than its buffer into a
// slice that grows only with the bytes actually read, so a corrupt length
// in untrusted input cannot make it allocate more than the input holds.
package bufin

import "io"

// Reader reads ahead from a source into a buffer of fixed size. The zero
// value is not usable: call Reset or New.
type Reader struct {
	src  io.Reader
	err  error // the first error of src (io.EOF at its end)
	buf  []byte
	pos  int    // next byte to consume
	end  int    // end of the bytes read from src
	base int64  // stream offset of buf[0]
	long []byte // the bytes of the last run longer than buf
	// inPlace: buf is a caller's slice (SetBytes), read in place and never
	// reused by Reset
	inPlace bool
	// ahead, when not 0, is the most bytes one read of the source asks
	// for (SetReadAhead).
	ahead int
	// sought: the Reader's last move in its source was a seek (Skip), and
	// with ahead set, its next read asks for at most soughtRead bytes.
	sought bool
	// seeker holds what seek knows of a source that is an io.Seeker once
	// it has sought in it.
	seeker seekerState
}

// seekerState is what a Reader knows of its source's offsets, so that a
// skip costs the source one Seek, not three (a system call each for a
// file, 1.3 µs on this project's VM, where crunch skipped about 980
// times a run on the README's 134 MB dump): the source's offset of the
// stream's byte 0, which holds while the Reader alone moves the source's
// offset, as it must to read the stream in order, and the source's end
// as last asked.
type seekerState struct {
	known bool  // zero and end are set
	zero  int64 // the source's offset of the stream's offset 0
	end   int64 // the source's size when last asked (SeekEnd)
}

// SetReadAhead makes each read of the source ask for at most n bytes (n >
// 0), or for as many as the buffer holds (n 0, the default): a Reader
// that skips long runs of its input (Skip) then reads few of their bytes
// before it seeks past the rest, seeks past any of 16 KiB or more, and
// asks for at most 4 KiB in its first read after a seek (seekBytes,
// soughtRead). Reset clears it.
func (b *Reader) SetReadAhead(n int) { b.ahead = max(n, 0) }

// New returns a Reader of src with a buffer of size bytes.
func New(src io.Reader, size int) *Reader {
	b := new(Reader)
	b.Reset(src, size)
	return b
}

// Reset makes b read src from offset 0 with a buffer of size bytes,
// reusing b's buffer when it has that size.
func (b *Reader) Reset(src io.Reader, size int) {
	buf := b.buf
	if len(buf) != size || b.inPlace {
		buf = make([]byte, size)
	}
	*b = Reader{src: src, buf: buf, long: b.long[:0]}
}

// SetBytes makes b read p alone, as the part of a stream at offset base
// that was read before the stream ended with err (io.EOF at its end): p is
// the buffer, with no copy, and b reads nothing else. The caller must not
// change p while b reads it; b never writes to it.
func (b *Reader) SetBytes(p []byte, base int64, err error) {
	*b = Reader{src: eofReader{}, err: err, buf: p, end: len(p), base: base, long: b.long[:0], inPlace: true}
}

// InPlace reports whether b reads a slice given to SetBytes.
func (b *Reader) InPlace() bool { return b.inPlace }

// eofReader is the source of a Reader set with SetBytes.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// ReadFull consumes the next len(p) bytes into p, the buffered ones first
// and the rest straight from the source, without going through the
// buffer, and returns how many it read: fewer than len(p) only if the
// source ends or fails first (Err says which).
func (b *Reader) ReadFull(p []byte) int {
	n := copy(p, b.buf[b.pos:b.end])
	b.pos += n
	for n < len(p) && b.err == nil {
		m, err := b.src.Read(p[n:])
		n += m
		b.base += int64(m) // the bytes went past the (empty) buffer
		if err != nil {
			b.err = err
		}
	}
	return n
}

// Size returns the size of the buffer: the most Fill can make available.
func (b *Reader) Size() int { return len(b.buf) }

// Offset returns the stream offset of the next byte to consume.
func (b *Reader) Offset() int64 { return b.base + int64(b.pos) }

// ReadOffset returns the stream offset just past the bytes read from the
// source so far: Offset plus the bytes buffered.
func (b *Reader) ReadOffset() int64 { return b.base + int64(b.end) }

// Err returns the first error the source returned, io.EOF at its end, or
// nil while it has returned none.
func (b *Reader) Err() error { return b.err }

// Buffered returns the bytes read ahead and not yet consumed. They alias
// the buffer and are valid until the next call that reads.
func (b *Reader) Buffered() []byte { return b.buf[b.pos:b.end] }

// SmallUvarint consumes the next byte if it is buffered and is a whole
// varint (below 0x80), and returns its value: the fast path of a varint
// decoder, small enough for the compiler to inline.
func (b *Reader) SmallUvarint() (uint64, bool) {
	if b.pos < b.end && b.buf[b.pos] < 0x80 {
		b.pos++
		return uint64(b.buf[b.pos-1]), true
	}
	return 0, false
}

// Fill reads until at least n bytes are buffered, and reports whether they
// are: false if the source ends or fails first. n must not exceed Size.
func (b *Reader) Fill(n int) bool {
	if b.end-b.pos >= n {
		return true
	}
	return b.fill(n)
}

func (b *Reader) fill(n int) bool {
	if b.inPlace {
		return b.end-b.pos >= n // all there is, in a slice that is not b's to move
	}
	if b.pos > 0 {
		copy(b.buf, b.buf[b.pos:b.end])
		b.base += int64(b.pos)
		b.end -= b.pos
		b.pos = 0
	}
	for b.end < n && b.err == nil {
		to := len(b.buf)
		if b.ahead > 0 {
			ahead := b.ahead
			if b.sought {
				ahead = min(ahead, soughtRead)
			}
			to = min(to, max(b.end+ahead, n))
		}
		b.sought = false
		m, err := b.src.Read(b.buf[b.end:to])
		b.end += m
		if err != nil {
			b.err = err
		}
	}
	return b.end >= n
}

// A Reader with a read ahead (SetReadAhead) skips runs of seekBytes or
// more by seeking past them, and its first read after a seek asks for at
// most soughtRead bytes. Such a Reader is one whose input other readers
// read: crunch's passes, where the goroutine reading the dump in order
// reads a record's header or a few sub-records and skips a record or a
// run of objects that another goroutine writes. Reading a run of 16 KiB
// to skip it costs about a system call's time (1.3 µs on this project's
// VM) in copying alone, where a seek in a file read at offsets costs
// nothing; and after a seek, a read of 64 KiB copied about 60 KiB that
// the next skip passed over again. On the 134 MB dump, where pass 2's
// goroutine skips 1,260 runs of objects, 381 of them under 64 KiB,
// crunch read 274.6 MB of the dump instead of 305.5 (its two passes
// need 266.7), in 1,315 reads instead of 1,663 (strace).
// Its time did not change beyond the noise: read at offsets, medians of
// three sets of 41 alternating runs 142.0 against 143.7, 153.9 against
// 153.8 and 171.6 against 171.6 ms, with 1.0 to 2.4 ms less processor
// time a run; the Android-shaped dump 235.7 against 235.5 ms (31 runs).
const (
	seekBytes  = 16 << 10
	soughtRead = 4 << 10
)

// Discard consumes n buffered bytes; n must not exceed len(Buffered()).
func (b *Reader) Discard(n int) { b.pos += n }

// Take consumes the next n bytes and returns them; ok is false if the
// source ends or fails first. Up to Size bytes, they alias the buffer and
// are valid until the next call that reads; a run that fails is not
// consumed. Longer runs are copied, as they arrive, to a slice of the
// Reader's own, reused by the next long run, so memory grows only with the
// bytes present whatever n claims; a long run that fails is consumed as far
// as the input goes.
func (b *Reader) Take(n int) (p []byte, ok bool) {
	if i := b.pos; n <= b.end-i {
		b.pos = i + n
		return b.buf[i : i+n], true
	}
	return b.take(n)
}

func (b *Reader) take(n int) ([]byte, bool) {
	if n <= len(b.buf) {
		if !b.fill(n) {
			return nil, false
		}
		p := b.buf[b.pos : b.pos+n]
		b.pos += n
		return p, true
	}
	out := b.long[:0]
	for rem := n; rem > 0; {
		if b.pos == b.end && !b.fill(1) {
			b.long = out
			return nil, false
		}
		k := min(b.end-b.pos, rem)
		out = append(out, b.buf[b.pos:b.pos+k]...)
		b.pos += k
		rem -= k
	}
	b.long = out
	return out, true
}

// Skip consumes the next n bytes without copying them and returns how many
// it consumed: fewer than n only if the source ends or fails first.
func (b *Reader) Skip(n int64) int64 { return b.skip(n, int64(b.seekFrom())) }

// SkipPast is Skip for bytes that another reader of the source has read
// (crunch's goroutines, which read parts of a dump at their offsets): it
// seeks past those of the n bytes it has not buffered, however few, where
// the source can seek, so that its next read, after the seek, asks for
// at most soughtRead bytes with a read ahead. Skipped by Skip, a run
// smaller than seekBytes past the buffer is read, and the read asks for a
// read ahead's bytes after it: in crunch's test of a dump of spans of
// about 64 KiB, each ending a few KiB past the buffer of the goroutine
// that skipped them, that goroutine read all of it so
// (TestSpanRecordsSkipped).
func (b *Reader) SkipPast(n int64) int64 { return b.skip(n, 1) }

// skip is Skip, seeking past runs of from bytes or more that it has not
// buffered.
func (b *Reader) skip(n, from int64) int64 {
	var done int64
	for {
		k := min(int64(b.end-b.pos), n-done)
		b.pos += int(k)
		done += k
		if done == n {
			return done
		}
		if rest := n - done; rest >= from && b.seek(rest) {
			return n
		}
		if !b.fill(1) {
			return done
		}
	}
}

// seekFrom returns the fewest bytes Skip seeks past rather than reads:
// with a read ahead (SetReadAhead), seekBytes, or the read ahead if less;
// else the buffer's size.
func (b *Reader) seekFrom() int {
	if b.ahead > 0 {
		return min(b.ahead, len(b.buf), seekBytes)
	}
	return len(b.buf)
}

// seek skips the next n bytes of the source, with the buffer empty, by
// seeking past them, if the source is an io.Seeker that holds them:
// reading a file's bytes only to skip them copies them from the page
// cache. It reports whether it did; if not, the source is where it was.
// It asks the source's offset and end once, and its end again only where
// the n bytes go past it: a source that grows is followed.
func (b *Reader) seek(n int64) bool {
	s, ok := b.src.(io.Seeker)
	if !ok || b.err != nil || b.inPlace {
		return false
	}
	at := b.base + int64(b.end) // the stream offset the source is at
	ss := &b.seeker
	if !ss.known {
		cur, err := s.Seek(0, io.SeekCurrent)
		if err != nil {
			return false
		}
		ss.zero, ss.end, ss.known = cur-at, -1, true
	}
	cur := ss.zero + at
	if cur+n > ss.end {
		end, err := s.Seek(0, io.SeekEnd)
		if err == nil {
			ss.end = end
		}
		if err != nil || cur+n > end {
			if _, err := s.Seek(cur, io.SeekStart); err != nil {
				b.err = err
			}
			return false
		}
	}
	if _, err := s.Seek(cur+n, io.SeekStart); err != nil {
		// Where the source is now is not known: back to where it was, as
		// the caller reads on from there.
		if _, err := s.Seek(cur, io.SeekStart); err != nil {
			b.err = err
		}
		return false
	}
	b.base += int64(b.end) + n
	b.pos, b.end, b.sought = 0, 0, true
	return true
}

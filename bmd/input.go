package bmd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// input is the buffered byte source of both readers (version 2 and 1): it
// keeps the offset of what it has consumed, reads ahead in one buffer, and
// hands out byte runs without allocating for those that fit the buffer.
type input struct {
	src    io.Reader
	srcErr error // the first error of src (io.EOF at the end)
	buf    []byte
	pos    int
	end    int
	base   int64  // offset of buf[0] in the stream
	long   []byte // the bytes of the last run longer than buf
}

// off returns the offset of the next byte to read.
func (in *input) off() int64 { return in.base + int64(in.pos) }

// fill makes at least n bytes available after pos, if the source has them.
func (in *input) fill(n int) bool {
	if in.end-in.pos >= n {
		return true
	}
	if in.pos > 0 {
		copy(in.buf, in.buf[in.pos:in.end])
		in.base += int64(in.pos)
		in.end -= in.pos
		in.pos = 0
	}
	for in.end < n && in.srcErr == nil {
		m, err := in.src.Read(in.buf[in.end:])
		in.end += m
		if err != nil {
			in.srcErr = err
		}
	}
	return in.end >= n
}

// take consumes the next n bytes; ok is false if the source ends first.
// Up to the buffer's size they alias the buffer and are valid until the
// next read. Longer runs are copied, as they arrive, to in.long, so memory
// grows only with bytes present; never to a slice that may alias the
// buffer (such as the previous record's text), which the copy refills.
func (in *input) take(n int) (b []byte, ok bool) {
	if n <= len(in.buf) {
		if !in.fill(n) {
			return nil, false
		}
		b = in.buf[in.pos : in.pos+n]
		in.pos += n
		return b, true
	}
	out := in.long[:0]
	for rem := n; rem > 0; {
		if in.pos == in.end && !in.fill(1) {
			return nil, false
		}
		k := min(in.end-in.pos, rem)
		out = append(out, in.buf[in.pos:in.pos+k]...)
		in.pos += k
		rem -= k
	}
	in.long = out
	return out, true
}

// uvarint decodes the varint at pos and consumes it: n > 0 is its length;
// n == 0 means the input ends within it; n < 0 that it runs past 10 bytes
// or 64 bits.
func (in *input) uvarint() (v uint64, n int) {
	if in.end-in.pos < binary.MaxVarintLen64 {
		in.fill(binary.MaxVarintLen64)
	}
	b := in.buf[in.pos:in.end]
	if len(b) > 0 && b[0] < 0x80 {
		in.pos++
		return uint64(b[0]), 1
	}
	v, n = binary.Uvarint(b)
	if n == 0 && len(b) >= binary.MaxVarintLen64 {
		n = -1 // ten bytes, all with the continuation bit
	}
	if n > 0 {
		in.pos += n
	}
	return v, n
}

// formatError returns the error of a record that starts at offset at: the
// source's own error if reading failed, else a FormatError.
func (in *input) formatError(at int64, record, msg string, err error) error {
	if in.srcErr != nil && in.srcErr != io.EOF {
		var fe *FormatError
		if errors.As(in.srcErr, &fe) {
			return in.srcErr // a damaged or cut block: where it is
		}
		return fmt.Errorf("reading at offset %d: %w", in.off(), in.srcErr)
	}
	return &FormatError{Offset: at, Record: record, Msg: msg, Err: err}
}

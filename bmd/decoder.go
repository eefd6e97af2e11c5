package bmd

import (
	"encoding/binary"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// decoder reads the fields of one record, of either version, and keeps
// the first error: once it has failed, its methods read nothing and return
// zero values, so a record's fields are read in a row and the error checked
// once. Varints are decoded as protowire decodes them (spec/bmd.md §2.1),
// the same functions the Writer encodes them with.
type decoder struct {
	in     *input
	blocks *blockReader // version 2: places stream offsets in the file; nil for version 1
	at     int64        // file offset of the record, for errors
	record string       // the record's name, for errors ("" before its tag is known)
	err    error
}

// fail records an error of the record's content, unless one is already
// recorded, and returns the first.
func (d *decoder) fail(format string, a ...any) error {
	return d.failWith(fmt.Sprintf(format, a...), nil)
}

// failWith records an error with a message and an error to wrap. When the
// source itself failed, its error is recorded instead (see input.formatError).
func (d *decoder) failWith(msg string, err error) error {
	if d.err == nil {
		d.err = d.in.formatError(d.at, d.record, msg, err)
	}
	return d.err
}

func (d *decoder) truncated() { d.failWith("truncated", io.ErrUnexpectedEOF) }

// uvarint consumes a varint of up to 10 bytes. Most are one byte, read
// here; the rest in uvarintLong.
func (d *decoder) uvarint() uint64 {
	if d.err == nil {
		if v, ok := d.in.buf.SmallUvarint(); ok {
			return v
		}
	}
	return d.uvarintLong()
}

func (d *decoder) uvarintLong() uint64 {
	if d.err != nil {
		return 0
	}
	in := &d.in.buf
	in.Fill(binary.MaxVarintLen64)
	b := in.Buffered()
	if len(b) > 0 && b[0] < 0x80 {
		in.Discard(1)
		return uint64(b[0])
	}
	v, n := protowire.ConsumeVarint(b)
	if n < 0 {
		if cutShort(n) {
			d.truncated()
		} else {
			d.fail("corrupt varint at offset %d (more than 10 bytes or over 64 bits)", d.fileOffset(in.Offset()))
		}
		return 0
	}
	in.Discard(n)
	return v
}

// skipVarints consumes n varints without decoding them, with the checks
// uvarint makes: it stops at the end of the input (truncated) and at a
// varint of more than 10 bytes or over 64 bits.
func (d *decoder) skipVarints(n uint64) {
	in := &d.in.buf
	run := 0 // bytes of the current varint so far
	for n > 0 && d.err == nil {
		if !in.Fill(1) {
			d.truncated()
			return
		}
		b := in.Buffered()
		i := 0
		for ; i < len(b); i++ {
			c := b[i]
			if c >= 0x80 {
				if run++; run == binary.MaxVarintLen64 {
					break
				}
				continue
			}
			if run == binary.MaxVarintLen64-1 && c > 1 {
				run++
				break
			}
			run = 0
			if n--; n == 0 {
				i++
				break
			}
		}
		if run == binary.MaxVarintLen64 {
			d.fail("corrupt varint at offset %d (more than 10 bytes or over 64 bits)", d.fileOffset(in.Offset()+int64(i-run+1)))
			return
		}
		in.Discard(i)
	}
}

// skipValues consumes the values of an instance of layout ch.
func (d *decoder) skipValues(ch []Field) {
	varints := uint64(0)
	for _, f := range ch {
		switch {
		case f.Type == Object, f.Kept && f.Type != Float && f.Type != Double:
			varints++
		case f.Kept:
			d.skipVarints(varints)
			varints = 0
			d.bytes(f.Type.Size())
		}
	}
	d.skipVarints(varints)
}

// zigzag consumes a zigzag-encoded varint (spec/bmd.md §2.2).
func (d *decoder) zigzag() int64 { return protowire.DecodeZigZag(d.uvarint()) }

// delta consumes a zigzag delta from *last, and sets *last to the value
// it gives (wrapping, spec/bmd.md §2.2).
func (d *decoder) delta(last *uint64) uint64 {
	*last += uint64(d.zigzag())
	return *last
}

// byte consumes one byte.
func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	b, ok := d.in.take(1)
	if !ok {
		d.truncated()
		return 0
	}
	return b[0]
}

// bytes consumes the next n bytes (see input.take): nil after an error.
func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	b, ok := d.in.take(n)
	if !ok {
		d.truncated()
	}
	return b
}

// le32 and le64 consume a little-endian value (a float's or a double's
// bits).
func (d *decoder) le32() uint32 {
	if b := d.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) le64() uint64 {
	if b := d.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// fileOffset returns the file offset of stream offset s.
func (d *decoder) fileOffset(s int64) int64 {
	if d.blocks == nil {
		return s
	}
	return d.blocks.fileOffset(s)
}

// cutShort reports whether a protowire error code (a negative length) says
// that the bytes end too soon.
func cutShort(code int) bool { return protowire.ParseError(code) == io.ErrUnexpectedEOF }

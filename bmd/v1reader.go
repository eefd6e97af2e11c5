package bmd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// V1Reader reads a BMD version 1 file record by record. It decodes what the
// original Java reader decodes, the same way (spec/bmd.md §11), and
// reports damage as a *FormatError with the record's offset: an unknown
// tag, a varint longer than 10 bytes, a negative count or length, an
// INSTANCE DUMP of an undefined class, or a record cut short. Memory grows
// only with the bytes actually present, whatever counts the input claims.
//
// A version 1 file has no end marker: a clean end of input between two
// records is the end of the file.
type V1Reader struct {
	input

	meta  []byte
	lay   v1Layouts
	steps int64 // classes visited walking instance chains
	rec   V1Record
}

// MaxV1Discarded is the largest discarded instance field size a class may
// declare: 65535 fields of 8 bytes, the most a Java class can have.
const MaxV1Discarded = 65535 * 8

// NewV1Reader reads the header of a version 1 file.
func NewV1Reader(r io.Reader) (*V1Reader, error) {
	vr := &V1Reader{input: input{src: r, buf: make([]byte, 1<<16)}}
	v, err := vr.varint("header")
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) && vr.base+int64(vr.end) == 0 {
			return nil, &FormatError{Offset: 0, Record: "header", Msg: "empty input", Err: ErrNotBMD}
		}
		return nil, &FormatError{Offset: 0, Record: "header", Msg: "no version number", Err: ErrNotBMD}
	}
	if int32(v) != Version1 {
		return nil, &FormatError{Offset: 0, Record: "header", Msg: fmt.Sprintf("version %d is not BMD version 1", int32(v)), Err: ErrNotBMD}
	}
	n, err := vr.varint("header")
	if err != nil {
		return nil, err
	}
	if int32(n) < 0 || n > 1<<20 {
		return nil, &FormatError{Offset: vr.off(), Record: "header", Msg: fmt.Sprintf("metadata of %d bytes is implausible", int32(n)), Err: ErrNotBMD}
	}
	b, err := vr.bytes(int(n), "header")
	if err != nil {
		return nil, err
	}
	vr.meta = append([]byte(nil), b...)
	return vr, nil
}

// Metadata returns the header's metadata bytes (the original tools wrote
// the HPROF version text).
func (r *V1Reader) Metadata() []byte { return r.meta }

// Offset returns the offset of the next byte to read.
func (r *V1Reader) Offset() int64 { return r.off() }

// Layout returns the kept instance fields of class id and of its defined
// super classes, in the order of an INSTANCE DUMP's values. It allocates
// the slice at every call; Chain walks the same classes without allocating.
func (r *V1Reader) Layout(id uint32) ([]Field, bool) { return r.lay.layout(id) }

// Chain calls f with the definition of class id (ID, Super, Fields and
// Discarded are set) and then with each defined super class in turn, the
// order of an INSTANCE DUMP's values, until a super class is not defined, f
// returns false, or a cycle is detected. It returns false if class id is
// not defined.
func (r *V1Reader) Chain(id uint32, f func(c *V1Class) bool) bool {
	_, ok := r.lay.walk(id, f)
	return ok
}

func (r *V1Reader) fail(record, msg string, err error) error {
	return r.formatError(r.rec.Offset, record, msg, err)
}

func (r *V1Reader) truncated(record string) error {
	return r.fail(record, "truncated", io.ErrUnexpectedEOF)
}

// varint reads a varint of up to 10 bytes (the original reader's limit).
func (r *V1Reader) varint(record string) (uint64, error) {
	at := r.off()
	v, n := r.uvarint()
	if n == 0 {
		return 0, r.truncated(record)
	}
	if n < 0 {
		return 0, r.fail(record, fmt.Sprintf("corrupt varint at offset %d (more than 10 bytes or over 64 bits)", at), nil)
	}
	return v, nil
}

// u32 reads an int32 varint as the original readInt32 does (the upper bits
// of a longer varint are dropped) and returns its 32 bits.
func (r *V1Reader) u32(record string) (uint32, error) {
	v, err := r.varint(record)
	return uint32(v), err
}

// count reads an int32 count or length and rejects a negative one.
func (r *V1Reader) count(record, what string) (int, error) {
	v, err := r.varint(record)
	if err != nil {
		return 0, err
	}
	if int32(v) < 0 {
		return 0, r.fail(record, fmt.Sprintf("negative %s %d", what, int32(v)), nil)
	}
	return int(int32(v)), nil
}

// bytes returns the next n bytes (see input.take).
func (r *V1Reader) bytes(n int, record string) ([]byte, error) {
	b, ok := r.take(n)
	if !ok {
		return nil, r.truncated(record)
	}
	return b, nil
}

func (r *V1Reader) byte1(record string) (byte, error) {
	if !r.fill(1) {
		return 0, r.truncated(record)
	}
	r.pos++
	return r.buf[r.pos-1], nil
}

func (r *V1Reader) typ(record string) (Type, error) {
	v, err := r.varint(record)
	if err != nil {
		return 0, err
	}
	t, ok := TypeFromV1(uint64(int32(v)))
	if !ok {
		return 0, r.fail(record, fmt.Sprintf("invalid field type %d", int32(v)), nil)
	}
	return t, nil
}

// value reads a field value of type t. static selects the original
// reader's reading of a static or constant boolean: a varint, where an
// instance's boolean is one raw byte (the original writer writes one raw
// byte in both places, which reads the same for 0 and 1).
func (r *V1Reader) value(t Type, static bool, record string) (uint64, error) {
	switch t {
	case Object, Int:
		v, err := r.u32(record)
		return uint64(v), err
	case Short:
		v, err := r.u32(record)
		return uint64(uint16(v)), err
	case Long:
		return r.varint(record)
	case Float:
		b, err := r.bytes(4, record)
		if err != nil {
			return 0, err
		}
		return uint64(binary.LittleEndian.Uint32(b)), nil
	case Double:
		b, err := r.bytes(8, record)
		if err != nil {
			return 0, err
		}
		return binary.LittleEndian.Uint64(b), nil
	case Boolean:
		// The original reader keeps a boolean as true or false, so does
		// this one: 1 or 0.
		var v uint64
		var err error
		if static {
			v, err = r.varint(record)
		} else {
			var b byte
			b, err = r.byte1(record)
			v = uint64(b)
		}
		if v != 0 {
			v = 1
		}
		return v, err
	case Byte:
		b, err := r.byte1(record)
		return uint64(b), err
	case Char:
		b, err := r.bytes(2, record)
		if err != nil {
			return 0, err
		}
		return uint64(binary.BigEndian.Uint16(b)), nil
	}
	return 0, r.fail(record, fmt.Sprintf("invalid field type %d", t), nil)
}

// Next reads the next record. It returns io.EOF at a clean end of input.
// The record is reused by the next call.
func (r *V1Reader) Next() (*V1Record, error) {
	rec := &r.rec
	rec.Offset = r.off()
	if !r.fill(1) {
		if r.srcErr != nil && r.srcErr != io.EOF {
			return nil, fmt.Errorf("reading at offset %d: %w", r.off(), r.srcErr)
		}
		return nil, io.EOF
	}
	tv, err := r.varint("")
	if err != nil {
		return nil, err
	}
	if int32(tv) < 1 || int32(tv) > v1MaxTag {
		return nil, r.fail("", fmt.Sprintf("unknown record tag %d (BMD version 1 has tags 1 to 8)", int32(tv)), nil)
	}
	t := V1Tag(tv)
	rec.Tag = t
	name := t.String()
	u := func() uint32 {
		if err != nil {
			return 0
		}
		var v uint32
		v, err = r.u32(name)
		return v
	}
	cnt := func(what string) int {
		if err != nil {
			return 0
		}
		var n int
		n, err = r.count(name, what)
		return n
	}
	switch t {
	case V1String:
		rec.ID = u()
		n := cnt("length")
		if err == nil {
			rec.Text, err = r.bytes(n, name)
		}
	case V1HashedString:
		rec.ID = u()
		rec.Length = uint32(cnt("length"))
		rec.Hash = int32(u())
	case V1ClassDefinition:
		err = r.readClass(&rec.Class)
		if err == nil && !r.lay.add(&rec.Class) {
			return nil, r.fail(name, fmt.Sprintf("class %d defined twice", rec.Class.ID), nil)
		}
	case V1InstanceDump:
		rec.ID = u()
		rec.Of = u()
		if err != nil {
			break
		}
		rec.Values = rec.Values[:0]
		n, ok := r.lay.walk(rec.Of, func(c *V1Class) bool {
			for _, f := range c.Fields {
				var v uint64
				if v, err = r.value(f.Type, false, name); err != nil {
					return false
				}
				rec.Values = append(rec.Values, v)
			}
			return true
		})
		if !ok {
			return nil, r.fail(name, fmt.Sprintf("object %d is an instance of class %d, which is not defined", rec.ID, rec.Of), nil)
		}
		// Every value takes a byte, but a chain of classes without kept
		// fields takes none: bound the work such chains can cost.
		r.steps += int64(n)
		if err == nil && r.steps > 1<<20+64*r.off() {
			return nil, r.fail(name, "class chains are implausibly long for the size of the file", nil)
		}
	case V1RootObjects:
		n := cnt("root count")
		rec.IDs = rec.IDs[:0]
		for i := 0; i < n && err == nil; i++ {
			rec.IDs = append(rec.IDs, u())
		}
	case V1ObjectArray:
		rec.ID = u()
		rec.Of = u()
		n := cnt("element count")
		rec.IDs = rec.IDs[:0]
		for i := 0; i < n && err == nil; i++ {
			rec.IDs = append(rec.IDs, u())
		}
	case V1PrimitiveArray:
		rec.ID = u()
		if err == nil {
			rec.Type, err = r.typ(name)
		}
		if err == nil && rec.Type == Object {
			return nil, r.fail(name, "element type object", nil)
		}
		rec.Count = uint32(cnt("element count"))
	case V1Legacy:
		tag := u()
		n := cnt("length")
		if err == nil && tag > 0xFF {
			return nil, r.fail(name, fmt.Sprintf("HPROF tag %d", int32(tag)), nil)
		}
		rec.HTag = uint8(tag)
		if err == nil {
			rec.Text, err = r.bytes(n, name)
		}
	}
	if err != nil {
		return nil, err
	}
	return rec, nil
}

func (r *V1Reader) readClass(c *V1Class) error {
	const name = "CLASS DEFINITION"
	var err error
	u := func() uint32 {
		if err != nil {
			return 0
		}
		var v uint32
		v, err = r.u32(name)
		return v
	}
	cnt := func(what string) int {
		if err != nil {
			return 0
		}
		var n int
		n, err = r.count(name, what)
		if err == nil && n > 0xFFFF {
			err = r.fail(name, fmt.Sprintf("%d %s (HPROF allows 65535)", n, what), nil)
		}
		return n
	}
	c.ID, c.Super, c.Name = u(), u(), u()
	if err == nil && c.ID == 0 {
		return r.fail(name, "class ID 0", nil)
	}
	n := cnt("constants")
	c.Constants = c.Constants[:0]
	for i := 0; i < n && err == nil; i++ {
		var k Constant
		k.Index = uint16(u())
		if err == nil {
			k.Type, err = r.typ(name)
		}
		if err == nil {
			k.Value, err = r.value(k.Type, true, name)
		}
		k.Kept = true
		c.Constants = append(c.Constants, k)
	}
	n = cnt("static fields")
	c.Statics = c.Statics[:0]
	for i := 0; i < n && err == nil; i++ {
		var f Static
		f.Name = uint64(u())
		if err == nil {
			f.Type, err = r.typ(name)
		}
		if err == nil {
			f.Value, err = r.value(f.Type, true, name)
		}
		f.Kept = true
		c.Statics = append(c.Statics, f)
	}
	n = cnt("instance fields")
	c.Fields = c.Fields[:0]
	for i := 0; i < n && err == nil; i++ {
		var f Field
		f.Name = uint64(u())
		if err == nil {
			f.Type, err = r.typ(name)
		}
		f.Kept = true
		c.Fields = append(c.Fields, f)
	}
	if err == nil {
		var d int
		d, err = r.count(name, "discarded field size")
		c.Discarded = uint32(d)
		if err == nil && d > MaxV1Discarded {
			err = r.fail(name, fmt.Sprintf("class %d: %d bytes of discarded fields is implausible", c.ID, d), nil)
		}
	}
	return err
}

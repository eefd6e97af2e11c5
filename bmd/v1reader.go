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
	dec   decoder // of the record being read
}

// MaxV1Discarded is the largest discarded instance field size a class may
// declare: 65535 fields of 8 bytes, the most a Java class can have.
const MaxV1Discarded = 65535 * 8

// NewV1Reader reads the header of a version 1 file.
func NewV1Reader(r io.Reader) (*V1Reader, error) {
	vr := &V1Reader{input: newInput(r, 1<<16)}
	d := vr.decoder("header")
	v := d.uvarint()
	switch {
	case d.err != nil && errors.Is(d.err, io.ErrUnexpectedEOF) && vr.buf.ReadOffset() == 0:
		return nil, notBMD(0, "empty input")
	case d.err != nil:
		return nil, notBMD(0, "no version number")
	case int32(v) != Version1:
		return nil, notBMD(0, fmt.Sprintf("version %d is not BMD version 1", int32(v)))
	}
	n := d.uvarint()
	if d.err == nil && (int32(n) < 0 || n > maxMetadataSize) {
		return nil, notBMD(vr.off(), fmt.Sprintf("metadata of %d bytes is implausible", int32(n)))
	}
	b := d.bytes(int(n))
	if d.err != nil {
		return nil, d.err
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

// Class returns the definition of class id (ID, Super, Fields and
// Discarded are set; the caller must not change it), and false if class
// id is not defined.
func (r *V1Reader) Class(id uint32) (*V1Class, bool) {
	c := r.lay.class(id)
	return c, c != nil
}

// Chain calls f with the definition of class id (ID, Super, Fields and
// Discarded are set) and then with each defined super class in turn, the
// order of an INSTANCE DUMP's values, until a super class is not defined or
// already visited (a cycle: each class once), or f returns false. It
// returns false if class id is not defined.
func (r *V1Reader) Chain(id uint32, f func(c *V1Class) bool) bool {
	_, ok := r.lay.walk(id, f)
	return ok
}

// decoder returns the decoder of the record that starts at r.rec.Offset:
// a field, not a local, which the decoders in the table would make escape.
func (r *V1Reader) decoder(record string) *decoder {
	r.dec = decoder{in: &r.input, at: r.rec.Offset, record: record}
	return &r.dec
}

// Next reads the next record. It returns io.EOF at a clean end of input.
// The record is reused by the next call.
func (r *V1Reader) Next() (*V1Record, error) {
	rec := &r.rec
	rec.Offset = r.off()
	if !r.fill(1) {
		if err := r.failed(); err != nil {
			return nil, fmt.Errorf("bmd: reading at offset %d: %w", r.off(), err)
		}
		return nil, io.EOF
	}
	d := r.decoder("")
	tv := int32(d.uvarint())
	if d.err == nil && (tv < 1 || tv > v1MaxTag) {
		d.fail("unknown record tag %d (BMD version 1 has tags 1 to 8)", tv)
	}
	if d.err != nil {
		return nil, d.err
	}
	rec.Tag = V1Tag(tv)
	d.record = rec.Tag.String()
	v1RecordDecoders[rec.Tag](r, rec, d)
	if d.err != nil {
		return nil, d.err
	}
	return rec, nil
}

// v1RecordDecoders decode the body of a record of each tag; they report
// errors through the decoder.
var v1RecordDecoders = [v1MaxTag + 1]func(r *V1Reader, rec *V1Record, d *decoder){
	V1String: (*V1Reader).readString, V1HashedString: (*V1Reader).readHashedString,
	V1ClassDefinition: (*V1Reader).readClassDefinition, V1InstanceDump: (*V1Reader).readInstance,
	V1RootObjects: (*V1Reader).readRootObjects, V1ObjectArray: (*V1Reader).readObjectArray,
	V1PrimitiveArray: (*V1Reader).readPrimitiveArray, V1Legacy: (*V1Reader).readLegacy,
}

// The fields of version 1 (spec/bmd.md §11.2): every integer an int32
// varint, of which the original reader keeps the low 32 bits.

// v1u32 consumes an int32 varint as the original readInt32 does (the upper
// bits of a longer varint are dropped) and returns its 32 bits.
func (d *decoder) v1u32() uint32 { return uint32(d.uvarint()) }

// v1Count consumes an int32 count or length and rejects a negative one.
func (d *decoder) v1Count(what string) int {
	v := int32(d.uvarint())
	if d.err == nil && v < 0 {
		d.fail("negative %s %d", what, v)
		return 0
	}
	return int(v)
}

// v1Type consumes a version 1 type code and returns its type.
func (d *decoder) v1Type() Type {
	v := int32(d.uvarint())
	t, ok := TypeFromV1(uint64(v))
	if d.err == nil && !ok {
		d.fail("invalid field type %d", v)
	}
	return t
}

// v1Value consumes a field value of type t. static selects the original
// reader's reading of a static or constant boolean: a varint, where an
// instance's boolean is one raw byte (the original writer writes one raw
// byte in both places, which reads the same for 0 and 1).
func (d *decoder) v1Value(t Type, static bool) uint64 {
	switch t {
	case Object, Int:
		return uint64(d.v1u32())
	case Short:
		return uint64(uint16(d.v1u32()))
	case Long:
		return d.uvarint()
	case Float:
		return uint64(d.le32())
	case Double:
		return d.le64()
	case Boolean:
		// The original reader keeps a boolean as true or false, so does
		// this one: 1 or 0.
		var v uint64
		if static {
			v = d.uvarint()
		} else {
			v = uint64(d.byte())
		}
		if v != 0 {
			v = 1
		}
		return v
	case Byte:
		return uint64(d.byte())
	case Char:
		if b := d.bytes(2); b != nil {
			return uint64(binary.BigEndian.Uint16(b))
		}
		return 0
	}
	d.fail("invalid field type %d", t)
	return 0
}

func (r *V1Reader) readString(rec *V1Record, d *decoder) {
	rec.ID = d.v1u32()
	n := d.v1Count("length")
	rec.Text = d.bytes(n)
}

func (r *V1Reader) readHashedString(rec *V1Record, d *decoder) {
	rec.ID = d.v1u32()
	rec.Length = uint32(d.v1Count("length"))
	rec.Hash = int32(d.v1u32())
}

func (r *V1Reader) readClassDefinition(rec *V1Record, d *decoder) {
	r.readClass(&rec.Class, d)
	if d.err == nil && !r.lay.add(&rec.Class) {
		d.fail("class %d defined twice", rec.Class.ID)
	}
}

// Every value of an instance takes a byte, but a chain of classes without
// kept fields takes none: the classes visited walking instance chains are
// bounded by a fixed allowance plus an amount per byte read.
const (
	maxV1ChainSteps     = 1 << 20
	v1ChainStepsPerByte = 64
)

func (r *V1Reader) readInstance(rec *V1Record, d *decoder) {
	rec.ID = d.v1u32()
	rec.Of = d.v1u32()
	if d.err != nil {
		return
	}
	rec.Values = rec.Values[:0]
	n, ok := r.lay.walk(rec.Of, func(c *V1Class) bool {
		for _, f := range c.Fields {
			rec.Values = append(rec.Values, d.v1Value(f.Type, false))
		}
		return d.err == nil
	})
	if !ok {
		d.fail("object %d is an instance of class %d, which is not defined", rec.ID, rec.Of)
		return
	}
	r.steps += int64(n)
	if d.err == nil && r.steps > maxV1ChainSteps+v1ChainStepsPerByte*r.off() {
		d.fail("class chains are implausibly long for the size of the file")
	}
}

// v1IDs consumes n IDs into ids[:0].
func (d *decoder) v1IDs(ids []uint32, n int) []uint32 {
	ids = ids[:0]
	for i := 0; i < n && d.err == nil; i++ {
		ids = append(ids, d.v1u32())
	}
	return ids
}

func (r *V1Reader) readRootObjects(rec *V1Record, d *decoder) {
	rec.IDs = d.v1IDs(rec.IDs, d.v1Count("root count"))
}

func (r *V1Reader) readObjectArray(rec *V1Record, d *decoder) {
	rec.ID = d.v1u32()
	rec.Of = d.v1u32()
	rec.IDs = d.v1IDs(rec.IDs, d.v1Count("element count"))
}

func (r *V1Reader) readPrimitiveArray(rec *V1Record, d *decoder) {
	rec.ID = d.v1u32()
	rec.Type = d.v1Type()
	if d.err == nil && rec.Type == Object {
		d.fail("element type object")
		return
	}
	rec.Count = uint32(d.v1Count("element count"))
}

func (r *V1Reader) readLegacy(rec *V1Record, d *decoder) {
	tag := d.v1u32()
	n := d.v1Count("length")
	if d.err == nil && tag > 0xFF {
		d.fail("HPROF tag %d", int32(tag))
		return
	}
	rec.HTag = uint8(tag)
	rec.Text = d.bytes(n)
}

// readClass reads the body of a CLASS DEFINITION.
func (r *V1Reader) readClass(c *V1Class, d *decoder) {
	c.ID, c.Super, c.Name = d.v1u32(), d.v1u32(), d.v1u32()
	if d.err == nil && c.ID == 0 {
		d.fail("class ID 0")
		return
	}
	c.Constants = c.Constants[:0]
	for i, n := 0, d.v1Members("constants"); i < n && d.err == nil; i++ {
		k := Constant{Index: uint16(d.v1u32()), Kept: true}
		k.Type = d.v1Type()
		k.Value = d.v1Value(k.Type, true)
		c.Constants = append(c.Constants, k)
	}
	c.Statics = c.Statics[:0]
	for i, n := 0, d.v1Members("static fields"); i < n && d.err == nil; i++ {
		f := Static{Name: uint64(d.v1u32()), Kept: true}
		f.Type = d.v1Type()
		f.Value = d.v1Value(f.Type, true)
		c.Statics = append(c.Statics, f)
	}
	c.Fields = c.Fields[:0]
	for i, n := 0, d.v1Members("instance fields"); i < n && d.err == nil; i++ {
		f := Field{Name: uint64(d.v1u32()), Kept: true}
		f.Type = d.v1Type()
		c.Fields = append(c.Fields, f)
	}
	discarded := d.v1Count("discarded field size")
	if d.err == nil && discarded > MaxV1Discarded {
		d.fail("class %d: %d bytes of discarded fields is implausible", c.ID, discarded)
		return
	}
	c.Discarded = uint32(discarded)
	if d.err == nil && !c.fits() {
		d.fail("class %d: %d fields and %d bytes of discarded fields (at least %d fields) are more than the 65535 a class has",
			c.ID, len(c.Fields), discarded, MinFields(c.Discarded))
	}
}

// v1Members consumes the count of a class's constants, statics or fields:
// at most 65535, as in HPROF.
func (d *decoder) v1Members(what string) int {
	n := d.v1Count(what)
	if d.err == nil && n > 0xFFFF {
		d.fail("%d %s (HPROF allows 65535)", n, what)
	}
	return n
}

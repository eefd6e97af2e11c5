package bmd

import (
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// V1Writer writes a BMD version 1 file, byte for byte as the original
// cruncher's writer encodes each record (spec/bmd.md §11). Every ID is
// explicit and chosen by the caller. Records are buffered: call Flush at the
// end. The first error sticks and is returned by every later call.
//
// The writer refuses what would make the original reader fail or misread:
// an INSTANCE DUMP of a class not yet defined, a value count that differs
// from the class chain's kept fields, a class defined twice or with ID 0,
// counts and lengths that do not fit the original reader's int32. It does
// not check that a super class is 0 or a class of the file, which the
// original decruncher needs when it writes an instance: that is the
// caller's duty.
type V1Writer struct {
	w   io.Writer
	buf []byte
	err error
	lay v1Layouts

	// Count and Bytes count the records and bytes written per tag.
	Count [v1MaxTag + 1]uint64
	Bytes [v1MaxTag + 1]uint64
	// Header is the size of the header in bytes.
	Header int

	arrayLeft int // elements of an OBJECT ARRAY begun (BeginObjectArray) still to come
}

// NewV1Writer writes the version 1 header with the given metadata (the
// original tools stored the HPROF version text, e.g. "JAVA PROFILE 1.0.3",
// which their decruncher writes back as the HPROF header) and returns a
// V1Writer.
func NewV1Writer(w io.Writer, metadata []byte) (*V1Writer, error) {
	if len(metadata) > 1<<20 {
		return nil, fmt.Errorf("bmd: version 1 metadata of %d bytes", len(metadata))
	}
	vw := &V1Writer{w: w, buf: make([]byte, 0, 1<<17)}
	vw.buf = appendInt32(vw.buf, Version1)
	vw.buf = protowire.AppendVarint(vw.buf, uint64(len(metadata)))
	vw.buf = append(vw.buf, metadata...)
	vw.Header = len(vw.buf)
	return vw, vw.flushIf()
}

func (w *V1Writer) flushIf() error {
	if len(w.buf) >= 1<<16 {
		return w.Flush()
	}
	return w.err
}

// Flush writes buffered records to the underlying writer.
func (w *V1Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) > 0 {
		_, w.err = w.w.Write(w.buf)
		w.buf = w.buf[:0]
	}
	return w.err
}

// Err returns the first error the writer met.
func (w *V1Writer) Err() error { return w.err }

func (w *V1Writer) fail(t V1Tag, format string, a ...any) error {
	if w.err == nil {
		w.err = fmt.Errorf("bmd: version 1 %s: %s", t, fmt.Sprintf(format, a...))
	}
	return w.err
}

func (w *V1Writer) begin(t V1Tag) int {
	if w.arrayLeft > 0 {
		w.fail(t, "written while %d elements of an OBJECT ARRAY are still to come", w.arrayLeft)
	}
	start := len(w.buf)
	w.buf = appendInt32(w.buf, int32(t))
	return start
}

func (w *V1Writer) end(t V1Tag, start int) error {
	w.Count[t]++
	w.Bytes[t] += uint64(len(w.buf) - start)
	return w.flushIf()
}

func (w *V1Writer) i32(v uint32) { w.buf = appendInt32(w.buf, int32(v)) }

// ClearString writes a STRING record, a name in the clear: ID, byte
// length, bytes.
func (w *V1Writer) ClearString(id uint32, text []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(text) > 1<<31-1 {
		return w.fail(V1String, "%d bytes", len(text))
	}
	s := w.begin(V1String)
	w.i32(id)
	w.buf = protowire.AppendVarint(w.buf, uint64(len(text)))
	w.buf = append(w.buf, text...)
	return w.end(V1String, s)
}

// HashedString writes a hashed name: ID, UTF-8 byte length, Java hash
// (names.JavaHash).
func (w *V1Writer) HashedString(id, length uint32, hash int32) error {
	if w.err != nil {
		return w.err
	}
	s := w.begin(V1HashedString)
	w.i32(id)
	w.buf = protowire.AppendVarint(w.buf, uint64(length))
	w.buf = appendInt32(w.buf, hash)
	return w.end(V1HashedString, s)
}

func (w *V1Writer) typeCode(t Type) (uint32, bool) {
	c, ok := V1TypeCode(t)
	return uint32(c), ok
}

// Class writes a CLASS DEFINITION: ID, super, name, constants (index, type,
// value), statics (name, type, value), the kept instance fields (name,
// type) and the size of the others.
func (w *V1Writer) Class(c *V1Class) error {
	if w.err != nil {
		return w.err
	}
	if c.ID == 0 {
		return w.fail(V1ClassDefinition, "class ID 0")
	}
	if w.lay.has(c.ID) {
		return w.fail(V1ClassDefinition, "class %d defined twice", c.ID)
	}
	if len(c.Constants) > 0xFFFF || len(c.Statics) > 0xFFFF || len(c.Fields) > 0xFFFF {
		return w.fail(V1ClassDefinition, "class %d has too many fields", c.ID)
	}
	if !c.fits() {
		return w.fail(V1ClassDefinition, "class %d: %d fields and %d discarded bytes, more than a class has", c.ID, len(c.Fields), c.Discarded)
	}
	s := w.begin(V1ClassDefinition)
	w.i32(c.ID)
	w.i32(c.Super)
	w.i32(c.Name)
	w.i32(uint32(len(c.Constants)))
	for _, k := range c.Constants {
		code, ok := w.typeCode(k.Type)
		if !ok {
			return w.fail(V1ClassDefinition, "class %d: constant of type %d", c.ID, k.Type)
		}
		w.i32(uint32(k.Index))
		w.i32(code)
		w.buf = appendV1Value(w.buf, k.Type, k.Value)
	}
	w.i32(uint32(len(c.Statics)))
	for _, f := range c.Statics {
		code, ok := w.typeCode(f.Type)
		if !ok {
			return w.fail(V1ClassDefinition, "class %d: static of type %d", c.ID, f.Type)
		}
		w.i32(uint32(f.Name))
		w.i32(code)
		w.buf = appendV1Value(w.buf, f.Type, f.Value)
	}
	w.i32(uint32(len(c.Fields)))
	for _, f := range c.Fields {
		code, ok := w.typeCode(f.Type)
		if !ok {
			return w.fail(V1ClassDefinition, "class %d: field of type %d", c.ID, f.Type)
		}
		w.i32(uint32(f.Name))
		w.i32(code)
	}
	w.i32(c.Discarded)
	w.lay.add(c)
	return w.end(V1ClassDefinition, s)
}

// Instance writes an INSTANCE DUMP: object ID, class ID, then one value
// per field of Layout(class).
func (w *V1Writer) Instance(id, class uint32, values []uint64) error {
	if w.err != nil {
		return w.err
	}
	if !w.lay.has(class) {
		return w.fail(V1InstanceDump, "object %d: class %d is not defined", id, class)
	}
	s := w.begin(V1InstanceDump)
	w.i32(id)
	w.i32(class)
	i := 0
	w.lay.walk(class, func(c *V1Class) bool {
		for _, f := range c.Fields {
			if i < len(values) {
				w.buf = appendV1Value(w.buf, f.Type, values[i])
			}
			i++
		}
		return true
	})
	if i != len(values) {
		w.buf = w.buf[:s]
		return w.fail(V1InstanceDump, "object %d: %d values for %d kept fields", id, len(values), i)
	}
	return w.end(V1InstanceDump, s)
}

// ids ends a record that started at s with a count and a list of IDs,
// flushing as the buffer fills (a list can be long); the bytes flushed
// count for the record.
func (w *V1Writer) ids(t V1Tag, s int, ids []uint32) error {
	w.i32(uint32(len(ids)))
	flushed := 0
	for _, id := range ids {
		w.i32(id)
		if len(w.buf) >= 1<<16 {
			flushed += len(w.buf) - s
			s = 0
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
	w.Bytes[t] += uint64(flushed)
	return w.end(t, s)
}

// ObjectArray writes an OBJECT ARRAY: ID, array class ID, count, elements.
func (w *V1Writer) ObjectArray(id, class uint32, elems []uint32) error {
	if w.err != nil {
		return w.err
	}
	if len(elems) > 1<<31-1 {
		return w.fail(V1ObjectArray, "%d elements", len(elems))
	}
	s := w.begin(V1ObjectArray)
	w.i32(id)
	w.i32(class)
	return w.ids(V1ObjectArray, s, elems)
}

// BeginObjectArray begins an OBJECT ARRAY of n elements, which
// ObjectArrayElements then writes, in order and in pieces of any size: for
// an array too large to hold whole. Until its n elements are written,
// writing any other record is an error.
func (w *V1Writer) BeginObjectArray(id, class uint32, n int) error {
	if w.err != nil {
		return w.err
	}
	if n < 0 || n > 1<<31-1 {
		return w.fail(V1ObjectArray, "%d elements", n)
	}
	s := w.begin(V1ObjectArray)
	w.i32(id)
	w.i32(class)
	w.i32(uint32(n))
	w.Bytes[V1ObjectArray] += uint64(len(w.buf) - s)
	w.arrayLeft = n
	if n == 0 {
		w.Count[V1ObjectArray]++
	}
	return w.flushIf()
}

// ObjectArrayElements writes the next elements of the OBJECT ARRAY that
// BeginObjectArray began.
func (w *V1Writer) ObjectArrayElements(ids []uint32) error {
	if w.err != nil {
		return w.err
	}
	if len(ids) > w.arrayLeft {
		return w.fail(V1ObjectArray, "%d elements given, %d left to write", len(ids), w.arrayLeft)
	}
	s := len(w.buf)
	for _, id := range ids {
		w.i32(id)
	}
	w.Bytes[V1ObjectArray] += uint64(len(w.buf) - s)
	w.arrayLeft -= len(ids)
	if w.arrayLeft == 0 && len(ids) > 0 {
		w.Count[V1ObjectArray]++
	}
	return w.flushIf()
}

// PrimitiveArray writes a PRIMITIVE ARRAY PLACEHOLDER: ID, element type,
// element count.
func (w *V1Writer) PrimitiveArray(id uint32, t Type, count uint32) error {
	if w.err != nil {
		return w.err
	}
	code, ok := w.typeCode(t)
	if !ok || t == Object {
		return w.fail(V1PrimitiveArray, "object %d: element type %d", id, t)
	}
	if count > 1<<31-1 {
		return w.fail(V1PrimitiveArray, "object %d: %d elements", id, count)
	}
	s := w.begin(V1PrimitiveArray)
	w.i32(id)
	w.i32(code)
	w.i32(count)
	return w.end(V1PrimitiveArray, s)
}

// RootObjects writes ROOT OBJECTS: count, object IDs. The original cruncher
// wrote one, with every root, as the last record.
func (w *V1Writer) RootObjects(ids []uint32) error {
	if w.err != nil {
		return w.err
	}
	if len(ids) > 1<<31-1 {
		return w.fail(V1RootObjects, "%d roots", len(ids))
	}
	s := w.begin(V1RootObjects)
	return w.ids(V1RootObjects, s, ids)
}

// Legacy writes a LEGACY HPROF RECORD: the HPROF tag, the body's length and
// the body. The original decruncher writes it back as it is, so IDs in the
// body must be 4 bytes wide and mean what the file's IDs mean.
func (w *V1Writer) Legacy(tag uint8, body []byte) error {
	if w.err != nil {
		return w.err
	}
	if len(body) > 1<<31-1 {
		return w.fail(V1Legacy, "body of %d bytes", len(body))
	}
	s := w.begin(V1Legacy)
	w.i32(uint32(tag))
	w.i32(uint32(len(body)))
	w.buf = append(w.buf, body...)
	return w.end(V1Legacy, s)
}

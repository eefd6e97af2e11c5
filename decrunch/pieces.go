package decrunch

import (
	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// arrayPiece is how many elements of an object array the second pass
// reads, converts and writes at a time: an array of more is never held
// whole (bmd.Reader.MaxElements, hprof.Writer.BeginObjectArray). Held
// whole, the Object[40_000_000] of a 322.6 MB dump took 851 MB of peak RSS.
const arrayPiece = 1 << 16

// maxArrayWhole is the longest object array held whole (arrayPiece; tests
// set 0 to hold every array whole, as before arrays were read in pieces).
var maxArrayWhole = arrayPiece

// elementSource is a Source that gives the elements of a long object
// array in pieces: a *bmd.Reader whose MaxElements is set. A record of
// another Source never has elements pending.
type elementSource interface {
	NextElements(rec *bmd.Record, limit int) error
}

// The kinds of object array items, in aheadItem.elem (an object array
// has no element type): one whose elements come in the items after it,
// and such an item. aheadRun, with tag 0, marks an item of objects
// that the reader decoded a run at a time (bmd.Reader.NextObjects), and
// aheadRoot, with tag 0, a GC root (aheadBatch.roots).
const (
	aheadWhole hprof.BasicType = iota
	aheadPieces
	aheadPiece
	aheadRun
	aheadRoot
)

// beginArray begins an object array of dense IDs id and class whose
// length elements come in pieces (arrayElements).
func (c *converter) beginArray(id, class uint64, trace, length uint32) error {
	c.begun()
	hid, hclass := c.obj(id), c.obj(class)
	if err := c.canWrite(hprof.SubObjectArrayDump); err != nil {
		return err
	}
	// Refused before any of it is written, as primitiveArray does: the
	// first pass counted the array's bytes (Options.MaxOutput) only if it
	// read past it, and a file cut within the array, or whose length
	// claims more elements than it holds, asks for them all (its missing
	// elements are written as nulls).
	if size := int64(length) * int64(c.meta.IDSize); c.opt.MaxOutput > 0 && c.w.Written()+size > c.opt.MaxOutput {
		return &OutputLimitError{Limit: c.opt.MaxOutput}
	}
	if err := c.w.BeginObjectArray(hid, trace, hclass, int(length)); err != nil {
		return err
	}
	c.arrayLeft, c.arrayID = length, id
	c.st.Objects++
	return nil
}

// arrayElements writes the next elements of the array begun, dense IDs,
// made HPROF IDs in place. An ID too large for the file's IDs is written
// as null and ends the conversion (the array's other elements are then
// written as nulls too: endArray).
func (c *converter) arrayElements(elems []uint64) error {
	for i, d := range elems {
		elems[i] = c.obj(d)
	}
	c.arrayLeft -= uint32(len(elems))
	if err := c.w.ObjectArrayElements(elems); err != nil {
		return err
	}
	return c.overflowed()
}

// endArray writes as nulls the elements of the array begun that are still
// to come, if any, so that the HPROF stays well formed when damage or an
// ID too large ends the conversion within the array.
func (c *converter) endArray() {
	if c.arrayLeft == 0 {
		return
	}
	nulls := make([]uint64, min(c.arrayLeft, arrayPiece))
	for c.arrayLeft > 0 {
		n := min(c.arrayLeft, uint32(len(nulls)))
		if c.w.ObjectArrayElements(nulls[:n]) != nil {
			break
		}
		c.arrayLeft -= n
	}
	c.arrayLeft = 0
}

// objectArrayPieces writes an object array whose elements src gives in
// pieces (one goroutine: runOne).
func (c *converter) objectArrayPieces(src elementSource, rec *bmd.Record) error {
	if err := c.beginArray(rec.ID, rec.Class, rec.Trace, rec.Count); err != nil {
		return err
	}
	for rec.Pending > 0 {
		if err := src.NextElements(rec, arrayPiece); err != nil {
			return err
		}
		if err := c.arrayElements(rec.Elements); err != nil {
			return err
		}
	}
	return nil
}

// aheadPiece reads the next piece of the elements of the array
// c.piecesOf into b (two goroutines: the reader's side), and reports
// whether it could.
func (c *converter) aheadPiece(src elementSource, b *aheadBatch) bool {
	rec := c.piecesOf
	if err := src.NextElements(rec, arrayPiece); err != nil {
		b.err, c.piecesOf = err, nil
		return false
	}
	it := aheadItem{tag: hprof.SubObjectArrayDump, elem: aheadPiece, lo: uint32(len(b.vals))}
	b.vals = append(b.vals, rec.Elements...)
	it.hi = uint32(len(b.vals))
	b.items = append(b.items, it)
	if rec.Pending == 0 {
		c.piecesOf = nil
	}
	return true
}

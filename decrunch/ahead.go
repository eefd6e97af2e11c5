package decrunch

import (
	"encoding/binary"
	"io"
	"slices"
	"unsafe"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// The second pass runs on two goroutines: one reads the BMD records and
// turns the objects (instances and arrays, nearly all of a file) into
// HPROF sub-records, which needs only the file and the ID mapping; the
// other writes the HPROF in order, and handles every other record as the
// first pass's reading does. Batches go from the first to the second and
// back for reuse.

// aheadItem is a record read ahead: an object made into an HPROF
// sub-record, or a copy of any other record.
type aheadItem struct {
	rec      *bmd.Record // a record other than an object, or nil
	tag      hprof.SubTag
	elem     hprof.BasicType
	overflow bool // an ID did not fit the dump's identifier size
	trace    uint32
	length   uint32 // primitive array length
	id       uint64 // HPROF IDs
	class    uint64
	lo, hi   uint32 // instance data in batch.data, array elements in batch.elems
}

// aheadBatch is a run of items and the data they point to.
type aheadBatch struct {
	items []aheadItem
	data  []byte
	elems []uint64
	held  int   // bytes held by the copied records
	err   error // the reading error after the items, if any
}

const (
	aheadItems = 4096
	aheadData  = 1 << 20
	aheadElems = 1 << 17
)

func (b *aheadBatch) full() bool {
	return len(b.items) >= aheadItems || len(b.data)+b.held >= aheadData || len(b.elems) >= aheadElems
}

// readAhead reads src into batches until the end, an error, or done.
func (c *converter) readAhead(src Source, out chan<- *aheadBatch, free chan *aheadBatch, done <-chan struct{}) {
	defer close(out)
	b := <-free
	for {
		rec, err := src.Next()
		if err != nil {
			if err != io.EOF {
				b.err = err
			}
			break
		}
		c.ahead(src, b, rec)
		if !b.full() {
			continue
		}
		select {
		case out <- b:
		case <-done:
			return
		}
		select {
		case b = <-free:
			b.items, b.data, b.elems, b.held, b.err = b.items[:0], b.data[:0], b.elems[:0], 0, nil
		case <-done:
			return
		}
	}
	select {
	case out <- b:
	case <-done:
	}
}

// ahead adds a record to the batch: an object as its sub-record, any
// other record as a copy.
func (c *converter) ahead(src Source, b *aheadBatch, rec *bmd.Record) {
	it := aheadItem{trace: rec.Trace}
	var ok [3]bool
	switch rec.Kind {
	case bmd.KindInstance:
		it.tag = hprof.SubInstanceDump
		it.lo = uint32(len(b.data))
		b.data, ok[0] = c.instanceData(b.data, src, rec)
		it.hi = uint32(len(b.data))
		it.id, ok[1] = c.ids.id(rec.ID)
		it.class, ok[2] = c.ids.id(rec.Class)
	case bmd.KindObjectArray:
		it.tag = hprof.SubObjectArrayDump
		it.lo = uint32(len(b.elems))
		ok[0] = true
		for _, e := range rec.Elements {
			v, good := c.ids.id(e)
			ok[0] = ok[0] && good
			b.elems = append(b.elems, v)
		}
		it.hi = uint32(len(b.elems))
		it.id, ok[1] = c.ids.id(rec.ID)
		it.class, ok[2] = c.ids.id(rec.Class)
	case bmd.KindPrimitiveArray, bmd.KindPrimitiveNoData:
		it.tag = hprof.SubPrimitiveArrayDump
		if rec.Kind == bmd.KindPrimitiveNoData {
			it.tag = hprof.SubPrimitiveArrayNoData
		}
		it.length, it.elem = rec.Count, hprof.BasicType(rec.Type)
		it.id, ok[0] = c.ids.id(rec.ID)
		ok[1], ok[2] = true, true
	case bmd.KindString, bmd.KindHashedString, bmd.KindArrayName, bmd.KindLoadClass,
		bmd.KindTrace, bmd.KindEnd, bmd.KindObjectID:
		return // nothing for the second pass to write (see rest)
	default:
		it.rec = copyRecord(rec)
		b.held += recordSize(it.rec)
		b.items = append(b.items, it)
		return
	}
	it.overflow = !(ok[0] && ok[1] && ok[2])
	b.items = append(b.items, it)
}

// instanceData appends the HPROF field data of an instance to data; ok is
// false if an ID does not fit.
func (c *converter) instanceData(data []byte, src Source, rec *bmd.Record) ([]byte, bool) {
	lay, _ := src.Layout(rec.Class)
	ok := true
	for i, f := range lay {
		v := rec.Values[i]
		if f.Type == bmd.Object {
			id, good := c.ids.id(v)
			ok = ok && good
			data = c.enc.AppendID(data, id)
			continue
		}
		switch f.Type.Size() {
		case 1:
			data = append(data, byte(v))
		case 2:
			data = binary.BigEndian.AppendUint16(data, uint16(v))
		case 4:
			data = binary.BigEndian.AppendUint32(data, uint32(v))
		case 8:
			data = binary.BigEndian.AppendUint64(data, v)
		}
	}
	return data, ok
}

// copyRecord returns a copy of rec that shares nothing with it.
func copyRecord(rec *bmd.Record) *bmd.Record {
	cp := *rec
	cp.Text = slices.Clone(rec.Text)
	cp.Frames = slices.Clone(rec.Frames)
	cp.Values, cp.Elements = nil, nil
	cp.Def.Constants = slices.Clone(rec.Def.Constants)
	cp.Def.Statics = slices.Clone(rec.Def.Statics)
	cp.Def.Fields = slices.Clone(rec.Def.Fields)
	return &cp
}

// recordSize returns the bytes that a copied record holds apart from
// its struct, so that a batch of records with long names stays small.
func recordSize(rec *bmd.Record) int {
	d := &rec.Def
	return len(rec.Text) + 8*len(rec.Frames) + int(unsafe.Sizeof(bmd.Constant{}))*len(d.Constants) +
		int(unsafe.Sizeof(bmd.Static{}))*len(d.Statics) + int(unsafe.Sizeof(bmd.Field{}))*len(d.Fields)
}

// runAhead is run (with rest) on two goroutines: see above.
func (c *converter) runAhead(src Source) error {
	c.source = src
	batches := make(chan *aheadBatch)
	free := make(chan *aheadBatch, 3)
	for range 3 {
		// At their full size at once: grown by append, a quarter at a
		// time, the buffers would be copied several times over.
		free <- &aheadBatch{items: make([]aheadItem, 0, aheadItems), data: make([]byte, 0, aheadData), elems: make([]uint64, 0, aheadElems)}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		c.readAhead(src, batches, free, done)
	}()
	defer func() {
		close(done)
		<-finished
	}()
	for b := range batches {
		if err := c.writeAhead(b); err != nil {
			return err
		}
		if b.err != nil {
			return b.err
		}
		free <- b
	}
	return nil
}

// writeAhead writes the items of a batch.
func (c *converter) writeAhead(b *aheadBatch) error {
	for i := range b.items {
		if c.idOverflow {
			return errIDOverflow(c.meta.IDSize)
		}
		it := &b.items[i]
		if it.rec != nil {
			if it.rec.Kind == bmd.KindTime {
				c.time = it.rec.Time
				continue
			}
			if err := c.rest(it.rec); err != nil {
				return err
			}
			continue
		}
		c.idOverflow = c.idOverflow || it.overflow
		c.st.Objects++
		c.s.Tag, c.s.ID, c.s.StackTrace = it.tag, it.id, it.trace
		switch it.tag {
		case hprof.SubInstanceDump:
			c.s.ClassID, c.s.Data = it.class, b.data[it.lo:it.hi]
		case hprof.SubObjectArrayDump:
			c.s.ClassID, c.s.Elements = it.class, b.elems[it.lo:it.hi]
		default:
			// Refuse what the array asks for before writing any of it.
			if size := int64(it.length) * int64(it.elem.Size(c.meta.IDSize)); c.opt.MaxOutput > 0 && c.w.Written()+size > c.opt.MaxOutput {
				return &OutputLimitError{Limit: c.opt.MaxOutput}
			}
			c.s.Length, c.s.ElemType, c.s.Data = it.length, it.elem, nil
		}
		err := c.sub(&c.s)
		c.s.Data, c.s.Elements = nil, nil
		if err != nil {
			return err
		}
	}
	return nil
}

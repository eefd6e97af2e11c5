// Command scaleheap writes a larger heap dump made of a real one, for
// measurements on the shape of a real dump (an Android dump's small
// segments, heap infos, root kinds, classes and names) at a size that no
// real dump at hand has:
//
//	scaleheap [-n COPIES] [-segsize BYTES] IN.hprof OUT.hprof
//
// OUT.hprof has IN.hprof's records, and its heap's objects (instances and
// arrays) COPIES times over: each copy with IDs of its own, its references
// to objects of the same copy, its GC roots (but those of classes, which
// are not copied) and, on Android, its objects in the same heaps. Classes,
// names, threads and traces are written once. Object IDs are numbered
// again, 8 apart in the order of the old ones, above the largest old one,
// so that a copy's objects lie in the order of the originals; references
// to IDs that are not objects of the dump (dangling) are kept as they are.
// Primitive arrays keep their contents. The heap dump is written in
// segments of at most BYTES (default: 4 KiB for an Android dump, as ART
// writes them; 1 MiB for others). IN.hprof holds one heap dump: HEAP DUMP
// SEGMENTs that no other record comes between, or one HEAP DUMP record.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/heapcrunch/heapcrunch/hprof"
)

func main() {
	n := flag.Int("n", 10, "copies of the heap's objects")
	seg := flag.Int("segsize", 0, "largest heap dump segment body in bytes (0: 4 KiB for JAVA PROFILE 1.0.3, else 1 MiB)")
	flag.Parse()
	if flag.NArg() != 2 || *n < 1 || *seg < 0 {
		fmt.Fprintln(os.Stderr, "usage: scaleheap [-n COPIES] [-segsize BYTES] IN.hprof OUT.hprof")
		os.Exit(2)
	}
	if err := scaleFile(flag.Arg(0), flag.Arg(1), *n, *seg); err != nil {
		fmt.Fprintln(os.Stderr, "scaleheap:", err)
		os.Exit(1)
	}
}

// scaleFile writes the dump in, its objects n times over, to out, which it
// removes if that fails.
func scaleFile(in, out string, n, segSize int) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	o, err := os.CreateTemp(filepath.Dir(out), ".scaleheap-*")
	if err != nil {
		return err
	}
	if err := o.Chmod(0o644); err != nil {
		o.Close()
		os.Remove(o.Name())
		return err
	}
	bw := bufio.NewWriterSize(o, 1<<20)
	err = scale(f, bw, n, segSize)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := o.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(o.Name(), out)
	}
	if err != nil {
		os.Remove(o.Name())
	}
	return err
}

// dump is what the first reading finds: the dump's object IDs and where
// the instances of its classes hold references.
type dump struct {
	ids    []uint64         // every object ID, classes' too, sorted
	refs   map[uint64][]int // by class ID: the offsets of the reference fields in an instance's data
	base   uint64           // the first new ID
	per    uint64           // objects a copy numbers (len(ids))
	idSize int
}

// isClass reports whether id is a class of the dump.
func (d *dump) isClass(id uint64) bool {
	_, ok := d.refs[id]
	return ok
}

// scale reads src twice: for its objects, then to write them n times over.
func scale(src io.ReadSeeker, out io.Writer, n, segSize int) error {
	d, err := survey(src)
	if err != nil {
		return err
	}
	if top := d.base + 8*d.per*uint64(n); d.idSize == 4 && top > 1<<32 {
		return fmt.Errorf("%d copies of %d objects need IDs up to %#x, past what 4-byte IDs number", n, d.per, top)
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r, err := hprof.NewReader(src)
	if err != nil {
		return err
	}
	h := r.Header()
	w, err := hprof.NewWriter(out, h)
	if err != nil {
		return err
	}
	w.SegmentSize = segSize
	if segSize == 0 {
		w.SegmentSize = hprof.DefaultSegmentSize
		if h.Version == "JAVA PROFILE 1.0.3" {
			w.SegmentSize = 4 << 10
		}
	}
	dec, enc := hprof.BodyDecoder{IDSize: h.IDSize}, w.Encoder()
	var heapStart int64 = -1
	var heapTag hprof.Tag
	var body []byte
	ended := false
	for rec, err := range r.Records() {
		if err != nil {
			return err
		}
		if heapStart >= 0 && !ended && !rec.Tag.IsHeapDump() && rec.Tag != hprof.TagHeapDumpEnd {
			if heapTag != hprof.TagHeapDump {
				return fmt.Errorf("a %v record at offset %d between heap dump segments", rec.Tag, rec.Offset)
			}
			ended = true // one HEAP DUMP record, and records after it
			if err := d.endHeap(src, heapStart, w, n); err != nil {
				return err
			}
		}
		switch {
		case rec.Tag.IsHeapDump():
			if heapStart < 0 {
				heapStart, heapTag = rec.Offset, rec.Tag
				if err := w.BeginHeapDump(rec.Tag, rec.Time); err != nil {
					return err
				}
			}
			if err := d.writeHeap(r, w, 0); err != nil {
				return err
			}
			continue
		case rec.Tag == hprof.TagHeapDumpEnd:
			if heapStart < 0 {
				return errors.New("a HEAP DUMP END before any heap dump")
			}
			ended = true
			if err := d.endHeap(src, heapStart, w, n); err != nil {
				return err
			}
			// The Writer closes with a HEAP DUMP END only a HEAP DUMP it
			// cut into segments; segments begun as such, the file's.
			if err := w.WriteRecord(rec.Tag, rec.Time, nil); err != nil {
				return err
			}
			continue
		}
		b, err := r.Body()
		if err != nil {
			return err
		}
		if body, err = d.recordBody(dec, enc, rec, b, body[:0]); err != nil {
			return err
		}
		if err := w.WriteRecord(rec.Tag, rec.Time, body); err != nil {
			return err
		}
	}
	if heapStart >= 0 && !ended { // one HEAP DUMP record, as JDK 8 writes
		if err := d.endHeap(src, heapStart, w, n); err != nil {
			return err
		}
	}
	return w.Flush()
}

// endHeap writes copies 1 to n-1 of the heap dump's objects, then ends
// the heap dump.
func (d *dump) endHeap(src io.ReadSeeker, heapStart int64, w *hprof.Writer, n int) error {
	pos, err := src.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if err := d.copies(src, heapStart, w, n); err != nil {
		return err
	}
	if _, err := src.Seek(pos, io.SeekStart); err != nil {
		return err
	}
	return w.EndHeapDump()
}

// recordBody returns the body b of a top-level record with its object
// IDs numbered again, in buf.
func (d *dump) recordBody(dec hprof.BodyDecoder, enc hprof.BodyEncoder, rec hprof.Record, b, buf []byte) ([]byte, error) {
	switch rec.Tag {
	case hprof.TagLoadClass:
		l, err := dec.ParseLoadClass(rec, b)
		if err != nil {
			return nil, err
		}
		l.ClassID = d.id(l.ClassID, 0)
		return enc.AppendLoadClass(buf, l), nil
	case hprof.TagStartThread:
		t, err := dec.ParseStartThread(rec, b)
		if err != nil {
			return nil, err
		}
		t.Object = d.id(t.Object, 0)
		return enc.AppendStartThread(buf, t), nil
	}
	return append(buf, b...), nil
}

// copies writes copies 1 to n-1 of the objects of the heap dump whose
// first record is at offset start of src.
func (d *dump) copies(src io.ReadSeeker, start int64, w *hprof.Writer, n int) error {
	for k := 1; k < n; k++ {
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return err
		}
		r, err := hprof.NewReader(src)
		if err != nil {
			return err
		}
		for rec, err := range r.Records() {
			if err != nil {
				return err
			}
			if rec.Offset < start {
				continue
			}
			if !rec.Tag.IsHeapDump() {
				break // its end
			}
			if err := d.writeHeap(r, w, k); err != nil {
				return err
			}
		}
	}
	return nil
}

// survey reads the dump's object IDs and class layouts.
func survey(src io.Reader) (*dump, error) {
	r, err := hprof.NewReader(src)
	if err != nil {
		return nil, err
	}
	r.SkipElements = true
	d := &dump{refs: map[uint64][]int{}, idSize: r.IDSize()}
	dumps := map[uint64]*hprof.ClassDump{}
	heaps, ended := 0, false
	for rec, err := range r.Records() {
		if err != nil {
			return nil, err
		}
		if rec.Tag == hprof.TagHeapDumpEnd {
			ended = true
		}
		if !rec.Tag.IsHeapDump() {
			continue
		}
		if ended {
			return nil, errors.New("more than one heap dump")
		}
		heaps++
		for s, err := range r.SubRecords() {
			if err != nil {
				return nil, err
			}
			switch s.Tag {
			case hprof.SubClassDump:
				dumps[s.ID] = s.Class.Clone()
				d.ids = append(d.ids, s.ID)
			case hprof.SubInstanceDump, hprof.SubObjectArrayDump, hprof.SubPrimitiveArrayDump, hprof.SubPrimitiveArrayNoData:
				d.ids = append(d.ids, s.ID)
			}
		}
	}
	if heaps == 0 {
		return nil, errors.New("no heap dump")
	}
	if heaps > 1 && !ended {
		return nil, errors.New("heap dump segments with no HEAP DUMP END")
	}
	slices.Sort(d.ids)
	d.ids = slices.Compact(d.ids)
	d.per = uint64(len(d.ids))
	if len(d.ids) > 0 {
		d.base = (d.ids[len(d.ids)-1] + 1<<20) &^ (1<<20 - 1)
	}
	for id := range dumps {
		d.refs[id] = refsOf(dumps, id, d.idSize)
	}
	return d, nil
}

// refsOf returns where instances of class id hold references: the
// offsets of its own fields first, then its superclass's, up the chain.
func refsOf(dumps map[uint64]*hprof.ClassDump, id uint64, idSize int) []int {
	var refs []int
	off := 0
	for c, seen := id, 0; c != 0; seen++ {
		cd, ok := dumps[c]
		if !ok || seen > len(dumps) {
			break // a superclass not in the dump, or a loop
		}
		for _, f := range cd.Fields {
			if f.Type == hprof.Object {
				refs = append(refs, off)
			}
			off += f.Type.Size(idSize)
		}
		c = cd.Super
	}
	return refs
}

// id returns the new ID of old ID v in copy k: classes are in copy 0
// only, and an ID that is not an object of the dump stays as it is.
func (d *dump) id(v uint64, k int) uint64 {
	i, ok := slices.BinarySearch(d.ids, v)
	if !ok || v == 0 {
		return v
	}
	if d.isClass(v) {
		k = 0
	}
	return d.base + 8*(uint64(k)*d.per+uint64(i))
}

// writeHeap writes the sub-records of the heap dump record r is at, as
// copy k: all of them for copy 0; for the others the objects, their heap
// infos and the roots of objects that are not classes.
func (d *dump) writeHeap(r *hprof.Reader, w *hprof.Writer, k int) error {
	r.ArrayData, r.SkipElements, r.MaxElements = true, false, 0
	for s, err := range r.SubRecords() {
		if err != nil {
			return err
		}
		switch s.Tag {
		case hprof.SubClassDump:
			if k > 0 {
				continue
			}
			c := &s.Class
			c.ID, c.Super, c.Loader = d.id(c.ID, 0), d.id(c.Super, 0), d.id(c.Loader, 0)
			c.Signers, c.ProtectionDomain = d.id(c.Signers, 0), d.id(c.ProtectionDomain, 0)
			for i := range c.Statics {
				if c.Statics[i].Type == hprof.Object {
					c.Statics[i].Value = d.id(c.Statics[i].Value, 0)
				}
			}
			for i := range c.Constants {
				if c.Constants[i].Type == hprof.Object {
					c.Constants[i].Value = d.id(c.Constants[i].Value, 0)
				}
			}
			s.ID = c.ID
		case hprof.SubInstanceDump:
			for _, off := range d.refs[s.ClassID] {
				if off+d.idSize <= len(s.Data) {
					d.putID(s.Data[off:], d.id(d.getID(s.Data[off:]), k))
				}
			}
			s.ID, s.ClassID = d.id(s.ID, k), d.id(s.ClassID, 0)
		case hprof.SubObjectArrayDump:
			for i, e := range s.Elements {
				s.Elements[i] = d.id(e, k)
			}
			s.ID, s.ClassID = d.id(s.ID, k), d.id(s.ClassID, 0)
		case hprof.SubPrimitiveArrayDump, hprof.SubPrimitiveArrayNoData:
			s.ID = d.id(s.ID, k)
		case hprof.SubHeapDumpInfo:
		default: // a root
			if k > 0 && d.isClass(s.ID) {
				continue
			}
			s.ID = d.id(s.ID, k)
		}
		if err := w.WriteSub(s); err != nil {
			return err
		}
	}
	return nil
}

// getID reads an ID at the start of b.
func (d *dump) getID(b []byte) uint64 {
	var v uint64
	for _, c := range b[:d.idSize] {
		v = v<<8 | uint64(c)
	}
	return v
}

// putID writes ID v at the start of b.
func (d *dump) putID(b []byte, v uint64) {
	for i := d.idSize - 1; i >= 0; i-- {
		b[i] = byte(v)
		v >>= 8
	}
}

// Package heapstat summarizes an HPROF dump the way a round-trip check
// needs: per class name, instance counts, array lengths, non-null
// references and payload sizes, and GC roots by kind (Summarize); every
// heap record with IDs renumbered (Canonical); the names an app's own files
// would give (AppNames); the layout Eclipse MAT infers (MATLayout). Two
// dumps with the same summary have the same object graph up to object IDs.
// It holds the dump in memory: it is for tests and checks on small dumps.
package heapstat

import (
	"bytes"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// Walk calls f for every top-level record (s nil) and every heap
// sub-record of the dump in data, and returns the first error, the
// reader's or f's.
func Walk(data []byte, f func(rec hprof.Record, r *hprof.Reader, s *hprof.SubRecord) error) error {
	return walk(data, false, f)
}

// walk is Walk, with the elements of primitive arrays in their
// sub-records' Data if arrays is set (hprof.Reader.ArrayData).
func walk(data []byte, arrays bool, f func(rec hprof.Record, r *hprof.Reader, s *hprof.SubRecord) error) error {
	r, err := hprof.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	r.ArrayData = arrays
	for rec, err := range r.Records() {
		if err != nil {
			return err
		}
		if !rec.Tag.IsHeapDump() {
			if err := f(rec, r, nil); err != nil {
				return err
			}
			continue
		}
		for s, err := range r.SubRecords() {
			if err != nil {
				return err
			}
			if err := f(rec, r, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReadAll reads every record and sub-record of the dump in data and
// returns the reader's first error: nil if the dump reads to its end.
func ReadAll(data []byte) error {
	return Walk(data, func(hprof.Record, *hprof.Reader, *hprof.SubRecord) error { return nil })
}

// index is what a first walk of a dump learns: its header, the texts of
// its STRING records, the name of each class (LOAD CLASS) and each class's
// first CLASS DUMP.
type index struct {
	version string
	idSize  int
	strs    map[uint64]string
	names   map[uint64]uint64 // class ID -> name string ID
	classes map[uint64]*hprof.ClassDump
	order   []uint64 // class IDs in the order of their first dumps
}

func newIndex(data []byte) (*index, error) {
	ix := &index{strs: map[uint64]string{}, names: map[uint64]uint64{}, classes: map[uint64]*hprof.ClassDump{}}
	err := Walk(data, func(rec hprof.Record, r *hprof.Reader, s *hprof.SubRecord) error {
		ix.idSize, ix.version = r.IDSize(), r.Header().Version
		dec := hprof.BodyDecoder{IDSize: ix.idSize}
		switch {
		case s == nil && rec.Tag == hprof.TagString:
			b, err := r.Body()
			if err != nil {
				return err
			}
			id, t, err := dec.ParseString(rec, b)
			if err != nil {
				return err
			}
			// ID 0 is null: no reference names it, whatever a STRING
			// record with ID 0 says (spec §6.3).
			if _, dup := ix.strs[id]; !dup && id != 0 {
				ix.strs[id] = string(t)
			}
		case s == nil && rec.Tag == hprof.TagLoadClass:
			b, err := r.Body()
			if err != nil {
				return err
			}
			lc, err := dec.ParseLoadClass(rec, b)
			if err != nil {
				return err
			}
			ix.names[lc.ClassID] = lc.Name
		case s != nil && s.Tag == hprof.SubClassDump:
			if _, dup := ix.classes[s.ID]; !dup {
				ix.classes[s.ID] = s.Class.Clone()
				ix.order = append(ix.order, s.ID)
			}
		}
		return nil
	})
	return ix, err
}

// className returns the name of the class with ID id.
func (ix *index) className(id uint64) string {
	if n, ok := ix.names[id]; ok {
		return ix.strs[n]
	}
	return "<no name>"
}

// objectFields calls f for each object field of an instance, its class's
// fields first, then its super classes', with the field's name string ID
// and value.
func (ix *index) objectFields(s *hprof.SubRecord, f func(name, value uint64)) {
	ix.fields(s, func(name uint64, t hprof.BasicType, v uint64) {
		if t == hprof.Object {
			f(name, v)
		}
	})
}

// fields calls f for each field of an instance, in the order of
// objectFields, with the field's name string ID, type and value.
func (ix *index) fields(s *hprof.SubRecord, f func(name uint64, t hprof.BasicType, value uint64)) {
	p := 0
	seen := 0
	for c := ix.classes[s.ClassID]; c != nil && seen <= len(ix.classes); c = ix.classes[c.Super] {
		seen++
		for _, fd := range c.Fields {
			n := fd.Type.Size(ix.idSize)
			if n > 0 && p+n <= len(s.Data) {
				var v uint64
				for _, b := range s.Data[p : p+n] {
					v = v<<8 | uint64(b)
				}
				f(fd.Name, fd.Type, v)
			}
			p += n
		}
		if c.Super == 0 {
			break
		}
	}
}

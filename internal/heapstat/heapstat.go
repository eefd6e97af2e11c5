// Package heapstat summarizes an HPROF dump the way a round-trip check
// needs: per class name, instance counts, array lengths, non-null
// references and payload sizes, and GC roots by kind. Two dumps with the
// same summary have the same object graph up to object IDs. It holds the
// dump in memory: it is for tests and checks on small dumps.
package heapstat

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"sort"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// ClassStat is what a summary records for one class.
type ClassStat struct {
	Instances    int64
	Refs         int64 // non-null object references from instances or array elements
	Elements     int64 // sum of array lengths
	PayloadBytes int64 // instance field bytes, or array element bytes
	InstanceSize uint32
	Fields       int
	Statics      int
	StaticRefs   int64
}

// Summary is the summary of a dump.
type Summary struct {
	Version string
	IDSize  int
	Classes map[string]*ClassStat
	Roots   map[string]int64
	Objects int64
}

func walk(data []byte, f func(rec hprof.Record, r *hprof.Reader, s *hprof.SubRecord) error) error {
	r, err := hprof.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	var s hprof.SubRecord
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !rec.Tag.IsHeapDump() {
			if err := f(rec, r, nil); err != nil {
				return err
			}
			continue
		}
		for {
			err := r.NextSub(&s)
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if err := f(rec, r, &s); err != nil {
				return err
			}
		}
	}
}

// Summarize summarizes the HPROF dump in data.
func Summarize(data []byte) (*Summary, error) {
	strs := map[uint64]string{}
	names := map[uint64]uint64{}
	classes := map[uint64]*hprof.ClassDump{}
	sum := &Summary{Classes: map[string]*ClassStat{}, Roots: map[string]int64{}}
	var idSize int
	// Pass 1: names and class layouts.
	err := walk(data, func(rec hprof.Record, r *hprof.Reader, s *hprof.SubRecord) error {
		idSize = r.IDSize()
		sum.Version, sum.IDSize = r.Header().Version, idSize
		dec := hprof.BodyDecoder{IDSize: idSize}
		if s == nil {
			switch rec.Tag {
			case hprof.TagString:
				b, err := r.Body()
				if err != nil {
					return err
				}
				id, t, err := dec.String(rec, b)
				if err != nil {
					return err
				}
				strs[id] = string(t)
			case hprof.TagLoadClass:
				b, err := r.Body()
				if err != nil {
					return err
				}
				lc, err := dec.LoadClass(rec, b)
				if err != nil {
					return err
				}
				names[lc.ClassID] = lc.Name
			}
			return nil
		}
		if s.Tag == hprof.ClassDumpTag {
			classes[s.ID] = s.Class.Clone()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	className := func(id uint64) string {
		if n, ok := names[id]; ok {
			return strs[n]
		}
		return "<no name>"
	}
	stat := func(name string) *ClassStat {
		c := sum.Classes[name]
		if c == nil {
			c = &ClassStat{}
			sum.Classes[name] = c
		}
		return c
	}
	for id, c := range classes {
		cs := stat(className(id))
		cs.InstanceSize, cs.Fields, cs.Statics = c.InstanceSize, len(c.Fields), len(c.Statics)
		for _, f := range c.Statics {
			if f.Type == hprof.Object && f.Value != 0 {
				cs.StaticRefs++
			}
		}
	}
	primName := map[hprof.BasicType]string{}
	for t := hprof.Boolean; t <= hprof.Long; t++ {
		primName[t] = t.String() + "[]"
	}
	err = walk(data, func(rec hprof.Record, r *hprof.Reader, s *hprof.SubRecord) error {
		if s == nil {
			return nil
		}
		switch {
		case s.Tag.IsRoot():
			sum.Roots[s.Tag.String()]++
		case s.Tag == hprof.InstanceDumpTag:
			sum.Objects++
			cs := stat(className(s.ClassID))
			cs.Instances++
			cs.PayloadBytes += int64(len(s.Data))
			p := 0
			for c := classes[s.ClassID]; c != nil; c = classes[c.Super] {
				for _, f := range c.Fields {
					if f.Type == hprof.Object && p+idSize <= len(s.Data) {
						var v uint64
						if idSize == 4 {
							v = uint64(binary.BigEndian.Uint32(s.Data[p:]))
						} else {
							v = binary.BigEndian.Uint64(s.Data[p:])
						}
						if v != 0 {
							cs.Refs++
						}
					}
					p += f.Type.Size(idSize)
				}
				if c.Super == 0 {
					break
				}
			}
		case s.Tag == hprof.ObjectArrayDumpTag:
			sum.Objects++
			cs := stat(className(s.ClassID))
			cs.Instances++
			cs.Elements += int64(s.Length)
			cs.PayloadBytes += int64(s.Length) * int64(idSize)
			for _, e := range s.Elements {
				if e != 0 {
					cs.Refs++
				}
			}
		case s.Tag == hprof.PrimitiveArrayTag, s.Tag == hprof.PrimitiveArrayNoData:
			sum.Objects++
			cs := stat(primName[s.ElemType])
			cs.Instances++
			cs.Elements += int64(s.Length)
			cs.PayloadBytes += int64(s.Length) * int64(s.ElemType.Size(idSize))
		}
		return nil
	})
	return sum, err
}

// Diff returns the differences between two summaries, one per line.
func Diff(a, b *Summary) []string {
	var out []string
	if a.Version != b.Version || a.IDSize != b.IDSize {
		out = append(out, fmt.Sprintf("header %s/%d vs %s/%d", a.Version, a.IDSize, b.Version, b.IDSize))
	}
	if a.Objects != b.Objects {
		out = append(out, fmt.Sprintf("objects %d vs %d", a.Objects, b.Objects))
	}
	keys := map[string]bool{}
	for k := range a.Classes {
		keys[k] = true
	}
	for k := range b.Classes {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		x, y := a.Classes[k], b.Classes[k]
		if x == nil || y == nil || *x != *y {
			out = append(out, fmt.Sprintf("class %s: %+v vs %+v", k, x, y))
		}
	}
	roots := map[string]bool{}
	for k := range a.Roots {
		roots[k] = true
	}
	for k := range b.Roots {
		roots[k] = true
	}
	for k := range roots {
		if a.Roots[k] != b.Roots[k] {
			out = append(out, fmt.Sprintf("roots %s: %d vs %d", k, a.Roots[k], b.Roots[k]))
		}
	}
	sort.Strings(out)
	return out
}

// AppNames returns what an app's own files (APK, DEX, JAR) would give a
// name recovery for the dump in data: the names of the classes that the
// boot class loader did not load (CLASS DUMP with a non-zero class loader)
// and the names of the fields and statics they declare, sorted, each once.
func AppNames(data []byte) ([]string, error) {
	strs := map[uint64]string{}
	names := map[uint64]uint64{}
	var sids []uint64
	err := walk(data, func(rec hprof.Record, r *hprof.Reader, s *hprof.SubRecord) error {
		dec := hprof.BodyDecoder{IDSize: r.IDSize()}
		switch {
		case s == nil && rec.Tag == hprof.TagString:
			b, err := r.Body()
			if err != nil {
				return err
			}
			id, t, err := dec.String(rec, b)
			if err != nil {
				return err
			}
			strs[id] = string(t)
		case s == nil && rec.Tag == hprof.TagLoadClass:
			b, err := r.Body()
			if err != nil {
				return err
			}
			lc, err := dec.LoadClass(rec, b)
			if err != nil {
				return err
			}
			names[lc.ClassID] = lc.Name
		case s != nil && s.Tag == hprof.ClassDumpTag && s.Class.Loader != 0:
			sids = append(sids, names[s.ID]|1<<63) // resolved below: LOAD CLASS may come later
			sids = append(sids, s.ID)
			for _, f := range s.Class.Statics {
				sids = append(sids, f.Name)
			}
			for _, f := range s.Class.Fields {
				sids = append(sids, f.Name)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for i := 0; i < len(sids); i++ {
		sid := sids[i]
		if sid>>63 == 1 { // a class: its name by its ID, which follows
			i++
			sid = names[sids[i]]
		}
		if t, ok := strs[sid]; ok {
			set[t] = true
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}

// MATLayout returns what Eclipse MAT infers of a dump's heap layout from its
// object IDs, by the rules of its HPROF parser (plugins/org.eclipse.mat.hprof
// at 26cff26c): references are compressed when the dump has 8-byte IDs and
// an object array, in file order, starts after the previous object array
// and before that one's end with 16 bytes of header and 8-byte references
// (Pass1Parser.readObjectArrayDump); the object alignment is the greatest
// common divisor of the differences between the sorted object IDs, classes
// included, clamped to 8…256 (HprofParserHandlerImpl.calculateAlignment).
func MATLayout(data []byte) (compressedRefs bool, alignment uint64, err error) {
	var ids []uint64
	var start, end uint64
	err = walk(data, func(rec hprof.Record, r *hprof.Reader, s *hprof.SubRecord) error {
		if s == nil {
			return nil
		}
		switch s.Tag {
		case hprof.ClassDumpTag, hprof.InstanceDumpTag, hprof.PrimitiveArrayTag, hprof.PrimitiveArrayNoData:
			ids = append(ids, s.ID)
		case hprof.ObjectArrayDumpTag:
			ids = append(ids, s.ID)
			if r.IDSize() == 8 && s.ID > start && s.ID < end {
				compressedRefs = true
			}
			start, end = s.ID, s.ID+16+uint64(s.Length)*8
		}
		return nil
	})
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var prev, align uint64
	for _, next := range ids {
		if next == 0 {
			continue
		}
		diff := next - prev
		prev = next
		if next == diff {
			continue
		}
		if align == 0 {
			align = diff
			continue
		}
		a, b := max(align, diff), min(align, diff)
		for b != 0 {
			a, b = b, a%b
		}
		if align = a; align <= 8 {
			break
		}
	}
	return compressedRefs, max(min(align, 256), 8), err
}

// Canonical renders every heap sub-record of a dump as a line that names
// objects by their canonical number (the order in which the records that
// define them first appear: class dumps, instances, arrays), classes and
// fields by name, and keeps every reference, array length and root kind,
// but no primitive value. Lines are grouped by heap dump (a HEAP DUMP END,
// or the end of a HEAP DUMP record, ends one) and sorted within it. Two
// dumps with the same lines have the same heap dumps, with the same
// objects dumped in each, up to the numbering of IDs. It holds the dump in
// memory: it is for tests on small dumps.
func Canonical(data []byte) ([]string, error) {
	strs := map[uint64]string{}
	names := map[uint64]uint64{}
	classes := map[uint64]*hprof.ClassDump{}
	canon := map[uint64]int{}
	var idSize int
	own := func(id uint64) {
		if _, ok := canon[id]; !ok && id != 0 {
			canon[id] = len(canon) + 1
		}
	}
	err := walk(data, func(rec hprof.Record, r *hprof.Reader, s *hprof.SubRecord) error {
		idSize = r.IDSize()
		dec := hprof.BodyDecoder{IDSize: idSize}
		switch {
		case s == nil && rec.Tag == hprof.TagString:
			b, err := r.Body()
			if err != nil {
				return err
			}
			id, t, err := dec.String(rec, b)
			if err != nil {
				return err
			}
			strs[id] = string(t)
		case s == nil && rec.Tag == hprof.TagLoadClass:
			b, err := r.Body()
			if err != nil {
				return err
			}
			lc, err := dec.LoadClass(rec, b)
			if err != nil {
				return err
			}
			names[lc.ClassID] = lc.Name
		case s != nil && s.Tag == hprof.ClassDumpTag:
			if _, ok := classes[s.ID]; !ok {
				classes[s.ID] = s.Class.Clone()
			}
			own(s.ID)
		case s != nil && (s.Tag == hprof.InstanceDumpTag || s.Tag == hprof.ObjectArrayDumpTag || s.Tag == hprof.PrimitiveArrayTag || s.Tag == hprof.PrimitiveArrayNoData):
			own(s.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ref := func(id uint64) string {
		if id == 0 {
			return "null"
		}
		if n, ok := canon[id]; ok {
			return fmt.Sprint("#", n)
		}
		return "missing"
	}
	name := func(sid uint64) string { return strs[sid] }
	var out, dump []string
	dumps := 0
	end := func() {
		sort.Strings(dump)
		dumps++
		out = append(out, fmt.Sprintf("heap dump %d: %d records", dumps, len(dump)))
		out = append(out, dump...)
		dump = nil
	}
	lastHeap := hprof.Tag(0)
	err = walk(data, func(rec hprof.Record, r *hprof.Reader, s *hprof.SubRecord) error {
		if s == nil {
			if rec.Tag == hprof.TagHeapDumpEnd || (lastHeap == hprof.TagHeapDump && dump != nil) {
				end()
			}
			lastHeap = rec.Tag
			return nil
		}
		lastHeap = rec.Tag
		var l string
		switch {
		case s.Tag.IsRoot():
			l = fmt.Sprintf("%s %s thread=%d frame=%d", s.Tag, ref(s.ID), s.Thread, s.Frame)
		case s.Tag == hprof.ClassDumpTag:
			c := &s.Class
			l = fmt.Sprintf("class %s %s super=%s loader=%s size=%d", ref(s.ID), name(names[s.ID]), ref(c.Super), ref(c.Loader), c.InstanceSize)
			for _, f := range c.Statics {
				l += " static " + name(f.Name) + ":" + f.Type.String()
				if f.Type == hprof.Object {
					l += "=" + ref(f.Value)
				}
			}
			for _, f := range c.Fields {
				l += " field " + name(f.Name) + ":" + f.Type.String()
			}
		case s.Tag == hprof.InstanceDumpTag:
			l = fmt.Sprintf("instance %s of %s, %d bytes:", ref(s.ID), ref(s.ClassID), len(s.Data))
			p := 0
			for c := classes[s.ClassID]; c != nil; c = classes[c.Super] {
				for _, f := range c.Fields {
					if f.Type == hprof.Object && p+idSize <= len(s.Data) {
						v := uint64(binary.BigEndian.Uint32(s.Data[p:]))
						if idSize == 8 {
							v = binary.BigEndian.Uint64(s.Data[p:])
						}
						l += " " + name(f.Name) + "=" + ref(v)
					}
					p += f.Type.Size(idSize)
				}
				if c.Super == 0 {
					break
				}
			}
		case s.Tag == hprof.ObjectArrayDumpTag:
			l = fmt.Sprintf("object array %s of %s, %d:", ref(s.ID), ref(s.ClassID), s.Length)
			for _, e := range s.Elements {
				l += " " + ref(e)
			}
		case s.Tag == hprof.PrimitiveArrayTag, s.Tag == hprof.PrimitiveArrayNoData:
			l = fmt.Sprintf("%s %s %s[%d]", s.Tag, ref(s.ID), s.ElemType, s.Length)
		default:
			l = s.Tag.String()
		}
		dump = append(dump, l)
		return nil
	})
	if dump != nil {
		end()
	}
	return out, err
}

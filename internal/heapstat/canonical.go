package heapstat

import (
	"fmt"
	"sort"

	"github.com/heapcrunch/heapcrunch/hprof"
)

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
	return canonicalLines(data, false)
}

// CanonicalValues is Canonical with the values of instances' primitive
// fields too: two dumps with the same lines also have the same primitive
// field values.
func CanonicalValues(data []byte) ([]string, error) {
	return canonicalLines(data, true)
}

func canonicalLines(data []byte, values bool) ([]string, error) {
	ix, err := newIndex(data)
	if err != nil {
		return nil, err
	}
	c := &canonical{ix: ix, canon: map[uint64]int{}, values: values}
	err = Walk(data, func(rec hprof.Record, r *hprof.Reader, s *hprof.SubRecord) error {
		switch {
		case s == nil:
		case s.Tag == hprof.SubClassDump, s.Tag == hprof.SubInstanceDump, s.Tag == hprof.SubObjectArrayDump,
			s.Tag == hprof.SubPrimitiveArrayDump, s.Tag == hprof.SubPrimitiveArrayNoData:
			if _, ok := c.canon[s.ID]; !ok && s.ID != 0 {
				c.canon[s.ID] = len(c.canon) + 1
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	lastHeap := hprof.Tag(0)
	err = Walk(data, func(rec hprof.Record, r *hprof.Reader, s *hprof.SubRecord) error {
		if s == nil {
			if rec.Tag == hprof.TagHeapDumpEnd || (lastHeap == hprof.TagHeapDump && c.dump != nil) {
				c.endDump()
			}
		} else {
			c.dump = append(c.dump, c.line(s))
		}
		lastHeap = rec.Tag
		return nil
	})
	if c.dump != nil {
		c.endDump()
	}
	return c.out, err
}

// canonical is the state of Canonical.
type canonical struct {
	ix        *index
	canon     map[uint64]int // object ID -> canonical number
	out, dump []string
	dumps     int
	values    bool // primitive field values too
}

func (c *canonical) endDump() {
	sort.Strings(c.dump)
	c.dumps++
	c.out = append(c.out, fmt.Sprintf("heap dump %d: %d records", c.dumps, len(c.dump)))
	c.out = append(c.out, c.dump...)
	c.dump = nil
}

func (c *canonical) ref(id uint64) string {
	if id == 0 {
		return "null"
	}
	if n, ok := c.canon[id]; ok {
		return fmt.Sprint("#", n)
	}
	return "missing"
}

// line renders one sub-record.
func (c *canonical) line(s *hprof.SubRecord) string {
	name := func(sid uint64) string { return c.ix.strs[sid] }
	switch {
	case s.Tag.IsRoot():
		return fmt.Sprintf("%s %s thread=%d frame=%d", s.Tag, c.ref(s.ID), s.Thread, s.Frame)
	case s.Tag == hprof.SubClassDump:
		d := &s.Class
		l := fmt.Sprintf("class %s %s super=%s loader=%s size=%d", c.ref(s.ID), name(c.ix.names[s.ID]), c.ref(d.Super), c.ref(d.Loader), d.InstanceSize)
		for _, f := range d.Statics {
			l += " static " + name(f.Name) + ":" + f.Type.String()
			if f.Type == hprof.Object {
				l += "=" + c.ref(f.Value)
			}
		}
		for _, f := range d.Fields {
			l += " field " + name(f.Name) + ":" + f.Type.String()
		}
		return l
	case s.Tag == hprof.SubInstanceDump:
		l := fmt.Sprintf("instance %s of %s, %d bytes:", c.ref(s.ID), c.ref(s.ClassID), len(s.Data))
		c.ix.fields(s, func(f uint64, t hprof.BasicType, v uint64) {
			switch {
			case t == hprof.Object:
				l += " " + name(f) + "=" + c.ref(v)
			case c.values:
				l += fmt.Sprintf(" %s:%s=%#x", name(f), t, v)
			}
		})
		return l
	case s.Tag == hprof.SubObjectArrayDump:
		l := fmt.Sprintf("object array %s of %s, %d:", c.ref(s.ID), c.ref(s.ClassID), s.Length)
		for _, e := range s.Elements {
			l += " " + c.ref(e)
		}
		return l
	case s.Tag == hprof.SubPrimitiveArrayDump, s.Tag == hprof.SubPrimitiveArrayNoData:
		return fmt.Sprintf("%s %s %s[%d]", s.Tag, c.ref(s.ID), s.ElemType, s.Length)
	}
	return s.Tag.String()
}

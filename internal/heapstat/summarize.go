package heapstat

import (
	"fmt"
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

// Summarize summarizes the HPROF dump in data.
func Summarize(data []byte) (*Summary, error) {
	ix, err := newIndex(data)
	if err != nil {
		return nil, err
	}
	sum := &Summary{Version: ix.version, IDSize: ix.idSize, Classes: map[string]*ClassStat{}, Roots: map[string]int64{}}
	stat := func(name string) *ClassStat {
		c := sum.Classes[name]
		if c == nil {
			c = &ClassStat{}
			sum.Classes[name] = c
		}
		return c
	}
	for id, c := range ix.classes {
		cs := stat(ix.className(id))
		cs.InstanceSize, cs.Fields, cs.Statics = c.InstanceSize, len(c.Fields), len(c.Statics)
		for _, f := range c.Statics {
			if f.Type == hprof.Object && f.Value != 0 {
				cs.StaticRefs++
			}
		}
	}
	err = Walk(data, func(rec hprof.Record, r *hprof.Reader, s *hprof.SubRecord) error {
		if s != nil {
			sum.add(ix, s, stat)
		}
		return nil
	})
	return sum, err
}

// add counts one heap sub-record.
func (sum *Summary) add(ix *index, s *hprof.SubRecord, stat func(string) *ClassStat) {
	switch {
	case s.Tag.IsRoot():
		sum.Roots[s.Tag.String()]++
	case s.Tag == hprof.SubInstanceDump:
		sum.Objects++
		cs := stat(ix.className(s.ClassID))
		cs.Instances++
		cs.PayloadBytes += int64(len(s.Data))
		ix.objectFields(s, func(_, v uint64) {
			if v != 0 {
				cs.Refs++
			}
		})
	case s.Tag == hprof.SubObjectArrayDump:
		sum.Objects++
		cs := stat(ix.className(s.ClassID))
		cs.Instances++
		cs.Elements += int64(s.Length)
		cs.PayloadBytes += int64(s.Length) * int64(ix.idSize)
		for _, e := range s.Elements {
			if e != 0 {
				cs.Refs++
			}
		}
	case s.Tag == hprof.SubPrimitiveArrayDump, s.Tag == hprof.SubPrimitiveArrayNoData:
		sum.Objects++
		cs := stat(s.ElemType.String() + "[]")
		cs.Instances++
		cs.Elements += int64(s.Length)
		cs.PayloadBytes += int64(s.Length) * int64(s.ElemType.Size(ix.idSize))
	}
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

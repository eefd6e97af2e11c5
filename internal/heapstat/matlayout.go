package heapstat

import (
	"sort"

	"github.com/heapcrunch/heapcrunch/hprof"
)

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
	err = Walk(data, func(rec hprof.Record, r *hprof.Reader, s *hprof.SubRecord) error {
		if s == nil {
			return nil
		}
		switch s.Tag {
		case hprof.SubClassDump, hprof.SubInstanceDump, hprof.SubPrimitiveArrayDump, hprof.SubPrimitiveArrayNoData:
			ids = append(ids, s.ID)
		case hprof.SubObjectArrayDump:
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

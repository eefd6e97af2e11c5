package hprof_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// objEvent describes a sub-record read by NextSub as headEvent describes
// an object read by SkimObjects: tag, offset, IDs, stack trace, the data
// size of an instance or the length and element type of an array.
func objEvent(s *hprof.SubRecord) string {
	switch s.Tag {
	case hprof.SubInstanceDump:
		return fmt.Sprintf("  %s@%d id=%x class=%x trace=%d len=%d", s.Tag, s.Offset, s.ID, s.ClassID, s.StackTrace, len(s.Data))
	case hprof.SubObjectArrayDump:
		if len(s.Elements) != int(s.Length) {
			return fmt.Sprintf("  %s@%d: %d elements, length %d", s.Tag, s.Offset, len(s.Elements), s.Length)
		}
		return fmt.Sprintf("  %s@%d id=%x class=%x trace=%d len=%d", s.Tag, s.Offset, s.ID, s.ClassID, s.StackTrace, s.Length)
	case hprof.SubPrimitiveArrayDump:
		return fmt.Sprintf("  %s@%d id=%x class=0 trace=%d len=%d %s", s.Tag, s.Offset, s.ID, s.StackTrace, s.Length, s.ElemType)
	}
	return subEvent(s)
}

func headEvent(h *hprof.ObjectHead) string {
	if h.Tag != hprof.SubPrimitiveArrayDump && h.ElemType != 0 {
		return fmt.Sprintf("  %s@%d: element type %d", h.Tag, h.Offset, h.ElemType)
	}
	if h.Tag == hprof.SubPrimitiveArrayDump {
		return fmt.Sprintf("  %s@%d id=%x class=%x trace=%d len=%d %s", h.Tag, h.Offset, h.ID, h.ClassID, h.StackTrace, h.Length, h.ElemType)
	}
	return fmt.Sprintf("  %s@%d id=%x class=%x trace=%d len=%d", h.Tag, h.Offset, h.ID, h.ClassID, h.StackTrace, h.Length)
}

// newReader returns a Reader of data in place (NewReaderBytes) or from a
// buffered stream (NewReader).
func newReader(data []byte, inPlace bool) (*hprof.Reader, error) {
	if inPlace {
		return hprof.NewReaderBytes(data)
	}
	return hprof.NewReader(bytes.NewReader(data))
}

// walkObjects reads data with Next and NextSub only, or with SkimObjects
// first at every sub-record, batch objects at a time at most, bounded by
// until(offset) (the bound for a skim from offset on; 0 for none), and
// NextSub where it reads none. inPlace reads data with NewReaderBytes.
func walkObjects(t *testing.T, data []byte, inPlace bool, batch int, until func(int64) int64) []string {
	r, err := newReader(data, inPlace)
	if err != nil {
		return []string{errEvent(err)}
	}
	var ev []string
	var s hprof.SubRecord
	heads := make([]hprof.ObjectHead, batch)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return ev
		}
		if err != nil {
			return append(ev, errEvent(err))
		}
		ev = append(ev, recEvent(rec))
		if !rec.Tag.IsHeapDump() {
			if batch > 0 && r.SkimObjects(heads, 0) != 0 {
				t.Fatalf("SkimObjects read objects in a %s record", rec.Tag)
			}
			continue
		}
		for {
			if batch > 0 {
				from := r.Offset()
				bound := until(from)
				n := r.SkimObjects(heads, bound)
				for i := range heads[:n] {
					h := &heads[i]
					if bound > 0 && h.Offset >= bound {
						t.Fatalf("SkimObjects from %d read an object at %d, past its bound %d", from, h.Offset, bound)
					}
					ev = append(ev, headEvent(h))
				}
				if n > 0 {
					continue
				}
			}
			s = hprof.SubRecord{} // no fields left from another sub-record
			err := r.NextSub(&s)
			if err == io.EOF {
				break
			}
			if err != nil {
				return append(ev, errEvent(err))
			}
			ev = append(ev, objEvent(&s))
		}
	}
}

// skimDumps are the dumps the SkimObjects tests read: hand-built ones with
// both ID sizes, the fixtures with 4-byte, 8-byte and uncompressed IDs,
// and the corpus dumps under 64 MiB.
func skimDumps(t *testing.T) map[string][]byte {
	dumps := testutil.SmallDumps(t, "sample.hprof.gz", "sample32.hprof.gz", "sample-nocoops.hprof.gz")
	dumps["handbuilt4"] = fuzzseed.HandBuilt(4, hprof.Version102)
	dumps["handbuilt8"] = fuzzseed.HandBuilt(8, hprof.Version103)
	return dumps
}

// TestSkimObjectsMatchesNextSub: SkimObjects reads the objects NextSub
// reads, the same fields of each, in batches of any size, bounded or not,
// from a buffered stream (where objects cross the buffer's end) or in
// place; it reads none of the other sub-records; and where it stops,
// NextSub goes on with the same sub-record.
func TestSkimObjectsMatchesNextSub(t *testing.T) {
	for name, data := range skimDumps(t) {
		want := strings.Join(walkObjects(t, data, false, 0, nil), "\n")
		objects := strings.Count(want, "INSTANCE DUMP@") + strings.Count(want, "ARRAY DUMP@")
		if objects == 0 {
			t.Fatalf("%s: no objects read", name)
		}
		for _, inPlace := range []bool{false, true} {
			for _, c := range []struct {
				batch int
				bound int64
			}{{1, 0}, {7, 100}, {256, 0}, {256, 4096}} {
				until := func(off int64) int64 {
					if c.bound == 0 {
						return 0
					}
					return off + c.bound
				}
				got := strings.Join(walkObjects(t, data, inPlace, c.batch, until), "\n")
				if got != want {
					t.Fatalf("%s, in place %v, batch %d, bound %d: %s", name, inPlace, c.batch, c.bound, firstDiff(strings.Split(got, "\n"), strings.Split(want, "\n")))
				}
			}
		}
	}
}

// TestSkimObjectsBadInput: on a dump cut anywhere or with a primitive
// array of a bad element type, SkimObjects reads the objects before the
// damage and stops there, and NextSub reports the error it would have
// reported alone.
func TestSkimObjectsBadInput(t *testing.T) {
	for _, id := range []int{4, 8} {
		data := fuzzseed.HandBuilt(id, hprof.Version102)
		bad := map[string][]byte{}
		for cut := 0; cut < len(data); cut += 3 {
			bad[fmt.Sprintf("cut at %d", cut)] = data[:cut]
		}
		// Every primitive array given each element type that NextSub
		// refuses: object (2), 3 and 12.
		arrays := 0
		for _, s := range walkObjects(t, data, false, 0, nil) {
			var off int64
			if _, err := fmt.Sscanf(s, "  PRIMITIVE ARRAY DUMP@%d", &off); err != nil {
				continue
			}
			arrays++
			for _, typ := range []byte{2, 3, 12} {
				b := bytes.Clone(data)
				b[off+int64(id)+9] = typ // after tag, ID, stack trace and length
				bad[fmt.Sprintf("array at %d of type %d", off, typ)] = b
			}
		}
		if arrays == 0 {
			t.Fatalf("ID size %d: no primitive array to damage", id)
		}
		// Sizes and lengths whose bytes overflow 32 bits or run past the
		// record, in every object; each heap dump record made to end inside
		// each of its objects, after a byte of it and before its last.
		put := func(name string, at int64, v uint32) {
			b := bytes.Clone(data)
			binary.BigEndian.PutUint32(b[at:], v)
			bad[name] = b
		}
		objects, records := 0, 0
		events := walkObjects(t, data, false, 0, nil)
		var record int64 // the offset of the heap dump record
		for k, e := range events {
			var tag string
			var off, length int64
			if n, _ := fmt.Sscanf(strings.TrimSpace(e), "HEAP DUMP SEGMENT@%d+%d", &off, &length); n == 2 {
				records, record = records+1, off
				continue
			}
			if i := strings.Index(e, "@"); i > 0 {
				tag = strings.TrimSpace(e[:i])
				fmt.Sscanf(e[i+1:], "%d", &off)
			}
			var next int64 // where the next sub-record or record starts
			if k+1 < len(events) {
				if i := strings.Index(events[k+1], "@"); i > 0 {
					fmt.Sscanf(events[k+1][i+1:], "%d", &next)
				}
			}
			if next > off+1 && record > 0 {
				for _, end := range []int64{off + 1, next - 1} {
					name := fmt.Sprintf("record at %d ending at %d, in the %s at %d", record, end, tag, off)
					put(name, record+5, uint32(end-record-9))
					// The file cut where the object ends, a byte after the
					// record: all that is buffered is the record and that byte.
					bad[name+", cut after it"] = bad[name][:next]
				}
			}
			var at int64 // the size or length field
			switch tag {
			case "INSTANCE DUMP":
				at = off + 2*int64(id) + 5
			case "OBJECT ARRAY DUMP", "PRIMITIVE ARRAY DUMP":
				at = off + int64(id) + 5
			default:
				continue
			}
			objects++
			for _, v := range []uint32{0x20000001, 0x40000001, 0x80000000, 0xfffffff0, 0xffffffff} {
				put(fmt.Sprintf("%s at %d of size or length %#x", tag, off, v), at, v)
			}
		}
		if objects == 0 || records == 0 {
			t.Fatalf("ID size %d: %d objects and %d heap dump segments to damage", id, objects, records)
		}
		for name, b := range bad {
			want := walkObjects(t, b, false, 0, nil)
			for _, inPlace := range []bool{false, true} {
				got := walkObjects(t, b, inPlace, 256, func(int64) int64 { return 0 })
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("ID size %d, %s, in place %v: %s", id, name, inPlace, firstDiff(got, want))
				}
			}
		}
	}
}

// TestSkimObjectsOutsideHeapDump: before the first record, and in a
// STRING record whose body reads as an INSTANCE DUMP, SkimObjects reads
// nothing and leaves the Reader where it was.
func TestSkimObjectsOutsideHeapDump(t *testing.T) {
	var buf bytes.Buffer
	w, err := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version102, IDSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	// ID 0x21000000, then a text whose bytes 9 to 12 give a size of 0.
	w.WriteRecord(hprof.TagString, 0, w.Encoder().AppendString(nil, 0x21000000, []byte("abcdefghi\x00\x00\x00\x00xyz")))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := hprof.NewReaderBytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	heads := make([]hprof.ObjectHead, 8)
	off := r.Offset()
	if n := r.SkimObjects(heads, 0); n != 0 || r.Offset() != off {
		t.Fatalf("SkimObjects before any record read %d objects, moved from %d to %d", n, off, r.Offset())
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	off = r.Offset()
	if n := r.SkimObjects(heads, 0); n != 0 || r.Offset() != off {
		t.Fatalf("SkimObjects in a STRING record read %d objects, moved from %d to %d", n, off, r.Offset())
	}
}

// firstDiff describes where got, what SkimObjects and NextSub read, first
// differs from want, what NextSub read alone.
func firstDiff(got, want []string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	at := func(ev []string) string {
		if i < len(ev) {
			return ev[i]
		}
		return "(the end)"
	}
	return fmt.Sprintf("event %d: SkimObjects and NextSub read\n%s\nNextSub alone\n%s", i, at(got), at(want))
}

// contentsEvents describes the objects of data, each with its contents
// (an instance's field bytes, an array's elements), read with MaxElements
// maxElems and ArrayData: with SkimObjectsData, in batches of 64, and
// NextSub where it reads none, or with NextSub alone; then the error that
// ended the reading, if any. An object array read in pieces comes whole,
// its pieces joined. An object array over maxElems that SkimObjectsData
// reads is an error of its own.
func contentsEvents(data []byte, inPlace, skim bool, maxElems int) ([]string, error) {
	r, err := newReader(data, inPlace)
	if err != nil {
		return nil, err
	}
	r.MaxElements, r.ArrayData = maxElems, true
	idBytes := func(ids []uint64) []byte {
		var b []byte
		for _, id := range ids {
			if r.IDSize() == 4 {
				b = binary.BigEndian.AppendUint32(b, uint32(id))
			} else {
				b = binary.BigEndian.AppendUint64(b, id)
			}
		}
		return b
	}
	var ev []string
	heads := make([]hprof.ObjectHead, 64)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return ev, nil
		}
		if err != nil {
			return ev, err
		}
		if !rec.Tag.IsHeapDump() {
			continue
		}
		for {
			if skim {
				n, b, base := r.SkimObjectsData(heads, 0)
				for i := range heads[:n] {
					h := &heads[i]
					if h.Tag == hprof.SubObjectArrayDump && h.Length > uint32(maxElems) {
						return ev, fmt.Errorf("SkimObjectsData read an object array of %d elements at %d, MaxElements %d", h.Length, h.Offset, maxElems)
					}
					ev = append(ev, fmt.Sprintf("%s@%d %x", h.Tag, h.Offset, h.Contents(b, base, r.IDSize())))
				}
				if n > 0 {
					continue
				}
			}
			var s hprof.SubRecord
			err := r.NextSub(&s)
			if err == io.EOF {
				break
			}
			if err != nil {
				return ev, err
			}
			switch s.Tag {
			case hprof.SubInstanceDump, hprof.SubPrimitiveArrayDump:
				ev = append(ev, fmt.Sprintf("%s@%d %x", s.Tag, s.Offset, s.Data))
			case hprof.SubObjectArrayDump:
				elems := slices.Clone(s.Elements)
				for s.Pending > 0 {
					if err := r.NextElements(&s, 1000); err != nil {
						return ev, err
					}
					elems = append(elems, s.Elements...)
				}
				ev = append(ev, fmt.Sprintf("%s@%d %x", s.Tag, s.Offset, idBytes(elems)))
			}
		}
	}
}

// TestSkimObjectsDataContents: the contents SkimObjectsData gives each
// object (ObjectHead.Contents) are those NextSub reads, in place and from
// a buffered stream; it leaves object arrays longer than MaxElements to
// NextSub, which reads them in pieces.
func TestSkimObjectsDataContents(t *testing.T) {
	for name, data := range skimDumps(t) {
		for _, maxElems := range []int{1 << 20, 3} {
			want, err := contentsEvents(data, true, false, maxElems)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(want) == 0 {
				t.Fatalf("%s: no objects read", name)
			}
			for _, inPlace := range []bool{false, true} {
				got, err := contentsEvents(data, inPlace, true, maxElems)
				if err != nil {
					t.Fatalf("%s, in place %v, MaxElements %d: %v", name, inPlace, maxElems, err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s, in place %v, MaxElements %d: %s", name, inPlace, maxElems, firstDiff(got, want))
				}
			}
		}
	}
}

// FuzzSkimObjectsData: on any input, SkimObjectsData (with NextSub where
// it reads none) reads the objects NextSub reads alone, with the same
// contents, in place and from a buffered stream, leaves object arrays
// over MaxElements, and the reading ends with the same error; no panic.
func FuzzSkimObjectsData(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := contentsEvents(data, true, false, 2)
		for _, inPlace := range []bool{false, true} {
			got, err := contentsEvents(data, inPlace, true, 2)
			if !slices.Equal(got, want) {
				t.Fatalf("in place %v: %s", inPlace, firstDiff(got, want))
			}
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("in place %v: error %v, want %v", inPlace, err, wantErr)
			}
		}
	})
}

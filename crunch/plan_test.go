package crunch

import (
	"bytes"
	"encoding/binary"
	"io"
	"slices"
	"testing"

	"github.com/heapcrunch/heapcrunch/decrunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
)

// changedInPass2 reads data in pass 1 and changed in pass 2 (after the
// Seek back to the start): a dump written again, or cut short, between the
// passes.
type changedInPass2 struct {
	*bytes.Reader
	changed []byte
}

func (c *changedInPass2) Seek(off int64, whence int) (int64, error) {
	if off == 0 && whence == io.SeekStart {
		c.Reader = bytes.NewReader(c.changed)
	}
	return c.Reader.Seek(off, whence)
}

// Instances of classSoonerDump: instance soonerAt is of class B in the
// dump as pass 2 reads it, past what pass 2's goroutine reads before it
// splits (atBufferBytes), and laterAt, two chunks (chunkSubRecords) on,
// is the first of B in the dump as pass 1 read it.
const (
	soonerInstances = 30000
	soonerAt        = 20000
	laterAt         = 25000
)

// classSoonerDump writes a dump of classes A and B, alike (one reference
// field), in records of 4 KiB, and soonerInstances instances of A, each
// referring to the one before, but for instance laterAt, of B, and
// soonerAt, of B where b; B's CLASS DUMP comes after its instances, as an
// Android dump may have it. It returns the dump and the offset of
// instance soonerAt's class ID.
func classSoonerDump(t *testing.T, b bool) ([]byte, int) {
	t.Helper()
	var buf bytes.Buffer
	w, err := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version102, IDSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	w.SegmentSize = 4 << 10
	enc := w.Encoder()
	const object, classA, classB = 0x10, 0x20, 0x30
	for i, s := range []string{"java.lang.Object", "com.example.A", "com.example.B", "next"} {
		w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, uint64(i+1), []byte(s)))
	}
	for i, id := range []uint64{object, classA, classB} {
		w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: uint32(i + 1), ClassID: id, Name: uint64(i + 1)}))
	}
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: object, Class: hprof.ClassDump{ID: object}})
	next := []hprof.Field{{Name: 4, Type: hprof.Object}}
	classDump := func(id uint64) {
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: id, Class: hprof.ClassDump{ID: id, Super: object, InstanceSize: 4, Fields: next}})
	}
	classDump(classA)
	id := func(i int) uint64 { return 0x100000 + 16*uint64(i) }
	for i := range soonerInstances {
		class := uint64(classA)
		if i == laterAt || i == soonerAt && b {
			class = classB
		}
		ref := uint32(0)
		if i > 0 {
			ref = uint32(id(i - 1))
		}
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: id(i), StackTrace: 1, ClassID: class, Data: binary.BigEndian.AppendUint32(nil, ref)})
	}
	classDump(classB)
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	head := binary.BigEndian.AppendUint32([]byte{byte(hprof.SubInstanceDump)}, uint32(id(soonerAt)))
	at := bytes.Index(buf.Bytes(), binary.BigEndian.AppendUint32(head, 1))
	if at < 0 {
		t.Fatalf("no instance %d", soonerAt)
	}
	return buf.Bytes(), at + len(head) + 4 // its class ID, after its stack trace serial
}

// TestClassSoonerInPass2: where pass 2 meets an instance of a class
// before the chunk that pass 1 planned to define it for (the dump written
// again between the passes, an instance's class changed to one first used
// later), pass 2 defines the class there (pass2.defineChain): on one
// goroutine, on two, and split by spans, mapped or read at offsets, the
// BMD decrunches to the dump as pass 2 read it, instance for instance,
// rather than to an error or to a file that names a class before its
// definition.
func TestClassSoonerInPass2(t *testing.T) {
	first, at := classSoonerDump(t, false)
	second, at2 := classSoonerDump(t, true)
	if at != at2 || len(first) != len(second) || at < atBufferBytes || binary.BigEndian.Uint32(first[at:]) != 0x20 || binary.BigEndian.Uint32(second[at:]) != 0x30 {
		t.Fatalf("test premise: instance %d's class at offset %d (%d and %d bytes), 0x%x and then 0x%x; want past offset %d, 0x20 and then 0x30, the dumps otherwise alike",
			soonerAt, at, len(first), len(second), binary.BigEndian.Uint32(first[at:]), binary.BigEndian.Uint32(second[at:]), atBufferBytes)
	}
	want, err := heapstat.Canonical(second)
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{KeepStrings: true}
	bothPass2Ways(t, func(t *testing.T) {
		var b bytes.Buffer
		if _, err := Crunch(&changedInPass2{Reader: bytes.NewReader(first), changed: second}, &b, opt); err != nil {
			t.Fatal(err)
		}
		sameCanonical(t, b.Bytes(), want)
	})
	t.Run("split", func(t *testing.T) {
		bothSplitReads(t, func(t *testing.T) {
			path := writeTemp(t, "sooner.hprof", first)
			changed := changeWhenSplit(t, path, map[int64][]byte{int64(at): second[at : at+4]})
			_, out, added, _, err := crunchFile(t, path, opt, true, 64<<10)
			if err != nil || !*changed || added == 0 {
				t.Fatalf("split: %v, the dump changed %v, %d runs added; want no error, changed, some", err, *changed, added)
			}
			sameCanonical(t, out, want)
		})
	})
}

// sameCanonical checks that BMD file b decrunches to a dump whose
// canonical lines (heapstat.Canonical) are want.
func sameCanonical(t *testing.T, b []byte, want []string) {
	t.Helper()
	var out bytes.Buffer
	if _, err := decrunch.Decrunch(bytes.NewReader(b), &out, decrunch.Options{}); err != nil {
		t.Fatalf("decrunch of the BMD: %v", err)
	}
	got, err := heapstat.Canonical(out.Bytes())
	if err != nil {
		t.Fatalf("decrunched dump does not read back: %v", err)
	}
	if !slices.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Errorf("decrunched: %d lines, want %d as pass 2 read the dump; the first to differ, %d: %q, want %q",
			len(got), len(want), i, lineAt(got, i), lineAt(want, i))
	}
}

// lineAt returns line i of lines, or "" past their end.
func lineAt(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

package crunch_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/decrunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
)

// hierarchy describes a small HPROF made by dumpWithClasses: class i (ID
// 0x100+i*8, named com.example.C<i>, with a LOAD CLASS) has super
// supers[i] (an index, or -1) and the instance fields fields(i) (named
// f<i>_<j>); instance(i) says whether it has an instance, whose object
// fields point at the instance written before it (null for the first).
type hierarchy struct {
	supers   []int
	fields   func(i int) []hprof.BasicType
	instance func(i int) bool
}

// chain returns class i and its supers, up to the top or, in a loop, as
// many as there are classes.
func (h *hierarchy) chain(i int) []int {
	var c []int
	for ; i >= 0 && len(c) < len(h.supers); i = h.supers[i] {
		c = append(c, i)
	}
	return c
}

// dumpWithClasses writes the HPROF h describes, with 8-byte IDs.
func dumpWithClasses(t testing.TB, h hierarchy) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := newDumpWriter(t, &buf, 8)
	enc := w.Encoder()
	id := func(i int) uint64 { return 0x100 + uint64(i)*8 }
	classSID := func(i int) uint64 { return 0x1000_0000 + uint64(i) }
	fieldSID := func(i, j int) uint64 { return 0x2000_0000 + uint64(i)<<8 + uint64(j) }
	for i := range h.supers {
		must(t, w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, classSID(i), fmt.Appendf(nil, "com.example.C%d", i))))
		for j := range h.fields(i) {
			must(t, w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, fieldSID(i, j), fmt.Appendf(nil, "f%d_%d", i, j))))
		}
		must(t, w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: uint32(i + 1), ClassID: id(i), Name: classSID(i)})))
	}
	must(t, w.BeginHeapDump(hprof.TagHeapDumpSegment, 0))
	size := make([]int, len(h.supers)) // of a class and its supers; in a loop, any
	for i, sup := range h.supers {
		for _, ty := range h.fields(i) {
			size[i] += ty.Size(8)
		}
		if sup >= 0 && sup < i {
			size[i] += size[sup]
		}
		s := hprof.SubRecord{Tag: hprof.SubClassDump, ID: id(i), Class: hprof.ClassDump{ID: id(i), InstanceSize: uint32(size[i])}}
		if sup >= 0 {
			s.Class.Super = id(sup)
		}
		for j, ty := range h.fields(i) {
			s.Class.Fields = append(s.Class.Fields, hprof.Field{Name: fieldSID(i, j), Type: ty})
		}
		must(t, w.WriteSub(&s))
	}
	prev := uint64(0)
	for i := range h.supers {
		if !h.instance(i) {
			continue
		}
		// The class's own fields first, then its super's, as in HPROF.
		var data []byte
		for _, k := range h.chain(i) {
			for _, ty := range h.fields(k) {
				if ty == hprof.Object {
					data = enc.AppendID(data, prev)
				} else {
					data = append(data, make([]byte, ty.Size(8))...)
				}
			}
		}
		s := hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: 0x100_0000 + uint64(i)*8, ClassID: id(i), Data: data}
		must(t, w.WriteSub(&s))
		prev = s.ID
	}
	must(t, w.EndHeapDump())
	must(t, w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil))
	must(t, w.Flush())
	return buf.Bytes()
}

// TestSuperclassLoopIsAnError: a superclass loop (no VM writes one) is a
// clear error naming the class and the offset of its CLASS DUMP, not an
// endless or ever-growing layout.
func TestSuperclassLoopIsAnError(t *testing.T) {
	src := dumpWithClasses(t, hierarchy{
		supers:   []int{1, 2, 0},
		fields:   func(int) []hprof.BasicType { return []hprof.BasicType{hprof.Int} },
		instance: func(int) bool { return true },
	})
	_, err := crunch.Crunch(bytes.NewReader(src), io.Discard, crunch.Options{})
	// Walked up from class 0, the loop closes at class 2 (ID 0x110),
	// whose super is class 0 (0x100).
	const msg = "class 0x110: its superclass chain loops back to class 0x100 in CLASS DUMP (tag 0x20) at offset "
	var fe *hprof.FormatError
	if err == nil || !strings.Contains(err.Error(), msg) || !errors.As(err, &fe) {
		t.Fatalf("err = %v, want %q and an offset", err, msg)
	}
	want := append([]byte{byte(hprof.SubClassDump)}, binary.BigEndian.AppendUint64(nil, 0x110)...)
	if fe.Offset < 0 || fe.Offset+9 > int64(len(src)) || !bytes.Equal(src[fe.Offset:fe.Offset+9], want) {
		t.Errorf("offset %d does not hold class 0x110's CLASS DUMP", fe.Offset)
	}
}

// linearHierarchy returns a line of n classes, each the subclass of the
// one before: every class declares an int field, every 250th an object
// field too, and every 40th class has an instance (whose data holds the
// fields of the whole line above it).
func linearHierarchy(n int) hierarchy {
	supers := make([]int, n)
	for i := range supers {
		supers[i] = i - 1
	}
	return hierarchy{
		supers: supers,
		fields: func(i int) []hprof.BasicType {
			if i%250 == 0 {
				return []hprof.BasicType{hprof.Object, hprof.Int}
			}
			return []hprof.BasicType{hprof.Int}
		},
		instance: func(i int) bool { return i%40 == 39 },
	}
}

// TestDeepHierarchy: a line of 2,000 classes, each adding fields to those
// of its super class, comes back from crunch (names kept) and decrunch
// with every class's super class, instance size and own fields (names,
// types, order), and every instance's size and references, as in the
// original (compared canonically). And the BMD is linear in the depth: a
// class costs the fields it declares, not those it inherits, so twice as
// deep a line is at most 2.2 times the BMD bytes (a format that repeated
// inherited fields would be 4 times).
func TestDeepHierarchy(t *testing.T) {
	const n = 2000
	src := dumpWithClasses(t, linearHierarchy(n))
	want, err := heapstat.Canonical(src)
	if err != nil {
		t.Fatal(err)
	}
	if c := countPrefix(want, "class "); c != n {
		t.Fatalf("test premise: %d class lines, want %d", c, n)
	}
	var b bytes.Buffer
	if _, err := crunch.Crunch(bytes.NewReader(src), &b, crunch.Options{KeepStrings: true}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := decrunch.Decrunch(bytes.NewReader(b.Bytes()), &out, decrunch.Options{}); err != nil {
		t.Fatal(err)
	}
	got, err := heapstat.Canonical(out.Bytes())
	if err != nil {
		t.Fatalf("decrunched dump does not read back: %v", err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("classes or instances differ after crunch and decrunch (- original, + decrunched):\n%s", lineDiff(want, got, 5))
	}

	bmdSize := func(depth int) int {
		var b bytes.Buffer
		if _, err := crunch.Crunch(bytes.NewReader(dumpWithClasses(t, linearHierarchy(depth))), &b, crunch.Options{}); err != nil {
			t.Fatal(err)
		}
		return b.Len()
	}
	small, big := bmdSize(n), bmdSize(2*n)
	t.Logf("BMD of %d classes: %d bytes; of %d classes: %d bytes", n, small, 2*n, big)
	if big*10 > small*22 {
		t.Errorf("BMD of %d classes: %d bytes, of %d classes: %d bytes (%.2f times): more than linear in the depth",
			n, small, 2*n, big, float64(big)/float64(small))
	}
}

// BenchmarkDeepHierarchy crunches a line of 5,000 classes where every
// 1000th declares a field and every class has an instance: instance
// layouts must visit only the classes with fields, not the whole line.
func BenchmarkDeepHierarchy(b *testing.B) {
	const n = 5000
	h := linearHierarchy(n)
	h.fields = func(i int) []hprof.BasicType {
		if i%1000 == 0 {
			return []hprof.BasicType{hprof.Int}
		}
		return nil
	}
	h.instance = func(int) bool { return true }
	src := dumpWithClasses(b, h)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := crunch.Crunch(bytes.NewReader(src), io.Discard, crunch.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func countPrefix(lines []string, p string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, p) {
			n++
		}
	}
	return n
}

// lineDiff returns up to max lines that only want has and up to max that
// only got has (as multisets).
func lineDiff(want, got []string, max int) string {
	count := func(l []string) map[string]int {
		m := map[string]int{}
		for _, s := range l {
			m[s]++
		}
		return m
	}
	var d []string
	only := func(a, b []string, sign string) {
		left, k := count(b), 0
		for _, s := range a {
			if left[s] > 0 {
				left[s]--
			} else if k < max {
				d, k = append(d, sign+s), k+1
			}
		}
	}
	only(want, got, "- ")
	only(got, want, "+ ")
	return strings.Join(d, "\n")
}

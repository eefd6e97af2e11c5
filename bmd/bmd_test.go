package bmd_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/cespare/xxhash/v2"
	"github.com/heapcrunch/heapcrunch/bmd"
	"google.golang.org/protobuf/encoding/protowire"
)

// rtRender gives the fields that a record of its kind sets, so that a
// record read back can be compared with the record expected.
func rtRender(r *bmd.Record) string {
	s := r.Kind.String()
	switch r.Kind {
	case bmd.KindString:
		return s + fmt.Sprintf(" id=%d len=%d %s", r.ID, r.Length, rtBytes(r.Text))
	case bmd.KindHashedString:
		return s + fmt.Sprintf(" id=%d len=%d hash=%x", r.ID, r.Length, r.Hash)
	case bmd.KindLoadClass:
		return s + fmt.Sprintf(" serial=%d class=%d trace=%d name=%d", r.Serial, r.Class, r.Trace, r.Name)
	case bmd.KindUnloadClass, bmd.KindEndThread:
		return s + fmt.Sprintf(" serial=%d", r.Serial)
	case bmd.KindStackFrame:
		return s + fmt.Sprintf(" id=%d method=%d sig=%d source=%d class=%d line=%d", r.ID, r.Method, r.Signature, r.Source, r.ClassSerial, r.Line)
	case bmd.KindStackTrace:
		return s + fmt.Sprintf(" serial=%d thread=%d frames=%v", r.Serial, r.Thread, rtShort(r.Frames))
	case bmd.KindStartThread:
		return s + fmt.Sprintf(" serial=%d object=%d trace=%d name=%d group=%d parent=%d", r.Serial, r.Object, r.Trace, r.Name, r.Group, r.Parent)
	case bmd.KindRawRecord:
		return s + fmt.Sprintf(" tag=%d %s", r.Tag, rtBytes(r.Text))
	case bmd.KindTime:
		return s + fmt.Sprintf(" %d", r.Time)
	case bmd.KindTrace:
		return s + fmt.Sprintf(" %d", r.Trace)
	case bmd.KindHeapDump:
		return s + fmt.Sprintf(" segment=%v", r.Segment)
	case bmd.KindHeapInfo:
		return s + fmt.Sprintf(" type=%d name=%d", r.HeapType, r.Name)
	case bmd.KindClass:
		return s + fmt.Sprintf(" id=%d trace=%d %+v", r.ID, r.Trace, r.Def)
	case bmd.KindPlaceClasses:
		return s + fmt.Sprintf(" first=%d n=%d", r.ID, r.Length)
	case bmd.KindInstance:
		return s + fmt.Sprintf(" id=%d trace=%d class=%d values=%v", r.ID, r.Trace, r.Class, r.Values)
	case bmd.KindObjectArray:
		return s + fmt.Sprintf(" id=%d trace=%d class=%d n=%d elems=%v", r.ID, r.Trace, r.Class, r.Count, rtShort(r.Elements))
	case bmd.KindPrimitiveArray, bmd.KindPrimitiveNoData:
		return s + fmt.Sprintf(" id=%d trace=%d type=%d n=%d", r.ID, r.Trace, r.Type, r.Count)
	case bmd.KindRoot:
		return s + fmt.Sprintf(" kind=%02x object=%d thread=%d frame=%d jni=%d trace=%d", r.Tag, r.Object, r.Thread, r.Frame, r.JNIRef, r.Trace)
	}
	return s
}

// rtBytes shows short byte strings, and long ones by length and hash.
func rtBytes(b []byte) string {
	if len(b) <= 32 {
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("%d bytes %x", len(b), xxhash.Sum64(b))
}

// rtShort shows short ID lists, and long ones by length and hash.
func rtShort(v []uint64) string {
	if len(v) <= 8 {
		return fmt.Sprint(v)
	}
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	return fmt.Sprintf("%d IDs %x", len(v), xxhash.Sum64(b))
}

// rtMask is a primitive value as the reader gives it back: masked to the
// type's width.
func rtMask(t bmd.Type, v uint64) uint64 {
	switch t {
	case bmd.Boolean, bmd.Byte:
		return v & 0xFF
	case bmd.Char, bmd.Short:
		return v & 0xFFFF
	case bmd.Int, bmd.Float:
		return v & 0xFFFFFFFF
	}
	return v
}

// rtClassRead is the definition the reader gives for class c: object
// values always kept, dropped values 0, kept values masked.
func rtClassRead(c *bmd.Class, index uint64) bmd.Class {
	d := *c
	d.Index = index
	d.Constants = nil
	for _, k := range c.Constants {
		switch {
		case k.Type == bmd.Object:
			k.Kept = true
		case !k.Kept:
			k.Value = 0
		default:
			k.Value = rtMask(k.Type, k.Value)
		}
		d.Constants = append(d.Constants, k)
	}
	d.Statics = nil
	for _, f := range c.Statics {
		switch {
		case f.Type == bmd.Object:
			f.Kept = true
		case !f.Kept:
			f.Value = 0
		default:
			f.Value = rtMask(f.Type, f.Value)
		}
		d.Statics = append(d.Statics, f)
	}
	d.Fields = nil
	for _, f := range c.Fields {
		f.Kept = f.Kept || f.Type == bmd.Object
		d.Fields = append(d.Fields, f)
	}
	return d
}

// rtScript writes records and keeps, for each, the records a reader must
// give back.
type rtScript struct {
	t    *testing.T
	out  bytes.Buffer
	w    *bmd.Writer
	want []string
}

func newRTScript(t *testing.T, m *bmd.Metadata) *rtScript {
	s := &rtScript{t: t}
	w, err := bmd.NewWriter(&s.out, m)
	if err != nil {
		t.Fatal(err)
	}
	s.w = w
	return s
}

func (s *rtScript) ok(err error) {
	s.t.Helper()
	if err != nil {
		s.t.Fatal(err)
	}
}

func (s *rtScript) expect(r *bmd.Record) { s.want = append(s.want, rtRender(r)) }

// rtRead reads a whole file and renders its records.
func rtRead(t *testing.T, src io.Reader) (bmd.Metadata, []string) {
	t.Helper()
	r, err := bmd.NewReader(src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d records: %v", len(got), err)
		}
		got = append(got, rtRender(rec))
	}
	return r.Metadata(), got
}

func rtCompare(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d records read, %d written", len(got), len(want))
	}
	bad := 0
	for i := 0; i < len(got) && i < len(want); i++ {
		if got[i] != want[i] {
			t.Errorf("record %d:\n got %s\nwant %s", i, got[i], want[i])
			if bad++; bad == 10 {
				t.Fatal("too many differences")
			}
		}
	}
}

// rtAllTypes is a class with a field, a static and a constant of every type,
// kept and dropped; its values are edge values of each type.
func rtAllTypes(loader, signers uint64, self, dangling uint64) *bmd.Class {
	c := &bmd.Class{StackTrace: math.MaxUint32, Super: dangling, Loader: loader, Signers: signers,
		ProtectionDomain: math.MaxUint64, Reserved1: 1, Reserved2: 0, InstanceSize: math.MaxUint32}
	edge := map[bmd.Type][]uint64{
		bmd.Boolean: {1, 0x1FF},                                                  // masked to a byte
		bmd.Byte:    {0xFF, 0},                                                   // -1, 0
		bmd.Char:    {0xFFFF, 0x10000},                                           // masked to 16 bits
		bmd.Short:   {0x8000, 0x7FFF},                                            // MinInt16, MaxInt16
		bmd.Int:     {0x80000000, 0x7FFFFFFF},                                    // MinInt32, MaxInt32
		bmd.Long:    {1 << 63, math.MaxUint64},                                   // MinInt64, -1
		bmd.Float:   {uint64(math.Float32bits(float32(math.NaN()))), 0x80000000}, // NaN, -0
		bmd.Double:  {math.Float64bits(math.Inf(-1)), math.MaxUint64},
		bmd.Object:  {0, self, self - 1, dangling, math.MaxUint64},
	}
	name := uint64(1)
	for _, t := range []bmd.Type{bmd.Object, bmd.Boolean, bmd.Char, bmd.Float, bmd.Double, bmd.Byte, bmd.Short, bmd.Int, bmd.Long} {
		for i, v := range edge[t] {
			kept := i%2 == 0 || t == bmd.Object
			c.Constants = append(c.Constants, bmd.Constant{Index: uint16(len(c.Constants) * 4097), Type: t, Kept: kept, Value: v})
			c.Statics = append(c.Statics, bmd.Static{Name: name, Type: t, Kept: kept, Value: v})
			c.Fields = append(c.Fields, bmd.Field{Name: name * 3, Type: t, Kept: i%2 == 1})
			name += 7
		}
	}
	c.Constants = append(c.Constants, bmd.Constant{Index: math.MaxUint16, Type: bmd.Int, Kept: true, Value: 1})
	c.Statics = append(c.Statics, bmd.Static{Name: 0, Type: bmd.Object, Value: 0}) // null name, null value
	c.Fields = append(c.Fields, bmd.Field{Name: math.MaxUint64, Type: bmd.Long, Kept: true})
	return c
}

// TestRoundTripEveryKind writes every record kind with edge values and
// checks that the reader gives back exactly what was written.
func TestRoundTripEveryKind(t *testing.T) {
	s := newRTScript(t, &bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.2", IDSize: 8, ClassesPlaced: true})
	w := s.w
	var nStrings uint64
	str := func(text []byte) {
		id, err := w.String(text)
		s.ok(err)
		nStrings++
		if id != nStrings {
			t.Fatalf("string ID %d, want %d", id, nStrings)
		}
		s.expect(&bmd.Record{Kind: bmd.KindString, ID: id, Length: uint64(len(text)), Text: text})
	}
	hashed := func(length, hash uint64) {
		id, err := w.HashedString(length, hash)
		s.ok(err)
		nStrings++
		if id != nStrings {
			t.Fatalf("string ID %d, want %d", id, nStrings)
		}
		s.expect(&bmd.Record{Kind: bmd.KindHashedString, ID: id, Length: length, Hash: hash})
	}
	str(nil)
	str([]byte{0, 0xFF, 0xC0, 0x80, 0xED, 0xA0, 0x80})
	str(bytes.Repeat([]byte("0123456789abcdef"), 20000)) // 320,000 bytes: more than the reader's buffer
	hashed(0, 0)
	hashed(math.MaxUint64, math.MaxUint64)
	// More than 64 KiB of entries: the run is split, the IDs go on.
	for i := range 8000 {
		hashed(uint64(i), xxhash.Sum64String(fmt.Sprint(i)))
	}
	str([]byte("x"))

	loadClass := func(serial uint32, class uint64, trace uint32, name uint64) {
		s.ok(w.LoadClass(serial, class, trace, name))
		s.expect(&bmd.Record{Kind: bmd.KindLoadClass, Serial: serial, Class: class, Trace: trace, Name: name})
	}
	loadClass(math.MaxUint32, math.MaxUint64, math.MaxUint32, math.MaxUint64)
	loadClass(0, 0, 0, 0) // every delta negative
	loadClass(1, 1, 0, 1)
	loadClass(7, 3, 9, 1<<40)

	s.ok(w.UnloadClass(0))
	s.expect(&bmd.Record{Kind: bmd.KindUnloadClass, Serial: 0})
	s.ok(w.UnloadClass(math.MaxUint32))
	s.expect(&bmd.Record{Kind: bmd.KindUnloadClass, Serial: math.MaxUint32})

	var frames uint64
	frame := func(method, sig, source uint64, class uint32, line int32) {
		id, err := w.StackFrame(method, sig, source, class, line)
		s.ok(err)
		frames++
		if id != frames {
			t.Fatalf("frame ID %d, want %d", id, frames)
		}
		s.expect(&bmd.Record{Kind: bmd.KindStackFrame, ID: id, Method: method, Signature: sig, Source: source, ClassSerial: class, Line: line})
	}
	for _, line := range []int32{-1, -2, -3, 0, math.MinInt32, math.MaxInt32} {
		frame(0, math.MaxUint64, 3, math.MaxUint32, line)
	}
	trace := func(serial, thread uint32, fr []uint64) {
		s.ok(w.StackTrace(serial, thread, fr))
		s.expect(&bmd.Record{Kind: bmd.KindStackTrace, Serial: serial, Thread: thread, Frames: fr})
	}
	trace(0, 0, nil)
	trace(math.MaxUint32, math.MaxUint32, []uint64{0, math.MaxUint64, 1, 99})
	many := make([]uint64, 70000)
	for i := range many {
		many[i] = uint64(i * i)
	}
	trace(5, 6, many)

	s.ok(w.StartThread(math.MaxUint32, math.MaxUint64, math.MaxUint32, 0, math.MaxUint64, 2))
	s.expect(&bmd.Record{Kind: bmd.KindStartThread, Serial: math.MaxUint32, Object: math.MaxUint64, Trace: math.MaxUint32, Name: 0, Group: math.MaxUint64, Parent: 2})
	s.ok(w.EndThread(math.MaxUint32))
	s.expect(&bmd.Record{Kind: bmd.KindEndThread, Serial: math.MaxUint32})

	raw := func(tag uint8, body []byte) {
		s.ok(w.RawRecord(tag, body))
		s.expect(&bmd.Record{Kind: bmd.KindRawRecord, Tag: tag, Text: body})
	}
	raw(0, nil)
	raw(255, []byte{1, 2, 3})
	raw(0x0E, bytes.Repeat([]byte{0xAB, 0xCD, 0xEF}, 100000)) // 300,000 bytes

	// TIME and TRACE are written only when they change; TIME applies to
	// the records that follow.
	s.ok(w.Time(0))
	s.ok(w.Time(math.MaxUint32))
	s.expect(&bmd.Record{Kind: bmd.KindTime, Time: math.MaxUint32})
	s.ok(w.Time(math.MaxUint32))
	s.ok(w.Time(0))
	s.expect(&bmd.Record{Kind: bmd.KindTime, Time: 0})

	// Classes: before the heap dump, as crunch writes them.
	classes := []*bmd.Class{
		{},                         // 1: empty
		rtAllTypes(5, 0, 2, 1<<40), // 2: super dangling
		{Super: 2, Fields: []bmd.Field{{Name: 4, Type: bmd.Int, Kept: true}}},   // 3: subclass of 2
		{Super: 5, Loader: 3, Fields: []bmd.Field{{Name: 1, Type: bmd.Object}}}, // 4: super defined later
		{Super: 4, Loader: 0, Fields: []bmd.Field{{Name: 2, Type: bmd.Short}}},  // 5: a cycle with 4
		{Super: 6, Fields: []bmd.Field{{Name: 9, Type: bmd.Byte, Kept: true}}},  // 6: its own super
	}
	for i, c := range classes {
		idx, err := w.Class(c)
		s.ok(err)
		if idx != uint64(i+1) {
			t.Fatalf("class index %d, want %d", idx, i+1)
		}
		d := rtClassRead(c, idx)
		s.expect(&bmd.Record{Kind: bmd.KindClass, ID: idx, Trace: c.StackTrace, Def: d})
	}
	layout := func(idx uint64) []bmd.Field {
		l, ok := w.Layout(idx)
		if !ok {
			t.Fatalf("no layout for class %d", idx)
		}
		return l
	}
	if l := layout(3); len(l) != 1+len(classes[1].Fields) || l[0].Name != 4 || l[1] != classes[1].Fields[0] {
		t.Fatalf("layout of class 3: %v", l)
	}
	if l := layout(4); len(l) != 2 || l[0].Name != 1 || l[1].Name != 2 {
		t.Fatalf("layout of the cycle 4 -> 5 -> 4: %v", l)
	}
	if l := layout(6); len(l) != 1 {
		t.Fatalf("layout of class 6, its own super: %v", l)
	}

	s.ok(w.HeapDump(true))
	s.expect(&bmd.Record{Kind: bmd.KindHeapDump, Segment: true})
	s.ok(w.HeapInfo(math.MaxUint32, math.MaxUint64))
	s.expect(&bmd.Record{Kind: bmd.KindHeapInfo, HeapType: math.MaxUint32, Name: math.MaxUint64})
	s.ok(w.PlaceClasses(0)) // nothing
	s.ok(w.PlaceClasses(2))
	s.expect(&bmd.Record{Kind: bmd.KindPlaceClasses, ID: 1, Length: 2})

	objects := uint64(len(classes))
	instance := func(class uint64, values []uint64) uint64 {
		id, err := w.Instance(class, values)
		s.ok(err)
		objects++
		if id != objects {
			t.Fatalf("instance ID %d, want %d", id, objects)
		}
		want := make([]uint64, len(values))
		for i, f := range layout(class) {
			switch {
			case f.Type == bmd.Object:
				want[i] = values[i]
			case f.Kept:
				want[i] = rtMask(f.Type, values[i])
			}
		}
		s.expect(&bmd.Record{Kind: bmd.KindInstance, ID: id, Class: class, Values: want, Trace: 0})
		return id
	}
	// An instance of class 3: every type, each field given an edge value
	// (references: null, self, the object before, one above N, the
	// largest ID, a class).
	l3 := layout(3)
	vals := make([]uint64, len(l3))
	self := objects + 1
	refs := []uint64{0, self, self - 1, 1 << 40, math.MaxUint64, 2, self + 1000}
	nref := 0
	for i, f := range l3 {
		switch f.Type {
		case bmd.Object:
			vals[i] = refs[nref%len(refs)]
			nref++
		case bmd.Int:
			vals[i] = 0xFFFFFFFF80000000 // only the low 32 bits count
		case bmd.Long, bmd.Double:
			vals[i] = 1 << 63
		default:
			vals[i] = math.MaxUint64
		}
	}
	instance(3, vals)
	instance(1, nil)
	instance(4, []uint64{0, 0xFFFF})
	instance(6, []uint64{0x80})

	s.ok(w.Trace(math.MaxUint32))
	s.expect(&bmd.Record{Kind: bmd.KindTrace, Trace: math.MaxUint32})
	s.ok(w.Trace(math.MaxUint32)) // unchanged: nothing
	s.ok(w.PlaceClasses(3))
	s.expect(&bmd.Record{Kind: bmd.KindPlaceClasses, ID: 3, Length: 3})
	s.ok(w.PlaceClasses(1))
	s.expect(&bmd.Record{Kind: bmd.KindPlaceClasses, ID: 6, Length: 1})

	objArray := func(class uint64, elems []uint64) {
		id, err := w.ObjectArray(class, elems)
		s.ok(err)
		objects++
		if id != objects {
			t.Fatalf("array ID %d, want %d", id, objects)
		}
		s.expect(&bmd.Record{Kind: bmd.KindObjectArray, ID: id, Trace: math.MaxUint32, Class: class, Count: uint32(len(elems)), Elements: elems})
	}
	objArray(0, nil)         // null class
	objArray(1, []uint64{0}) // a class record
	objArray(uint64(len(classes)), []uint64{objects + 1, objects, objects + 2})
	objArray(uint64(len(classes))+1, []uint64{math.MaxUint64}) // the first ID that is not a class
	objArray(math.MaxUint64, []uint64{1})
	big := make([]uint64, 100000)
	for i := range big {
		big[i] = uint64(i) * 7919 % 100003
	}
	objArray(2, big)

	primArray := func(t bmd.Type, n uint32, noData bool) {
		id, err := w.PrimitiveArray(t, n, noData)
		s.ok(err)
		objects++
		k := bmd.KindPrimitiveArray
		if noData {
			k = bmd.KindPrimitiveNoData
		}
		s.expect(&bmd.Record{Kind: k, ID: id, Trace: math.MaxUint32, Type: t, Count: n})
	}
	for i, ty := range []bmd.Type{bmd.Boolean, bmd.Char, bmd.Float, bmd.Double, bmd.Byte, bmd.Short, bmd.Int, bmd.Long} {
		primArray(ty, []uint32{0, 1, math.MaxUint32}[i%3], i%2 == 1)
	}
	s.ok(w.Trace(0))
	s.expect(&bmd.Record{Kind: bmd.KindTrace, Trace: 0})
	s.ok(w.HeapDumpEnd())
	s.expect(&bmd.Record{Kind: bmd.KindHeapDumpEnd})

	// Roots: every kind, with edge values; runs come back sorted by
	// object, stably, each run by itself.
	s.ok(w.HeapDump(false))
	s.expect(&bmd.Record{Kind: bmd.KindHeapDump, Segment: false})
	type root struct {
		object, jni          uint64
		thread, frame, trace uint32
	}
	rootRun := func(kind uint8, rs []root) {
		for _, r := range rs {
			s.ok(w.Root(kind, r.object, r.thread, r.frame, r.jni, r.trace))
		}
		sorted := slices.Clone(rs)
		slices.SortStableFunc(sorted, func(a, b root) int {
			switch {
			case a.object < b.object:
				return -1
			case a.object > b.object:
				return 1
			}
			return 0
		})
		for _, r := range sorted {
			want := &bmd.Record{Kind: bmd.KindRoot, Tag: kind, Object: r.object}
			switch kind {
			case 0x01:
				want.JNIRef = r.jni
			case 0x02, 0x03, 0x8E:
				want.Thread, want.Frame = r.thread, r.frame
			case 0x04, 0x06:
				want.Thread = r.thread
			case 0x08:
				want.Thread, want.Trace = r.thread, r.trace
			}
			s.expect(want)
		}
	}
	edgeRoots := []root{
		{object: 9, jni: math.MaxUint64, thread: math.MaxUint32, frame: 0xFFFFFFFF, trace: math.MaxUint32},
		{object: 0, jni: 0, thread: 0, frame: 0, trace: 0},
		{object: math.MaxUint64, jni: 5, thread: 1, frame: 0xFFFFFFFE, trace: 1},
		{object: 9, jni: 1, thread: 2, frame: 1, trace: 2}, // same object: stays after the first 9
		{object: 1 << 40, jni: 1 << 63, thread: 3, frame: 7, trace: 3},
	}
	for _, k := range []uint8{0xFF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E, 0x90} {
		rootRun(k, edgeRoots)
	}
	// 10,000 roots of one kind given in descending order: a run of 8192
	// sorted, then a run of the remaining 1808 sorted.
	var desc []root
	for i := range 10000 {
		desc = append(desc, root{object: uint64(20000 - 2*i), thread: uint32(i)})
	}
	rootRun(0x03, desc[:8192])
	rootRun(0x03, desc[8192:])
	s.ok(w.HeapDumpEnd())
	s.expect(&bmd.Record{Kind: bmd.KindHeapDumpEnd})
	s.ok(w.Close())
	s.expect(&bmd.Record{Kind: bmd.KindEnd})
	if w.Objects() != objects {
		t.Errorf("Writer.Objects() = %d, want %d", w.Objects(), objects)
	}
	if n := w.Count[bmd.KindRoot]; n != 16*5+10000 {
		t.Errorf("Count[ROOT] = %d", n)
	}
	if n := w.Count[bmd.KindHashedString]; n != 8002 {
		t.Errorf("Count[HASHED STRING] = %d", n)
	}
	if n := w.Count[bmd.KindPlaceClasses]; n != 3 {
		t.Errorf("Count[PLACE CLASSES] = %d", n)
	}

	file := s.out.Bytes()
	meta, got := rtRead(t, bytes.NewReader(file))
	if !meta.ClassesPlaced || meta.IDSize != 8 {
		t.Errorf("metadata %+v", meta)
	}
	rtCompare(t, got, s.want)
	// The same through one-byte reads, and with the data and io.EOF together.
	_, got = rtRead(t, iotest.OneByteReader(bytes.NewReader(file)))
	rtCompare(t, got, s.want)
	_, got = rtRead(t, iotest.DataErrReader(bytes.NewReader(file)))
	rtCompare(t, got, s.want)

	// The runs as stored: a run of hashed strings is cut when its entries
	// reach 64 KiB, a run of roots when it holds 8192 entries.
	var wantHashed []uint64
	var n, size uint64
	add := func(length uint64) {
		n++
		size += uint64(protowire.SizeVarint(length)) + 8
		if size >= 1<<16 {
			wantHashed = append(wantHashed, n)
			n, size = 0, 0
		}
	}
	add(0)
	add(math.MaxUint64)
	for i := range 8000 {
		add(uint64(i))
	}
	wantHashed = append(wantHashed, n)
	var wantRoots []uint64
	for range 16 {
		wantRoots = append(wantRoots, 5)
	}
	wantRoots = append(wantRoots, 8192, 1808)
	hashedRuns, rootRuns := rtRuns(t, file)
	if !slices.Equal(hashedRuns, wantHashed) || len(wantHashed) != 2 {
		t.Errorf("hashed string runs %v, want %v", hashedRuns, wantHashed)
	}
	if !slices.Equal(rootRuns, wantRoots) {
		t.Errorf("root runs %v, want %v", rootRuns, wantRoots)
	}
}

// rtRuns returns the entry counts of the runs of hashed strings and of
// roots in file, as stored after each run's tag (and root kind).
func rtRuns(t *testing.T, file []byte) (hashed, roots []uint64) {
	t.Helper()
	r, err := bmd.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	left := uint64(0) // entries left in the current run
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return hashed, roots
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind != bmd.KindHashedString && rec.Kind != bmd.KindRoot {
			continue
		}
		if left > 0 {
			left--
			continue
		}
		// The first entry of a run: its offset is the run's tag.
		at := rec.Offset + 1
		if rec.Kind == bmd.KindRoot {
			at++
		}
		if file[rec.Offset] != byte(rec.Kind) {
			t.Fatalf("%s run at offset %d starts with %02x", rec.Kind, rec.Offset, file[rec.Offset])
		}
		n, k := protowire.ConsumeVarint(file[at:])
		if k < 0 || n == 0 {
			t.Fatalf("%s run at offset %d: bad count", rec.Kind, rec.Offset)
		}
		left = n - 1
		if rec.Kind == bmd.KindRoot {
			roots = append(roots, n)
		} else {
			hashed = append(hashed, n)
		}
	}
}

// TestMetadataRoundTrip: every field survives the writer and the reader,
// classes_placed is written only when true, and unknown fields are skipped.
func TestMetadataRoundTrip(t *testing.T) {
	for _, m := range []bmd.Metadata{
		{IDSize: 4},
		{HPROFVersion: "JAVA PROFILE 1.0.3", IDSize: 8, Timestamp: math.MaxUint64, Hash: bmd.HashXX64,
			Options: "--keep-strings --drop-heap=zygote,image", Tool: "heapcrunch 0.1.0 ünïcode",
			Objects: math.MaxUint64, Classes: 1 << 32, Strings: 0, ClassesPlaced: true},
		{IDSize: 8, ClassesPlaced: true, Alignment: 16, UncompressedRefs: true},
	} {
		b := bmd.AppendMetadata(nil, &m)
		got, err := bmd.ParseMetadata(b)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("ParseMetadata(AppendMetadata(%+v)) = %+v, %v", m, got, err)
		}
		if placed := bytes.Contains(b, []byte{0x50, 0x01}); placed != m.ClassesPlaced {
			t.Errorf("classes_placed %v: metadata % x", m.ClassesPlaced, b)
		}
		var out bytes.Buffer
		w, err := bmd.NewWriter(&out, &m)
		if err != nil || w.Close() != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes()[:1], []byte{2}) || !bytes.Contains(out.Bytes(), b) {
			t.Errorf("header % x does not hold version 2 and the metadata % x", out.Bytes(), b)
		}
		r, err := bmd.NewReader(&out)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.Metadata(), m) {
			t.Errorf("read metadata %+v, want %+v", r.Metadata(), m)
		}
	}

	// Fields this reader does not know, of every wire type, are skipped; a
	// repeated known field takes the last value; any non-zero
	// classes_placed is true.
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, "JAVA PROFILE 1.0.1")
	b = protowire.AppendTag(b, 51, protowire.VarintType)
	b = protowire.AppendVarint(b, math.MaxUint64)
	b = protowire.AppendTag(b, 52, protowire.BytesType)
	b = protowire.AppendBytes(b, bytes.Repeat([]byte{0xFF}, 300))
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, 4)
	b = protowire.AppendTag(b, 53, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, 0xDEADBEEF)
	b = protowire.AppendTag(b, 54, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, 1)
	b = protowire.AppendTag(b, 55, protowire.StartGroupType)
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 7)
	b = protowire.AppendTag(b, 55, protowire.EndGroupType)
	b = protowire.AppendTag(b, 7, protowire.VarintType)
	b = protowire.AppendVarint(b, 3)
	b = protowire.AppendTag(b, 7, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 10, protowire.VarintType)
	b = protowire.AppendVarint(b, 2)
	b = protowire.AppendTag(b, 1000, protowire.BytesType)
	b = protowire.AppendString(b, "a field of the future")
	want := bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.1", IDSize: 4, Objects: 1, ClassesPlaced: true}
	if got, err := bmd.ParseMetadata(b); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseMetadata with unknown fields = %+v, %v; want %+v", got, err, want)
	}
	// The same as a file: one object record and END.
	file := protowire.AppendVarint([]byte{2}, uint64(len(b)))
	file = append(file, b...)
	file = append(file, 0x0d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x16, 0x01, 0x15, 0x01, 0x00)
	meta, recs := rtRead(t, bytes.NewReader(file))
	if !reflect.DeepEqual(meta, want) || len(recs) != 3 || recs[1] != "PLACE CLASSES first=1 n=1" {
		t.Errorf("file with unknown metadata fields: %+v %q", meta, recs)
	}
	// classes_placed written as 0 is false.
	b0 := protowire.AppendVarint(protowire.AppendTag(nil, 10, protowire.VarintType), 0)
	if m, err := bmd.ParseMetadata(b0); err != nil || m.ClassesPlaced {
		t.Errorf("classes_placed 0: %+v, %v", m, err)
	}

	// Damaged metadata is an error, and for the reader not a BMD file.
	for _, bad := range [][]byte{
		{0x12},             // field 2 as bytes, no length
		{0x0a, 0x05, 'J'},  // field 1, 5 bytes, 1 present
		{0x10, 0x80},       // field 2, varint cut
		{0x0f},             // wire type 7
		{0x80, 0x80, 0x80}, // tag cut
	} {
		if _, err := bmd.ParseMetadata(bad); err == nil {
			t.Errorf("ParseMetadata(% x) accepted", bad)
		}
		file := append([]byte{2, byte(len(bad))}, bad...)
		_, err := bmd.NewReader(bytes.NewReader(file))
		var fe *bmd.FormatError
		if !errors.As(err, &fe) || !errors.Is(err, bmd.ErrNotBMD) || fe.Record != "header" {
			t.Errorf("NewReader with metadata % x: %v", bad, err)
		}
	}
}

// rtHeader is the header of a file with 4-byte IDs and nothing else.
func rtHeader(placed bool) []byte {
	var out bytes.Buffer
	w, _ := bmd.NewWriter(&out, &bmd.Metadata{IDSize: 4, ClassesPlaced: placed})
	w.Flush()
	return out.Bytes()
}

// rtEmptyClass is a CLASS record with nothing in it.
var rtEmptyClass = []byte{0x0d, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

func rtCat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// rtReadErr reads data to its first error and returns it with the records
// read before it.
func rtReadErr(data []byte) (recs []string, err error) {
	r, err := bmd.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	for {
		rec, err := r.Next()
		if err != nil {
			return recs, err
		}
		recs = append(recs, rtRender(rec))
	}
}

// TestReaderErrors: each kind of bad input gives a *bmd.FormatError that
// says what is wrong and where.
func TestReaderErrors(t *testing.T) {
	hdr := rtHeader(true)
	h := int64(len(hdr))
	v := func(x uint64) []byte { return protowire.AppendVarint(nil, x) }
	for _, c := range []struct {
		name   string
		data   []byte
		msg    string
		record string
		offset int64
		is     error
	}{
		{"empty", nil, "empty input", "header", 0, bmd.ErrNotBMD},
		{"version 3", []byte{3, 0}, "unknown version 3", "header", 0, bmd.ErrNotBMD},
		{"no version", []byte{0xFF}, "no version number", "header", 0, bmd.ErrNotBMD},
		{"huge metadata", rtCat([]byte{2}, v(1<<20+1)), "metadata of 1048577 bytes", "header", -1, bmd.ErrNotBMD},
		{"no id size", []byte{2, 0}, "identifier size 0", "header", -1, bmd.ErrNotBMD},
		{"id size 5", []byte{2, 2, 0x10, 5}, "identifier size 5", "header", -1, bmd.ErrNotBMD},
		{"alignment 12", []byte{2, 4, 0x10, 4, 0x58, 12}, "alignment 12 in metadata", "header", -1, bmd.ErrNotBMD},
		{"alignment 512", []byte{2, 5, 0x10, 4, 0x58, 0x80, 0x04}, "alignment 512 in metadata", "header", -1, bmd.ErrNotBMD},
		{"HPROF version", rtCat([]byte{2, 9, 0x10, 4, 0x0a, 5}, []byte("HELLO")), `HPROF version "HELLO"`, "header", -1, nil},
		{"no END", hdr, "the file ends without its END record", "", h, io.ErrUnexpectedEOF},
		{"tag 0", rtCat(hdr, []byte{0}), "unknown record tag 0", "", h, nil},
		{"tag 24", rtCat(hdr, []byte{24}), "unknown record tag 24", "", h, nil},
		{"array name of nothing", rtCat(hdr, []byte{0x17, 0x01, 0x02}), "array name of string 1 with 1 dimensions (0 strings read)", "ARRAY NAME", h, nil},
		{"array name of itself", rtCat(hdr, []byte{0x01, 0x00, 0x01, 'a', 0x17, 0x02, 0x02}), "array name of string 2", "ARRAY NAME", h + 4, nil},
		{"array name 0 dims", rtCat(hdr, []byte{0x01, 0x00, 0x01, 'a', 0x17, 0x01, 0x01}), "with 0 dimensions", "ARRAY NAME", h + 4, nil},
		{"array name 256 dims", rtCat(hdr, []byte{0x01, 0x00, 0x01, 'a', 0x17, 0x01}, v(512)), "with 256 dimensions", "ARRAY NAME", h + 4, nil},
		{"string prefix too long", rtCat(hdr, []byte{0x01, 0x00, 0x01, 'a', 0x01, 0x02, 0x01, 'b'}), "shares 2 bytes with a previous string of 1", "STRING", h + 4, nil},
		{"tag 255", rtCat(hdr, rtEmptyClass, []byte{0xFF, 0x01}), "unknown record tag 255", "", h + 12, nil},
		{"place 2 of 1", rtCat(hdr, rtEmptyClass, []byte{0x16, 0x02}), "places 2 classes, 1 are defined and not yet placed", "PLACE CLASSES", h + 12, nil},
		{"place 0", rtCat(hdr, rtEmptyClass, []byte{0x16, 0x00}), "places 0 classes", "PLACE CLASSES", h + 12, nil},
		{"place twice", rtCat(hdr, rtEmptyClass, []byte{0x16, 0x01, 0x16, 0x01}), "places 1 classes, 0 are defined and not yet placed", "PLACE CLASSES", h + 14, nil},
		{"place before class", rtCat(hdr, []byte{0x16, 0x01}, rtEmptyClass), "places 1 classes, 0 are defined", "PLACE CLASSES", h, nil},
		{"place huge", rtCat(hdr, rtEmptyClass, []byte{0x16}, v(math.MaxUint64)), "places 18446744073709551615 classes", "PLACE CLASSES", h + 12, nil},
		{"END objects", rtCat(hdr, rtEmptyClass, []byte{0x15, 0x02, 0x00}), "file ends with 1 objects and 0 strings, END record says 2 and 0", "END", h + 12, nil},
		{"END strings", rtCat(hdr, []byte{0x01, 0x00, 0x00, 0x15, 0x00, 0x02}), "file ends with 0 objects and 1 strings, END record says 0 and 2", "END", h + 3, nil},
		{"class after objects", rtCat(hdr, rtEmptyClass, []byte{0x10, 0x0a, 0x05}, rtEmptyClass), "class record after other object records", "CLASS", h + 15, nil},
		{"instance of no class", rtCat(hdr, rtEmptyClass, []byte{0x0e, 0x02}), "instance of undefined class 2", "INSTANCE", h + 12, nil},
		{"instance of class 0", rtCat(hdr, []byte{0x0e, 0x00}), "instance of undefined class 0", "INSTANCE", h, nil},
		{"field type 3", rtCat(hdr, rtEmptyClass[:11], []byte{0x01, 0x02, 0x06}), "invalid field type 3", "CLASS", h, nil},
		{"field type 12", rtCat(hdr, rtEmptyClass[:11], []byte{0x01, 0x02, 0x18}), "invalid field type 12", "CLASS", h, nil},
		{"65536 fields", rtCat(hdr, rtEmptyClass[:11], v(65536)), "65536 instance fields", "CLASS", h, nil},
		{"65536 constants", rtCat(hdr, rtEmptyClass[:9], v(65536)), "65536 constants", "CLASS", h, nil},
		{"empty hashed run", rtCat(hdr, []byte{0x02, 0x00}), "empty run of hashed strings", "HASHED STRING", h, nil},
		{"empty root run", rtCat(hdr, []byte{0x12, 0x03, 0x00}), "empty run of roots", "ROOT", h, nil},
		{"root kind 9", rtCat(hdr, []byte{0x12, 0x09, 0x01, 0x00}), "invalid root kind 0x09", "ROOT", h, nil},
		{"serial 2^32", rtCat(hdr, []byte{0x04}, v(1<<32)), "value 4294967296 does not fit in 32 bits", "UNLOAD CLASS", h, nil},
		{"array length 2^32", rtCat(hdr, []byte{0x10, 0x0a}, v(1<<32)), "does not fit in 32 bits", "PRIMITIVE ARRAY", h, nil},
		{"varint overflow", rtCat(hdr, []byte{0x04}, bytes.Repeat([]byte{0xFF}, 11)), "varint overflows 64 bits", "UNLOAD CLASS", h, nil},
		{"string 2^31+1", rtCat(hdr, []byte{0x01, 0x00}, v(1<<31+1)), "string of 2147483649 bytes is implausible", "STRING", h, nil},
		{"raw tag 256", rtCat(hdr, []byte{0x09}, v(256), []byte{0}), "raw record tag 256 length 0 out of range", "RAW RECORD", h, nil},
		{"element type object", rtCat(hdr, []byte{0x10, 0x02, 0x05}), "invalid element type 2", "PRIMITIVE ARRAY", h, nil},
		{"element type 12", rtCat(hdr, []byte{0x11, 0x0c, 0x05}), "invalid element type 12", "PRIMITIVE ARRAY NODATA", h, nil},
		{"string cut", rtCat(hdr, []byte{0x01, 0x00, 0x05, 'a'}), "truncated", "STRING", h, io.ErrUnexpectedEOF},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := rtReadErr(c.data)
			var fe *bmd.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T), want a *bmd.FormatError", err, err)
			}
			if !strings.Contains(fe.Msg, c.msg) {
				t.Errorf("message %q, want %q", fe.Msg, c.msg)
			}
			if fe.Record != c.record {
				t.Errorf("record %q, want %q", fe.Record, c.record)
			}
			if c.offset >= 0 && fe.Offset != c.offset {
				t.Errorf("offset %d, want %d", fe.Offset, c.offset)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v does not wrap %v", err, c.is)
			}
			if c.is == nil && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, bmd.ErrNotBMD)) {
				t.Errorf("error %v wraps %v", err, fe.Err)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("at offset %d", fe.Offset)) {
				t.Errorf("error %q does not give its offset", err)
			}
		})
	}

	// Version 1 files are for NewV1Reader.
	if _, err := bmd.NewReader(bytes.NewReader([]byte{1, 0x12})); !errors.Is(err, bmd.ErrVersion1) {
		t.Errorf("version 1: %v", err)
	}
	// Bytes after END are not read.
	recs, err := rtReadErr(rtCat(hdr, []byte{0x15, 0x00, 0x00, 0xFF, 0xFF}))
	if err != io.EOF || len(recs) != 1 || recs[0] != "END" {
		t.Errorf("after END: %q, %v", recs, err)
	}
	// A reader error that is not the input's fault is returned as such.
	boom := errors.New("disk on fire")
	r, err := bmd.NewReader(io.MultiReader(bytes.NewReader(rtCat(hdr, rtEmptyClass[:5])), iotest.ErrReader(boom)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Errorf("source error: %v", err)
	}
}

// rtSmall is a small file with every record kind.
func rtSmall(t *testing.T) []byte {
	var out bytes.Buffer
	w, err := bmd.NewWriter(&out, &bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.2", IDSize: 4, Timestamp: 1 << 40,
		Hash: bmd.HashXX64, Tool: "t", Objects: 5, Classes: 2, Strings: 4, ClassesPlaced: true})
	if err != nil {
		t.Fatal(err)
	}
	w.String([]byte("java.lang.String"))
	w.HashedString(300, math.MaxUint64)
	w.HashedString(5, 1)
	w.String(nil)
	w.Time(1 << 20)
	w.LoadClass(1<<20, 2, 1, 1)
	w.LoadClass(1, 1, 0, 2)
	w.UnloadClass(7)
	f, _ := w.StackFrame(1, 2, 3, 1<<20, -1000)
	w.StackTrace(3, 4, []uint64{f, 200})
	w.StartThread(4, 300, 3, 1, 2, 0)
	w.EndThread(4)
	w.RawRecord(0x0E, []byte{0, 0, 0, 1, 0, 8})
	w.Class(&bmd.Class{Loader: 1 << 30, Fields: []bmd.Field{{Name: 3, Type: bmd.Long, Kept: true}, {Name: 4, Type: bmd.Double, Kept: true}}})
	w.Class(&bmd.Class{Super: 1, Statics: []bmd.Static{{Name: 2, Type: bmd.Float, Kept: true, Value: 0x3f800000}},
		Constants: []bmd.Constant{{Index: 9, Type: bmd.Object, Value: 1 << 35}}, Fields: []bmd.Field{{Name: 1, Type: bmd.Object}}})
	w.HeapDump(true)
	w.HeapInfo('A', 2)
	w.PlaceClasses(1)
	w.Trace(9)
	w.Instance(2, []uint64{4, 1 << 62, math.Float64bits(-2.5)})
	w.PlaceClasses(1)
	w.ObjectArray(50, []uint64{0, 3, 1 << 33})
	w.PrimitiveArray(bmd.Char, 1<<30, false)
	w.PrimitiveArray(bmd.Byte, 3, true)
	w.Root(0x01, 4, 0, 0, 1<<40, 0)
	w.Root(0x03, 5, 1, 0xFFFFFFFF, 0, 0)
	w.Root(0x03, 3, 1, 2, 0, 0)
	w.Root(0x08, 1<<34, 1, 0, 0, 3)
	w.HeapDumpEnd()
	w.Time(1 << 21)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestReaderTruncated cuts a small file with every record kind at every
// byte: the reader gives the records before the cut, then a
// *bmd.FormatError wrapping io.ErrUnexpectedEOF (ErrNotBMD for no byte at
// all), never a panic.
func TestReaderTruncated(t *testing.T) {
	for _, file := range [][]byte{rtSmall(t), exHex(t, exFile1Hex)} {
		full, err := rtReadErr(file)
		if err != io.EOF {
			t.Fatalf("the whole file: %v", err)
		}
		for cut := 0; cut < len(file); cut++ {
			recs, err := rtReadErr(file[:cut])
			var fe *bmd.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("cut at %d: error %v (%T), want a *bmd.FormatError", cut, err, err)
			}
			want := io.ErrUnexpectedEOF
			if cut == 0 {
				want = bmd.ErrNotBMD
			}
			if !errors.Is(err, want) {
				t.Errorf("cut at %d: %v does not wrap %v", cut, err, want)
			}
			if fe.Offset < 0 || fe.Offset > int64(cut) {
				t.Errorf("cut at %d: error at offset %d", cut, fe.Offset)
			}
			if len(recs) >= len(full) || !slices.Equal(recs, full[:len(recs)]) {
				t.Fatalf("cut at %d: records %q are not a prefix of %q", cut, recs, full)
			}
		}
	}
}

// TestWriterErrors: the writer refuses what the reader would reject, and
// the first error sticks.
func TestWriterErrors(t *testing.T) {
	newW := func() (*bmd.Writer, *bytes.Buffer) {
		var out bytes.Buffer
		w, err := bmd.NewWriter(&out, &bmd.Metadata{IDSize: 4, ClassesPlaced: true})
		if err != nil {
			t.Fatal(err)
		}
		return w, &out
	}
	sticks := func(w *bmd.Writer, out *bytes.Buffer, err error, msg string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Fatalf("error %v, want %q", err, msg)
		}
		if w.Err() != err {
			t.Errorf("Err() = %v, want %v", w.Err(), err)
		}
		if _, e := w.String([]byte("more")); e != err {
			t.Errorf("a later call returns %v", e)
		}
		if e := w.Close(); e != err {
			t.Errorf("Close returns %v", e)
		}
		if _, e := rtReadErr(out.Bytes()); e == io.EOF {
			t.Errorf("the output of a failed writer reads as a complete file")
		}
	}

	// A class after objects, of each kind of object.
	for _, obj := range []func(*bmd.Writer) error{
		func(w *bmd.Writer) error { _, err := w.Instance(1, nil); return err },
		func(w *bmd.Writer) error { _, err := w.ObjectArray(1, nil); return err },
		func(w *bmd.Writer) error { _, err := w.PrimitiveArray(bmd.Int, 1, false); return err },
		func(w *bmd.Writer) error { _, err := w.PrimitiveArray(bmd.Int, 1, true); return err },
	} {
		w, out := newW()
		if _, err := w.Class(&bmd.Class{}); err != nil {
			t.Fatal(err)
		}
		if err := obj(w); err != nil {
			t.Fatal(err)
		}
		id, err := w.Class(&bmd.Class{})
		if id != 0 {
			t.Errorf("a refused class has index %d", id)
		}
		sticks(w, out, err, "class record after other object records")
	}

	// PLACE CLASSES of more classes than defined.
	w, out := newW()
	w.Class(&bmd.Class{})
	w.Class(&bmd.Class{})
	if err := w.PlaceClasses(1); err != nil {
		t.Fatal(err)
	}
	sticks(w, out, w.PlaceClasses(2), "3 classes placed, 2 defined")
	w, out = newW()
	sticks(w, out, w.PlaceClasses(1), "1 classes placed, 0 defined")

	// PlaceClasses(0) writes nothing.
	w1, out1 := newW()
	w2, out2 := newW()
	w1.Class(&bmd.Class{})
	w2.Class(&bmd.Class{})
	if err := w2.PlaceClasses(0); err != nil {
		t.Fatal(err)
	}
	w1.Close()
	w2.Close()
	if !bytes.Equal(out1.Bytes(), out2.Bytes()) {
		t.Errorf("PlaceClasses(0) wrote % x", out2.Bytes()[out1.Len()-3:])
	}

	// An instance of a class that is not defined, or with the wrong number
	// of values.
	w, out = newW()
	_, err := w.Instance(1, nil)
	sticks(w, out, err, "instance of undefined class 1")
	w, out = newW()
	w.Class(&bmd.Class{Fields: []bmd.Field{{Name: 1, Type: bmd.Int}}})
	_, err = w.Instance(1, []uint64{1, 2})
	sticks(w, out, err, "instance of class 1 has 2 values for 1 fields")

	// A root of a kind that does not exist.
	w, out = newW()
	sticks(w, out, w.Root(0x09, 1, 0, 0, 0, 0), "invalid root kind 0x09")

	// A reference whose distance from its object is exactly 2^63 has no
	// encoding (zigzag(-2^63)+1 wraps to 0, null): refused, not written
	// as null.
	w, out = newW()
	w.Class(&bmd.Class{Fields: []bmd.Field{{Name: 1, Type: bmd.Object}}})
	_, err = w.Instance(1, []uint64{2 + 1<<63})
	sticks(w, out, err, "cannot be encoded")
	// One less or more is fine.
	for _, target := range []uint64{1 + 1<<63, 3 + 1<<63, math.MaxUint64} {
		w, out = newW()
		w.Class(&bmd.Class{Fields: []bmd.Field{{Name: 1, Type: bmd.Object}}})
		if _, err := w.Instance(1, []uint64{target}); err != nil {
			t.Fatalf("reference to %d: %v", target, err)
		}
		w.Close()
		_, recs := rtRead(t, out)
		if want := fmt.Sprintf("INSTANCE id=2 trace=0 class=1 values=[%d]", target); recs[1] != want {
			t.Errorf("reference to %d read as %s", target, recs[1])
		}
	}
}

// TestWriterRefusesRawRecordWithOwnKind: the writer refuses what the
// reader refuses: a RAW RECORD carrying a tag that has its own record kind.
func TestWriterRefusesRawRecordWithOwnKind(t *testing.T) {
	for _, tag := range []uint8{0x01, 0x02, 0x03, 0x04, 0x05, 0x0A, 0x0B, 0x0C, 0x1C, 0x2C} {
		w, err := bmd.NewWriter(io.Discard, &bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.2", IDSize: 8})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.RawRecord(tag, nil); err == nil || !strings.Contains(err.Error(), "own record kind") {
			t.Errorf("tag 0x%02X: err = %v, want a refusal", tag, err)
		}
		if w.Err() == nil {
			t.Errorf("tag 0x%02X: the error does not stick", tag)
		}
	}
	w, _ := bmd.NewWriter(io.Discard, &bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.2", IDSize: 8})
	if err := w.RawRecord(0x0E, []byte{0, 0, 0, 1, 0, 8}); err != nil {
		t.Errorf("CONTROL SETTINGS refused: %v", err)
	}
}

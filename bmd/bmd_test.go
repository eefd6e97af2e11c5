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
	"sort"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/cespare/xxhash/v2"
	"github.com/heapcrunch/heapcrunch/bmd"
	"google.golang.org/protobuf/encoding/protowire"
)

// The framing of spec/bmd.md §3 and §3.1 as these tests build and take it
// apart, independently of the package: a header (version, metadata, the
// header checksum) and blocks (payload length, payload, checksum).

// rtHeaderOf returns the header of a file with metadata m, which it marks
// checksummed_blocks.
func rtHeaderOf(m bmd.Metadata) []byte {
	m.Blocks = true
	return rtRawHeader(bmd.AppendMetadata(nil, &m))
}

// rtRawHeader returns a header that holds meta as it is, with its checksum.
func rtRawHeader(meta []byte) []byte {
	h := protowire.AppendVarint([]byte{2}, uint64(len(meta)))
	h = append(h, meta...)
	return binary.LittleEndian.AppendUint64(h, xxhash.Sum64(h))
}

// rtBlock places a block in a file.
type rtBlock struct {
	at     int64 // file offset of its length varint
	head   int   // bytes of its length varint
	n      int   // payload bytes
	stream int   // stream offset of its payload
}

// end returns the file offset after the block's checksum.
func (b rtBlock) end() int64 { return b.at + int64(b.head+b.n+8) }

// rtFramed is a file taken apart: its header and its blocks, and the
// stream of records their payloads make.
type rtFramed struct {
	size   int64
	header int // bytes, checksum included; 0 if the header is bad
	blocks []rtBlock
	stream []byte
}

// rtUnframe takes a file apart, checking the header and every block. On
// bad framing it returns the blocks before it, with an error.
func rtUnframe(file []byte) (*rtFramed, error) {
	f := &rtFramed{size: int64(len(file))}
	v, k := protowire.ConsumeVarint(file)
	if k < 0 || v != 2 {
		return f, errors.New("not version 2")
	}
	n, k2 := protowire.ConsumeVarint(file[k:])
	if k2 < 0 || n > uint64(len(file)) || len(file)-k-k2 < int(n)+8 {
		return f, errors.New("header cut short")
	}
	h := k + k2 + int(n)
	if xxhash.Sum64(file[:h]) != binary.LittleEndian.Uint64(file[h:]) {
		return f, errors.New("header checksum mismatch")
	}
	f.header = h + 8
	for at := f.header; at < len(file); {
		n, k := protowire.ConsumeVarint(file[at:])
		if k < 0 || n == 0 || n > bmd.MaxBlockSize || len(file)-at-k < int(n)+8 {
			return f, fmt.Errorf("block at offset %d: bad length or cut short", at)
		}
		end := at + k + int(n)
		if xxhash.Sum64(file[at:end]) != binary.LittleEndian.Uint64(file[end:]) {
			return f, fmt.Errorf("block at offset %d: checksum mismatch", at)
		}
		f.blocks = append(f.blocks, rtBlock{int64(at), k, int(n), len(f.stream)})
		f.stream = append(f.stream, file[at+k:end]...)
		at = end + 8
	}
	return f, nil
}

// fileOff returns the file offset of stream offset s; the end of the
// stream is the end of the file.
func (f *rtFramed) fileOff(s int) int64 {
	i := sort.Search(len(f.blocks), func(i int) bool { return s < f.blocks[i].stream+f.blocks[i].n })
	if i == len(f.blocks) {
		return f.size
	}
	b := f.blocks[i]
	return b.at + int64(b.head) + int64(s-b.stream)
}

// streamOff returns the stream offset of file offset off, or false if off
// is not in the payload of a block.
func (f *rtFramed) streamOff(off int64) (int, bool) {
	i := f.blockAt(off)
	if i < 0 || i == len(f.blocks) {
		return 0, false
	}
	b := f.blocks[i]
	p := b.at + int64(b.head)
	if off < p || off >= p+int64(b.n) {
		return 0, false
	}
	return b.stream + int(off-p), true
}

// blockAt returns the index of the block that holds file offset off:
// -1 in the header, len(f.blocks) after the last block.
func (f *rtFramed) blockAt(off int64) int {
	if off < int64(f.header) {
		return -1
	}
	return sort.Search(len(f.blocks), func(i int) bool { return off < f.blocks[i].end() })
}

// rtFrame makes a file of a header and a stream of records cut into
// blocks of the given payload sizes, in turn (one block if none).
func rtFrame(header, stream []byte, sizes ...int) []byte {
	if len(sizes) == 0 {
		sizes = []int{max(len(stream), 1)}
	}
	out := append([]byte(nil), header...)
	for i := 0; len(stream) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(stream))
		start := len(out)
		out = protowire.AppendVarint(out, uint64(n))
		out = append(out, stream[:n]...)
		out = binary.LittleEndian.AppendUint64(out, xxhash.Sum64(out[start:]))
		stream = stream[n:]
	}
	return out
}

// rtReframe returns file with its records cut into blocks of the given
// sizes.
func rtReframe(t testing.TB, file []byte, sizes ...int) []byte {
	t.Helper()
	f, err := rtUnframe(file)
	if err != nil {
		t.Fatal(err)
	}
	return rtFrame(file[:f.header], f.stream, sizes...)
}

// rtOffsets checks the offsets of the records read from a file, in order:
// each is in the payload of a block, after the previous record, and on
// the record's tag, but for the entries of a run after its first.
type rtOffsets struct {
	f       *rtFramed
	prev    int // stream offset of the previous record, -1 before the first
	left    uint64
	runKind bmd.Kind
}

func newRTOffsets(f *rtFramed) *rtOffsets { return &rtOffsets{f: f, prev: -1} }

// check checks rec and returns its stream offset.
func (o *rtOffsets) check(rec *bmd.Record) (int, error) {
	s, ok := o.f.streamOff(rec.Offset)
	if !ok {
		return 0, fmt.Errorf("%s record at offset %d, which is not in the payload of a block", rec.Kind, rec.Offset)
	}
	if s <= o.prev {
		return 0, fmt.Errorf("%s record at offset %d, not after the previous record", rec.Kind, rec.Offset)
	}
	o.prev = s
	if o.left > 0 {
		if rec.Kind != o.runKind {
			return 0, fmt.Errorf("%s record at offset %d within a run of %s", rec.Kind, rec.Offset, o.runKind)
		}
		o.left--
		return s, nil
	}
	if c := o.f.stream[s]; c != byte(rec.Kind) {
		return 0, fmt.Errorf("%s record at offset %d, where the byte is %02x", rec.Kind, rec.Offset, c)
	}
	if rec.Kind == bmd.KindHashedString || rec.Kind == bmd.KindRoot {
		at := s + 1
		if rec.Kind == bmd.KindRoot {
			at++
		}
		n, k := protowire.ConsumeVarint(o.f.stream[at:])
		if k < 0 || n == 0 {
			return 0, fmt.Errorf("%s run at offset %d without a count", rec.Kind, rec.Offset)
		}
		o.left, o.runKind = n-1, rec.Kind
	}
	return s, nil
}

// rtCat concatenates byte slices.
func rtCat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// rtV is a varint.
func rtV(x uint64) []byte { return protowire.AppendVarint(nil, x) }

// rtRender gives the fields that a record of its kind sets, so that a
// record read back can be compared with the record expected.
func rtRender(r *bmd.Record) string {
	s := r.Kind.String()
	switch r.Kind {
	case bmd.KindString:
		return s + fmt.Sprintf(" id=%d len=%d %s", r.ID, r.Length, rtBytes(r.Text))
	case bmd.KindHashedString:
		return s + fmt.Sprintf(" id=%d len=%d hash=%x", r.ID, r.Length, r.Hash)
	case bmd.KindArrayName:
		return s + fmt.Sprintf(" id=%d elem=%d dims=%d descriptor=%v", r.ID, r.Name, r.Dims, r.Descriptor)
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
	case bmd.KindObjectID:
		return s + fmt.Sprintf(" id=%d", r.ID)
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
func rtClassRead(c *bmd.Class) bmd.Class {
	d := *c
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

// rtRead reads a whole file (through wrap, if not nil), checks the offset
// of every record and renders the records.
func rtRead(t *testing.T, file []byte, wrap func(io.Reader) io.Reader) (bmd.Metadata, []string) {
	t.Helper()
	f, err := rtUnframe(file)
	if err != nil {
		t.Fatalf("the file's framing: %v", err)
	}
	var src io.Reader = bytes.NewReader(file)
	if wrap != nil {
		src = wrap(src)
	}
	r, err := bmd.NewReader(src)
	if err != nil {
		t.Fatal(err)
	}
	offs := newRTOffsets(f)
	var got []string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d records: %v", len(got), err)
		}
		if _, err := offs.check(rec); err != nil {
			t.Fatalf("record %d: %v", len(got), err)
		}
		got = append(got, rtRender(rec))
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("Next after the end: %v, want io.EOF", err)
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

// rtWritten returns the payload bytes a Writer has produced so far
// (records, and runs once written): the sum of its Bytes.
func rtWritten(w *bmd.Writer) (n uint64) {
	for _, b := range w.Bytes {
		n += b
	}
	return n
}

// rtAllTypes is a class with a field, a static and a constant of every type,
// kept and dropped; its values are edge values of each type.
func rtAllTypes(index, loader, signers, dangling uint64) *bmd.Class {
	self := index
	c := &bmd.Class{Index: index, StackTrace: math.MaxUint32, Super: dangling, Loader: loader, Signers: signers,
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
// checks that the reader gives back exactly what was written, in blocks
// of BlockSize bytes that records span freely.
func TestRoundTripEveryKind(t *testing.T) {
	const nClasses = 6
	s := newRTScript(t, &bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.2", IDSize: 8, Classes: nClasses, ClassesPlaced: true,
		Labels: []string{"app=com.example", "k=v=w"}})
	w := s.w
	var nStrings uint64
	str := func(text []byte) {
		id, err := w.ClearString(text)
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
	arrayName := func(elem uint64, dims uint8, descriptor bool) {
		id, err := w.ArrayName(elem, dims, descriptor)
		s.ok(err)
		nStrings++
		if id != nStrings {
			t.Fatalf("string ID %d, want %d", id, nStrings)
		}
		s.expect(&bmd.Record{Kind: bmd.KindArrayName, ID: id, Name: elem, Dims: dims, Descriptor: descriptor})
	}
	str(nil)
	str([]byte{0, 0xFF, 0xC0, 0x80, 0xED, 0xA0, 0x80})
	str(bytes.Repeat([]byte("0123456789abcdef"), 20000)) // 320,000 bytes: more than the reader's buffer
	str([]byte("0123456789abcdef0123"))                  // shares 20 bytes with it
	str([]byte("java.lang.Object"))
	str([]byte("java.lang.String")) // shares 10
	str([]byte("java.lang.String")) // shares all
	str([]byte("java"))             // shares all, shorter
	long := bytes.Repeat([]byte("x"), 300)
	str(long)
	str(long) // shares MaxSharedPrefix bytes, stores the rest
	hashed(0, 0)
	hashed(math.MaxUint64, math.MaxUint64)
	// More than 64 KiB of entries: the run is split, the IDs go on.
	for i := range 8000 {
		hashed(uint64(i), xxhash.Sum64String(fmt.Sprint(i)))
	}
	arrayName(1, 1, false)
	arrayName(nStrings, 255, true) // the array name just before
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

	// Classes, defined in another order than their indexes.
	classes := map[uint64]*bmd.Class{
		1: {Index: 1},                                                                        // empty
		2: rtAllTypes(2, 5, 0, 1<<40),                                                        // super dangling
		3: {Index: 3, Super: 2, Fields: []bmd.Field{{Name: 4, Type: bmd.Int, Kept: true}}},   // subclass of 2
		4: {Index: 4, Super: 5, Loader: 3, Fields: []bmd.Field{{Name: 1, Type: bmd.Object}}}, // super defined later
		5: {Index: 5, Super: 4, Loader: 0, Fields: []bmd.Field{{Name: 2, Type: bmd.Short}}},  // a cycle with 4
		6: {Index: 6, Super: 6, Fields: []bmd.Field{{Name: 9, Type: bmd.Byte, Kept: true}}},  // its own super
	}
	class := func(c *bmd.Class) {
		idx, err := w.Class(c)
		s.ok(err)
		if idx != c.Index {
			t.Fatalf("class %d written as %d", c.Index, idx)
		}
		s.expect(&bmd.Record{Kind: bmd.KindClass, ID: idx, Trace: c.StackTrace, Def: rtClassRead(c)})
	}
	for _, i := range []uint64{3, 6, 2, 1, 5, 4} {
		class(classes[i])
	}
	if w.Defined(7) || w.Defined(0) || !w.Defined(6) {
		t.Error("Defined is wrong")
	}
	layout := func(idx uint64) []bmd.Field {
		l, ok := w.Layout(idx)
		if !ok {
			t.Fatalf("no layout for class %d", idx)
		}
		return l
	}
	if l := layout(3); len(l) != 1+len(classes[2].Fields) || l[0].Name != 4 || l[1] != classes[2].Fields[0] {
		t.Fatalf("layout of class 3: %v", l)
	}
	if l := layout(4); len(l) != 2 || l[0].Name != 1 || l[1].Name != 2 {
		t.Fatalf("layout of the cycle 4 -> 5 -> 4: %v", l)
	}
	if l := layout(6); len(l) != 1 {
		t.Fatalf("layout of class 6, its own super: %v", l)
	}
	// Another dump of class 2: other links, statics and constants, the
	// same super class and fields.
	re := rtAllTypes(2, 77, 1, 1<<40)
	re.Redump, re.StackTrace, re.InstanceSize = true, 3, 12
	re.Statics = re.Statics[:3]
	re.Constants = nil
	class(re)

	s.ok(w.HeapDump(true))
	s.expect(&bmd.Record{Kind: bmd.KindHeapDump, Segment: true})
	s.ok(w.HeapInfo(math.MaxUint32, math.MaxUint64))
	s.expect(&bmd.Record{Kind: bmd.KindHeapInfo, HeapType: math.MaxUint32, Name: math.MaxUint64})
	s.ok(w.PlaceClasses(0)) // nothing
	s.ok(w.PlaceClasses(2))
	s.expect(&bmd.Record{Kind: bmd.KindPlaceClasses, ID: 1, Length: 2})

	next, maxID := uint64(nClasses+1), uint64(nClasses) // the next object ID, the largest taken
	var objRecords uint64 = nClasses + 1                // classes and the redump
	var tr uint32                                       // the current stack trace serial
	took := func(id uint64) {
		t.Helper()
		if id != next {
			t.Fatalf("object ID %d, want %d", id, next)
		}
		next++
		maxID = max(maxID, id)
		objRecords++
	}
	objectID := func(id uint64) {
		s.ok(w.ObjectID(id))
		if id != next {
			s.expect(&bmd.Record{Kind: bmd.KindObjectID, ID: id})
		}
		next = id
	}
	instance := func(class uint64, values []uint64) uint64 {
		id, err := w.Instance(class, values)
		s.ok(err)
		took(id)
		want := make([]uint64, len(values))
		for i, f := range layout(class) {
			switch {
			case f.Type == bmd.Object:
				want[i] = values[i]
			case f.Kept:
				want[i] = rtMask(f.Type, values[i])
			}
		}
		s.expect(&bmd.Record{Kind: bmd.KindInstance, ID: id, Class: class, Values: want, Trace: tr})
		return id
	}
	// An instance of class 3: every type, each field given an edge value
	// (references: null, self, the object before, one above N, the
	// largest ID, a class).
	l3 := layout(3)
	vals := make([]uint64, len(l3))
	self := next
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
	// Objects dumped again: the next record takes the ID given, and the
	// ones after it count on from there.
	objectID(next) // the ID it takes anyway: nothing written
	objectID(nClasses + 1)
	instance(3, vals)
	instance(1, nil)       // object 8 again, without OBJECT ID
	objectID(nClasses + 3) // the ID it takes anyway: nothing written
	instance(1, nil)
	objectID(maxID + 1) // the next new object
	instance(1, nil)
	objectID(nClasses + 1)
	objectID(maxID + 1) // two in a row: the last counts
	instance(6, []uint64{1})

	s.ok(w.Trace(math.MaxUint32))
	s.expect(&bmd.Record{Kind: bmd.KindTrace, Trace: math.MaxUint32})
	tr = math.MaxUint32
	s.ok(w.Trace(math.MaxUint32)) // unchanged: nothing
	s.ok(w.PlaceClasses(3))
	s.expect(&bmd.Record{Kind: bmd.KindPlaceClasses, ID: 3, Length: 3})
	s.ok(w.PlaceClasses(1))
	s.expect(&bmd.Record{Kind: bmd.KindPlaceClasses, ID: 6, Length: 1})

	objArray := func(class uint64, elems []uint64) {
		id, err := w.ObjectArray(class, elems)
		s.ok(err)
		took(id)
		s.expect(&bmd.Record{Kind: bmd.KindObjectArray, ID: id, Trace: tr, Class: class, Count: uint32(len(elems)), Elements: elems})
	}
	objArray(0, nil)         // null class
	objArray(1, []uint64{0}) // a class record
	objArray(nClasses, []uint64{next + 1, next, next + 2})
	objArray(nClasses+1, []uint64{math.MaxUint64}) // the first ID that is not a class
	objArray(math.MaxUint64, []uint64{1})
	big := make([]uint64, 100000)
	for i := range big {
		big[i] = uint64(i) * 7919 % 100003
	}
	objArray(2, big)

	primArray := func(t bmd.Type, n uint32, noData bool) {
		id, err := w.PrimitiveArray(t, n, noData)
		s.ok(err)
		took(id)
		k := bmd.KindPrimitiveArray
		if noData {
			k = bmd.KindPrimitiveNoData
		}
		s.expect(&bmd.Record{Kind: k, ID: id, Trace: tr, Type: t, Count: n})
	}
	for i, ty := range []bmd.Type{bmd.Boolean, bmd.Char, bmd.Float, bmd.Double, bmd.Byte, bmd.Short, bmd.Int, bmd.Long} {
		primArray(ty, []uint32{0, 1, math.MaxUint32}[i%3], i%2 == 1)
	}
	objectID(nClasses + 3)
	primArray(bmd.Int, 7, false) // an array dumped again
	s.ok(w.Trace(0))
	s.expect(&bmd.Record{Kind: bmd.KindTrace, Trace: 0})
	tr = 0
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
	// 5,000 roots of 13 objects, mixed: the roots of each object come
	// back in the order they were given, as with no sort in place but a
	// stable one (an unstable sort mixes them).
	var mixed []root
	for i := range 5000 {
		mixed = append(mixed, root{object: uint64(i * 7919 % 13), thread: uint32(i)})
	}
	s.ok(w.HeapDumpEnd()) // a run of its own
	s.expect(&bmd.Record{Kind: bmd.KindHeapDumpEnd})
	s.ok(w.HeapDump(false))
	s.expect(&bmd.Record{Kind: bmd.KindHeapDump, Segment: false})
	rootRun(0x03, mixed)
	s.ok(w.HeapDumpEnd())
	s.expect(&bmd.Record{Kind: bmd.KindHeapDumpEnd})
	s.ok(w.Close())
	s.expect(&bmd.Record{Kind: bmd.KindEnd})
	if w.Objects() != objRecords {
		t.Errorf("Writer.Objects() = %d, want %d", w.Objects(), objRecords)
	}
	if n := w.Count[bmd.KindRoot]; n != 16*5+10000+5000 {
		t.Errorf("Count[ROOT] = %d", n)
	}
	if n := w.Count[bmd.KindHashedString]; n != 8002 {
		t.Errorf("Count[HASHED STRING] = %d", n)
	}
	if n := w.Count[bmd.KindPlaceClasses]; n != 3 {
		t.Errorf("Count[PLACE CLASSES] = %d", n)
	}
	if n := w.Count[bmd.KindObjectID]; n != 5 {
		t.Errorf("Count[OBJECT ID] = %d", n)
	}
	if n := w.Count[bmd.KindClass]; n != nClasses+1 {
		t.Errorf("Count[CLASS] = %d", n)
	}

	// The framing: blocks of BlockSize, the last shorter; Bytes counts
	// every byte of the payloads; Written every byte of the file.
	file := s.out.Bytes()
	f, err := rtUnframe(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range f.blocks {
		if b.n != bmd.BlockSize && i != len(f.blocks)-1 || b.n > bmd.BlockSize {
			t.Errorf("block %d of %d holds %d bytes", i+1, len(f.blocks), b.n)
		}
	}
	if n := rtWritten(w); n != uint64(len(f.stream)) || len(f.blocks) < 50 {
		t.Errorf("the Writer counts %d bytes, the %d blocks hold %d", n, len(f.blocks), len(f.stream))
	}
	if w.Written() != int64(len(file)) {
		t.Errorf("Written() = %d for a file of %d bytes", w.Written(), len(file))
	}

	meta, got := rtRead(t, file, nil)
	if want := (bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.2", IDSize: 8, Classes: nClasses, ClassesPlaced: true, Blocks: true,
		Labels: []string{"app=com.example", "k=v=w"}}); !reflect.DeepEqual(meta, want) {
		t.Errorf("metadata %+v, want %+v", meta, want)
	}
	rtCompare(t, got, s.want)
	// The same through one-byte and half reads, with the data and io.EOF
	// together, and in blocks of other sizes, down to one byte.
	for _, wrap := range []func(io.Reader) io.Reader{iotest.OneByteReader, iotest.HalfReader, iotest.DataErrReader} {
		_, got = rtRead(t, file, wrap)
		rtCompare(t, got, s.want)
	}
	for _, sizes := range [][]int{{1}, {bmd.MaxBlockSize}, {3, 1, 100, 70000, 1 << 20}} {
		_, got = rtRead(t, rtReframe(t, file, sizes...), nil)
		rtCompare(t, got, s.want)
	}

	// The second 300-byte string stores 255 shared bytes and 45 of its own.
	if want := rtCat([]byte{0x01}, rtV(bmd.MaxSharedPrefix), []byte{45}, long[:45]); !bytes.Contains(f.stream, want) {
		t.Errorf("no STRING % x in the file", want)
	}

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
	wantRoots = append(wantRoots, 8192, 1808, 5000)
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
	f, err := rtUnframe(file)
	if err != nil {
		t.Fatal(err)
	}
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
		at, ok := f.streamOff(rec.Offset)
		if !ok || f.stream[at] != byte(rec.Kind) {
			t.Fatalf("%s run at offset %d is not on its tag", rec.Kind, rec.Offset)
		}
		at++
		if rec.Kind == bmd.KindRoot {
			at++
		}
		n, k := protowire.ConsumeVarint(f.stream[at:])
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

// TestMetadataRoundTrip: every field survives AppendMetadata and
// ParseMetadata, and the writer and the reader; the optional fields are
// written only when set; unknown fields are skipped.
func TestMetadataRoundTrip(t *testing.T) {
	for _, m := range []bmd.Metadata{
		{IDSize: 4},
		{HPROFVersion: "JAVA PROFILE 1.0.3", IDSize: 8, Timestamp: math.MaxUint64, Hash: bmd.HashXX64,
			Options: "--keep-strings --drop-heap=zygote,image", Tool: "heapcrunch 0.1.0 ünïcode",
			Objects: math.MaxUint64, Classes: 1 << 32, Strings: 0, ClassesPlaced: true},
		{IDSize: 8, ClassesPlaced: true, Alignment: 16, UncompressedRefs: true, Blocks: true},
		{IDSize: 4, Alignment: 256, Labels: []string{"app=com.example", "version=4.2.1", "app=again", "empty="}},
	} {
		b := bmd.AppendMetadata(nil, &m)
		got, err := bmd.ParseMetadata(b)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("ParseMetadata(AppendMetadata(%+v)) = %+v, %v", m, got, err)
		}
		// The optional fields, as §3 gives their tags.
		for _, c := range []struct {
			set   bool
			field []byte
		}{
			{m.ClassesPlaced, []byte{0x50, 0x01}},
			{m.Alignment != 0, protowire.AppendVarint([]byte{0x58}, uint64(m.Alignment))},
			{m.UncompressedRefs, []byte{0x60, 0x01}},
			{m.Blocks, []byte{0x68, 0x01}},
		} {
			if bytes.Contains(b, c.field) != c.set {
				t.Errorf("field % x set %v: metadata % x", c.field, c.set, b)
			}
		}
		var labels []byte // field 14 once per label, in order, at the end
		for _, l := range m.Labels {
			labels = protowire.AppendString(append(labels, 0x72), l)
		}
		if !bytes.HasSuffix(b, labels) {
			t.Errorf("labels %q: metadata % x", m.Labels, b)
		}
		var out bytes.Buffer
		w, err := bmd.NewWriter(&out, &m)
		if err != nil || w.Close() != nil {
			t.Fatal(err)
		}
		// The writer's header is §3's: version, metadata (checksummed_blocks
		// set), checksum; then one block holding END.
		hdr := rtHeaderOf(m)
		if !bytes.HasPrefix(out.Bytes(), hdr) {
			t.Errorf("header % x, want % x", out.Bytes()[:min(out.Len(), len(hdr))], hdr)
		}
		if want := rtFrame(hdr, []byte{0x15, 0, 0}); !bytes.Equal(out.Bytes(), want) {
			t.Errorf("empty file % x, want % x", out.Bytes(), want)
		}
		r, err := bmd.NewReader(&out)
		if err != nil {
			t.Fatal(err)
		}
		want := m
		want.Blocks = true
		if !reflect.DeepEqual(r.Metadata(), want) {
			t.Errorf("read metadata %+v, want %+v", r.Metadata(), want)
		}
	}

	// Fields this reader does not know, of every wire type, are skipped; a
	// repeated known field takes the last value, but labels accumulate; any
	// non-zero classes_placed, uncompressed_refs or checksummed_blocks is
	// true; a known field of another wire type is skipped like an unknown
	// one (spec §3).
	var b []byte
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendString(b, "8")
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, "JAVA PROFILE 1.0.1")
	b = protowire.AppendTag(b, 51, protowire.VarintType)
	b = protowire.AppendVarint(b, math.MaxUint64)
	b = protowire.AppendTag(b, 52, protowire.BytesType)
	b = protowire.AppendBytes(b, bytes.Repeat([]byte{0xFF}, 300))
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, 4)
	b = protowire.AppendTag(b, 14, protowire.BytesType)
	b = protowire.AppendString(b, "a=1")
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
	b = protowire.AppendTag(b, 8, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 10, protowire.VarintType)
	b = protowire.AppendVarint(b, 2)
	b = protowire.AppendTag(b, 12, protowire.VarintType)
	b = protowire.AppendVarint(b, 7)
	b = protowire.AppendTag(b, 13, protowire.VarintType)
	b = protowire.AppendVarint(b, 300)
	b = protowire.AppendTag(b, 14, protowire.BytesType)
	b = protowire.AppendString(b, "a=2")
	b = protowire.AppendTag(b, 1000, protowire.BytesType)
	b = protowire.AppendString(b, "a field of the future")
	want := bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.1", IDSize: 4, Objects: 1, Classes: 1, ClassesPlaced: true,
		UncompressedRefs: true, Blocks: true, Labels: []string{"a=1", "a=2"}}
	if got, err := bmd.ParseMetadata(b); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseMetadata with unknown fields = %+v, %v; want %+v", got, err, want)
	}
	if v, ok := want.Label("a"); !ok || v != "2" {
		t.Errorf("Label(a) = %q, %v: the last label with that key counts", v, ok)
	}
	// The same as a file: one class and END.
	file := rtFrame(rtRawHeader(b), []byte{0x0d, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x16, 0x01, 0x15, 0x01, 0x00})
	meta, recs := rtRead(t, file, nil)
	if !reflect.DeepEqual(meta, want) || len(recs) != 3 || recs[1] != "PLACE CLASSES first=1 n=1" {
		t.Errorf("file with unknown metadata fields: %+v %q", meta, recs)
	}
	// Boolean fields written as 0 are false.
	for _, n := range []protowire.Number{10, 12, 13} {
		b0 := protowire.AppendVarint(protowire.AppendTag(nil, n, protowire.VarintType), 0)
		if m, err := bmd.ParseMetadata(b0); err != nil || m.ClassesPlaced || m.UncompressedRefs || m.Blocks {
			t.Errorf("field %d = 0: %+v, %v", n, m, err)
		}
	}
	// An alignment too large for 32 bits is not taken for a valid one.
	if m, err := bmd.ParseMetadata(protowire.AppendVarint([]byte{0x58}, 1<<32+16)); err != nil || m.Alignment == 16 || m.Alignment == 0 {
		t.Errorf("alignment 2^32+16 parsed as %d, %v", m.Alignment, err)
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
		_, err := bmd.NewReader(bytes.NewReader(rtRawHeader(bad)))
		var fe *bmd.FormatError
		if !errors.As(err, &fe) || !errors.Is(err, bmd.ErrNotBMD) || fe.Record != "header" {
			t.Errorf("NewReader with metadata % x: %v", bad, err)
		}
	}
}

// TestLabels: what CheckLabel accepts, Label, and labels through the
// writer and the reader, both of which refuse bad ones.
func TestLabels(t *testing.T) {
	long := func(n int) string { return "k=" + strings.Repeat("v", n-2) }
	for _, l := range []string{
		"app=com.example", "version=4.2.1", "build=8f3c2a1", "mapping=https://example.com/m.txt?x=1",
		"k=", "a.b_c-D9=x y", "k=ünïcode ✓ 😀", "k=a=b", strings.Repeat("k", 64) + "=v",
		long(bmd.MaxLabelSize), "k=\u00a0\u200b", // no-break space, zero-width space: not controls
	} {
		if err := bmd.CheckLabel(l); err != nil {
			t.Errorf("CheckLabel(%q): %v", l, err)
		}
	}
	for _, c := range []struct{ label, msg string }{
		{"", "not key=value"},
		{"noequals", "not key=value"},
		{"=v", "the key must have 1 to 64 characters"},
		{strings.Repeat("k", 65) + "=v", "the key must have 1 to 64 characters"},
		{"k y=v", "the key may hold only"},
		{"ké=v", "the key may hold only"},
		{"k/x=v", "the key may hold only"},
		{"k=a\x00b", "control character"},
		{"k=a\nb", "control character"},
		{"k=a\tb", "control character"},
		{"k=a\x7fb", "control character"},
		{"k=a\u0085b", "control character"},
		{"k=a\xffb", "not UTF-8"},
		{long(bmd.MaxLabelSize + 1), "label of 1025 bytes"},
	} {
		if err := bmd.CheckLabel(c.label); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("CheckLabel(%q) = %v, want %q", c.label, err, c.msg)
		}
	}

	m := bmd.Metadata{Labels: []string{"app=a", "version=1", "app=b", "x==", "y=v=w"}}
	for _, c := range []struct {
		key, v string
		ok     bool
	}{{"app", "b", true}, {"version", "1", true}, {"x", "=", true}, {"y", "v=w", true}, {"ap", "", false}, {"", "", false}, {"build", "", false}} {
		if v, ok := m.Label(c.key); v != c.v || ok != c.ok {
			t.Errorf("Label(%q) = %q, %v; want %q, %v", c.key, v, ok, c.v, c.ok)
		}
	}

	// Through the writer and the reader, in order; 64 labels of 1024 bytes
	// are allowed.
	var labels []string
	for i := range bmd.MaxLabels {
		l := fmt.Sprintf("k%d=", i)
		labels = append(labels, l+strings.Repeat("é", (bmd.MaxLabelSize-len(l))/2))
	}
	labels[0] = long(bmd.MaxLabelSize)
	var out bytes.Buffer
	w, err := bmd.NewWriter(&out, &bmd.Metadata{IDSize: 4, Labels: labels})
	if err != nil || w.Close() != nil {
		t.Fatal(err)
	}
	meta, _ := rtRead(t, out.Bytes(), nil)
	if !slices.Equal(meta.Labels, labels) {
		t.Errorf("labels read back %q", meta.Labels)
	}

	// The writer and the reader refuse a bad label, and one label too many.
	for _, bad := range [][]string{{"app=a", "k y=v"}, {"x"}, {long(bmd.MaxLabelSize + 1)}, append(slices.Clone(labels), "one=more")} {
		m := bmd.Metadata{IDSize: 4, Labels: bad}
		if _, err := bmd.NewWriter(io.Discard, &m); err == nil || !strings.HasPrefix(err.Error(), "bmd: ") {
			t.Errorf("NewWriter with labels %.40q: %v", bad, err)
		}
		_, err := bmd.NewReader(bytes.NewReader(rtFrame(rtHeaderOf(m), []byte{0x15, 0, 0})))
		var fe *bmd.FormatError
		if !errors.As(err, &fe) || !errors.Is(err, bmd.ErrNotBMD) || fe.Record != "header" {
			t.Errorf("NewReader with labels %.40q: %v", bad, err)
		}
	}
}

// rtClassRec is a CLASS record: the index field (zigzag(index delta)<<1 |
// redump), then body, or an empty class body.
func rtClassRec(index uint64, body ...byte) []byte {
	if len(body) == 0 {
		body = make([]byte, 11) // trace, super, 5 links, size, 0 constants, statics, fields
	}
	return rtCat([]byte{0x0d}, rtV(index), body)
}

// rtEmptyClass defines class 1 with nothing in it (13 bytes).
var rtEmptyClass = rtClassRec(4)

// TestReaderTruncates: the values spec/bmd.md §2.1 and §2.7 say the
// reader truncates rather than refuses, which no Writer writes: a STACK
// FRAME line keeps its low 32 bits, a constant pool index its low 16, a
// kept int value its low 32.
func TestReaderTruncates(t *testing.T) {
	z := func(v int64) []byte { return rtV(protowire.EncodeZigZag(v)) }
	stream := rtCat([]byte{0x05, 0, 0, 0, 0}, z(1<<32+5), // STACK FRAME, line 2^32+5
		rtClassRec(4, rtCat([]byte{0, 0, 0, 0, 0, 0, 0, 0, 1}, rtV(1<<16+3), []byte{0x15}, z(1<<32+7), []byte{0, 0})...),
		[]byte{0x15, 0x01, 0x00})
	r, err := bmd.NewReader(bytes.NewReader(rtFrame(rtHeaderOf(bmd.Metadata{IDSize: 4, Classes: 1}), stream)))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Next()
	if err != nil || rec.Line != 5 {
		t.Fatalf("STACK FRAME line %d, %v; want 5", rec.Line, err)
	}
	rec, err = r.Next()
	if err != nil || len(rec.Def.Constants) != 1 {
		t.Fatalf("CLASS %+v, %v", rec.Def, err)
	}
	if k := rec.Def.Constants[0]; k.Index != 3 || k.Value != 7 {
		t.Errorf("constant pool index %d value %d; want 3 and 7", k.Index, k.Value)
	}
	if rec, err := r.Next(); err != nil || rec.Kind != bmd.KindEnd {
		t.Errorf("after the CLASS: %v, want END", err)
	}
}

// rtErrCase is a stream of records and the error reading it gives.
type rtErrCase struct {
	name   string
	stream []byte
	msg    string
	record string
	at     int // stream offset of the record in error; -1: the end of the file
	is     error
}

// rtCheckErr checks that err is the *bmd.FormatError described.
func rtCheckErr(t *testing.T, err error, msg, record string, offset int64, is error) {
	t.Helper()
	var fe *bmd.FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T), want a *bmd.FormatError", err, err)
	}
	if !strings.Contains(fe.Msg, msg) {
		t.Errorf("message %q, want %q", fe.Msg, msg)
	}
	if fe.Record != record {
		t.Errorf("record %q, want %q", fe.Record, record)
	}
	if offset >= 0 && fe.Offset != offset {
		t.Errorf("offset %d, want %d", fe.Offset, offset)
	}
	if is != nil && !errors.Is(err, is) {
		t.Errorf("error %v does not wrap %v", err, is)
	}
	for _, e := range []error{io.ErrUnexpectedEOF, bmd.ErrNotBMD, bmd.ErrChecksum} {
		if e != is && errors.Is(err, e) {
			t.Errorf("error %v wraps %v", err, e)
		}
	}
	if s := err.Error(); !strings.HasPrefix(s, "bmd: ") || !strings.HasSuffix(s, fmt.Sprintf(" at offset %d", fe.Offset)) {
		t.Errorf("error %q does not start with \"bmd: \" and end with its offset", s)
	}
}

// TestReaderErrors: each kind of bad input gives a *bmd.FormatError that
// says what is wrong and where, as a file offset.
func TestReaderErrors(t *testing.T) {
	meta := bmd.Metadata{IDSize: 4, Classes: 2, ClassesPlaced: true}
	hdr := rtHeaderOf(meta)
	start := func(meta []byte) int64 { return int64(1 + protowire.SizeVarint(uint64(len(meta)))) }
	bad := func(m bmd.Metadata) []byte { return bmd.AppendMetadata(nil, &m) }
	var manyLabels []string
	for i := range bmd.MaxLabels + 1 {
		manyLabels = append(manyLabels, fmt.Sprintf("k%d=v", i))
	}
	damaged := slices.Clone(hdr)
	damaged[len(damaged)-1] ^= 1
	// Damaged metadata that no longer parses, in a header whose checksum
	// does not match: a damaged header (§3), not something else.
	cut := slices.Clone(hdr)
	cut[2] = 0x0f // a field of wire type 7
	for _, c := range []struct {
		name   string
		data   []byte
		msg    string
		offset int64
		is     error
	}{
		{"damaged metadata", cut, "header checksum mismatch", int64(len(hdr) - 8), bmd.ErrChecksum},
		{"empty", nil, "empty input", 0, bmd.ErrNotBMD},
		{"version 3", []byte{3, 0}, "not a BMD file: version 3, where a BMD file has 1 or 2", 0, bmd.ErrNotBMD},
		{"version 2^64", rtCat(bytes.Repeat([]byte{0xFF}, 9), []byte{1}), "not a BMD file: version 18446744073709551615", 0, bmd.ErrNotBMD},
		{"no version", []byte{0xFF}, "no version number", 0, bmd.ErrNotBMD},
		{"metadata length cut", []byte{2}, "truncated", 1, io.ErrUnexpectedEOF},
		{"huge metadata", rtCat([]byte{2}, rtV(1<<20+1)), "metadata of 1048577 bytes is implausible", 4, bmd.ErrNotBMD},
		{"metadata cut", []byte{2, 5, 0x10}, "truncated", 2, io.ErrUnexpectedEOF},
		{"checksum cut", hdr[:len(hdr)-3], "truncated", 2, io.ErrUnexpectedEOF},
		{"header checksum", damaged, "header checksum mismatch", int64(len(hdr) - 8), bmd.ErrChecksum},
		{"no checksummed_blocks", rtRawHeader([]byte{0x10, 4}), "metadata without checksummed_blocks", 2, bmd.ErrNotBMD},
		{"checksummed_blocks 0", rtRawHeader([]byte{0x10, 4, 0x68, 0}), "metadata without checksummed_blocks", 2, bmd.ErrNotBMD},
		{"no checksum", append([]byte{2, 4, 0x10, 4, 0x68, 1}, rtFrame(nil, []byte{0x15, 0, 0})...), "header checksum mismatch", 6, bmd.ErrChecksum},
		{"no id size", rtRawHeader([]byte{0x68, 1}), "identifier size 0", 2, bmd.ErrNotBMD},
		{"id size 5", rtRawHeader(bad(bmd.Metadata{IDSize: 5, Blocks: true})), "identifier size 5", 2, bmd.ErrNotBMD},
		{"alignment 4", rtRawHeader(bad(bmd.Metadata{IDSize: 4, Alignment: 4, Blocks: true})), "alignment 4 in metadata", 2, bmd.ErrNotBMD},
		{"alignment 8", rtRawHeader(bad(bmd.Metadata{IDSize: 4, Alignment: 8, Blocks: true})), "alignment 8 in metadata", 2, bmd.ErrNotBMD}, // 8 is written as absent (spec §3)
		{"alignment 12", rtRawHeader(bad(bmd.Metadata{IDSize: 4, Alignment: 12, Blocks: true})), "alignment 12 in metadata", 2, bmd.ErrNotBMD},
		{"alignment 512", rtRawHeader(bad(bmd.Metadata{IDSize: 4, Alignment: 512, Blocks: true})), "alignment 512 in metadata", 2, bmd.ErrNotBMD},
		{"HPROF version", rtRawHeader(bad(bmd.Metadata{HPROFVersion: "HELLO", IDSize: 4, Blocks: true})), `HPROF version "HELLO"`, 2, bmd.ErrNotBMD},
		{"HPROF version NUL", rtRawHeader(bad(bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.2\x00", IDSize: 4, Blocks: true})), `HPROF version`, 2, bmd.ErrNotBMD},
		{"bad label", rtRawHeader(bad(bmd.Metadata{IDSize: 4, Blocks: true, Labels: []string{"k y=v"}})), `label "k y=v"`, 2, bmd.ErrNotBMD},
		{"65 labels", rtRawHeader(bad(bmd.Metadata{IDSize: 4, Blocks: true, Labels: manyLabels})), "65 labels in metadata", start(bad(bmd.Metadata{IDSize: 4, Blocks: true, Labels: manyLabels})), bmd.ErrNotBMD},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := bmd.NewReader(bytes.NewReader(c.data))
			rtCheckErr(t, err, c.msg, "header", c.offset, c.is)
		})
	}

	v := rtV
	E := rtEmptyClass
	// objs is an OBJECTS record: n bytes of count records, size bytes of HPROF.
	objs := func(n, count, size uint64) []byte { return rtCat([]byte{0x19}, v(n), v(count), v(size)) }
	for _, c := range []rtErrCase{
		{"no END", nil, "the file ends without its END record", "", -1, io.ErrUnexpectedEOF},
		{"no END after records", rtCat(E, []byte{0x16, 0x01}), "the file ends without its END record", "", -1, io.ErrUnexpectedEOF},
		{"tag 0", []byte{0}, "unknown record tag 0", "", 0, nil},
		{"tag 26", []byte{26}, "unknown record tag 26", "", 0, nil},
		{"tag 255", rtCat(E, []byte{0xFF, 0x01}), "unknown record tag 255", "", 13, nil},
		{"array name of nothing", []byte{0x17, 0x01, 0x02}, "array name of string 1 with 1 dimensions (0 strings read)", "ARRAY NAME", 0, nil},
		{"array name of itself", []byte{0x01, 0x00, 0x01, 'a', 0x17, 0x02, 0x02}, "array name of string 2", "ARRAY NAME", 4, nil},
		{"array name of string 0", []byte{0x01, 0x00, 0x01, 'a', 0x17, 0x00, 0x02}, "array name of string 0", "ARRAY NAME", 4, nil},
		{"array name 0 dims", []byte{0x01, 0x00, 0x01, 'a', 0x17, 0x01, 0x01}, "with 0 dimensions", "ARRAY NAME", 4, nil},
		{"array name 256 dims", rtCat([]byte{0x01, 0x00, 0x01, 'a', 0x17, 0x01}, v(512)), "with 256 dimensions", "ARRAY NAME", 4, nil},
		{"string prefix too long", []byte{0x01, 0x00, 0x01, 'a', 0x01, 0x02, 0x01, 'b'}, "shares 2 bytes with a previous string of 1", "STRING", 4, nil},
		{"string prefix, first string", []byte{0x01, 0x01, 0x01, 'b'}, "shares 1 bytes with a previous string of 0", "STRING", 0, nil},
		{"string prefix 256", rtCat([]byte{0x01, 0x00}, rtV(300), make([]byte, 300), []byte{0x01}, rtV(256), []byte{0x00}),
			"shares 256 bytes with a previous string of 300 (at most 255)", "STRING", 304, nil},
		{"class index 0", rtClassRec(0), "class index 0 (the metadata counts 2 classes)", "CLASS", 0, nil},
		{"class index above C", rtClassRec(12), "class index 3 (the metadata counts 2 classes)", "CLASS", 0, nil},
		{"class index below 0", rtCat(E, rtClassRec(6)), "class index 18446744073709551615", "CLASS", 13, nil},
		{"class defined twice", rtCat(E, rtClassRec(0)), "class 1 defined twice", "CLASS", 13, nil},
		{"class defined twice, later", rtCat(E, rtClassRec(4), rtClassRec(2)), "class 1 defined twice", "CLASS", 26, nil},
		{"another dump of no class", rtClassRec(5), "another dump of class 1, which is not defined", "CLASS", 0, nil},
		{"another dump, other super", rtCat(E, rtClassRec(1, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
			"another dump of class 1 with another super class or other instance fields", "CLASS", 13, nil},
		{"another dump, other fields", rtCat(rtClassRec(4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0x14), rtClassRec(1)),
			"another dump of class 1 with another super class or other instance fields", "CLASS", 15, nil},
		{"another dump, field kept", rtCat(rtClassRec(4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0x14), rtClassRec(1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0x15)),
			"another dump of class 1 with another super class or other instance fields", "CLASS", 15, nil},
		{"class cut", E[:8], "truncated", "CLASS", 0, io.ErrUnexpectedEOF},
		{"field type 3", rtCat(E[:12], []byte{0x01, 0x02, 0x06}), "invalid field type 3", "CLASS", 0, nil},
		{"field type 12", rtCat(E[:12], []byte{0x01, 0x02, 0x18}), "invalid field type 12", "CLASS", 0, nil},
		{"static type 0", rtCat(E[:11], []byte{0x01, 0x02, 0x00}), "invalid field type 0", "CLASS", 0, nil},
		{"65536 fields", rtCat(E[:12], v(65536)), "65536 instance fields", "CLASS", 0, nil},
		{"65536 statics", rtCat(E[:11], v(65536)), "65536 static fields", "CLASS", 0, nil},
		{"65536 constants", rtCat(E[:10], v(65536)), "65536 constants", "CLASS", 0, nil},
		{"place 3 of 2", rtCat(E, []byte{0x16, 0x03}), "places 3 classes after class 0, of 2", "PLACE CLASSES", 13, nil},
		{"place 0", rtCat(E, []byte{0x16, 0x00}), "places 0 classes", "PLACE CLASSES", 13, nil},
		{"place undefined", rtCat(E, []byte{0x16, 0x01, 0x16, 0x01}), "places class 2, which is not defined", "PLACE CLASSES", 15, nil},
		{"place before class", rtCat([]byte{0x16, 0x01}, E), "places class 1, which is not defined", "PLACE CLASSES", 0, nil},
		{"place in index order", rtCat(rtClassRec(8), []byte{0x16, 0x01}), "places class 1, which is not defined", "PLACE CLASSES", 13, nil},
		{"place past the end", rtCat(rtClassRec(8), rtClassRec(2), []byte{0x16, 0x01, 0x16, 0x02}), "places 2 classes after class 1, of 2", "PLACE CLASSES", 28, nil},
		{"place huge", rtCat(E, []byte{0x16}, v(math.MaxUint64)), "places 18446744073709551615 classes", "PLACE CLASSES", 13, nil},
		{"instance of no class", rtCat(E, []byte{0x0e, 0x02}), "instance of undefined class 2", "INSTANCE", 13, nil},
		{"instance of class 0", []byte{0x0e, 0x00}, "instance of undefined class 0", "INSTANCE", 0, nil},
		{"instance of class above C", rtCat(E, []byte{0x0e, 0x03}), "instance of undefined class 3", "INSTANCE", 13, nil},
		{"instance with undefined super", rtCat(rtClassRec(4, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0), []byte{0x0e, 0x01}),
			"instance of class 1, whose super class 2 is not defined yet", "INSTANCE", 13, nil},
		{"instance cut", rtCat(rtClassRec(4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0x15), []byte{0x0e, 0x01, 0x80}), "truncated", "INSTANCE", 15, io.ErrUnexpectedEOF},
		{"object ID C", []byte{0x18, 0x01}, "object ID 2 (objects are 3 to 3)", "OBJECT ID", 0, nil},
		{"object ID ahead", []byte{0x18, 0x02}, "object ID 4 (objects are 3 to 3)", "OBJECT ID", 0, nil},
		{"object ID ahead after objects", []byte{0x10, 0x0a, 0x05, 0x18, 0x02}, "object ID 5 (objects are 3 to 4)", "OBJECT ID", 3, nil},
		{"object ID wraps", []byte{0x18, 0x05}, "object ID 0 (objects are 3 to 3)", "OBJECT ID", 0, nil},
		{"object ID cut", []byte{0x18}, "truncated", "OBJECT ID", 0, io.ErrUnexpectedEOF},
		{"END objects", rtCat(E, []byte{0x15, 0x02, 0x00}), "file ends with 1 object records and 0 strings, END record says 2 and 0", "END", 13, nil},
		{"END strings", []byte{0x01, 0x00, 0x00, 0x15, 0x00, 0x02}, "file ends with 0 object records and 1 strings, END record says 0 and 2", "END", 3, nil},
		{"END without another dump", rtCat(E, rtClassRec(1), []byte{0x15, 0x01, 0x00}), "file ends with 2 object records and 0 strings, END record says 1 and 0", "END", 26, nil},
		{"END without an object dumped again", []byte{0x10, 0x0a, 0x05, 0x18, 0x01, 0x10, 0x0a, 0x05, 0x15, 0x01, 0x00}, "file ends with 2 object records and 0 strings", "END", 8, nil},
		{"END without an array name", []byte{0x01, 0x00, 0x01, 'a', 0x17, 0x01, 0x02, 0x15, 0x00, 0x01}, "file ends with 0 object records and 2 strings", "END", 7, nil},
		{"END cut", []byte{0x15, 0x00}, "truncated", "END", 0, io.ErrUnexpectedEOF},
		{"empty hashed run", []byte{0x02, 0x00}, "empty run of hashed strings", "HASHED STRING", 0, nil},
		{"hashed run cut", []byte{0x02, 0x02, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0x01, 1}, "truncated", "HASHED STRING", 11, io.ErrUnexpectedEOF},
		{"empty root run", []byte{0x12, 0x03, 0x00}, "empty run of roots", "ROOT", 0, nil},
		{"root kind 9", []byte{0x12, 0x09, 0x01, 0x00}, "invalid root kind 0x09", "ROOT", 0, nil},
		{"root kind cut", []byte{0x12}, "truncated", "ROOT", 0, io.ErrUnexpectedEOF},
		{"root run cut", []byte{0x12, 0x03, 0x02, 0x02, 0x01, 0x00, 0x02, 0x01}, "truncated", "ROOT", 6, io.ErrUnexpectedEOF},
		{"serial 2^32", rtCat([]byte{0x04}, v(1<<32)), "value 4294967296 does not fit in 32 bits", "UNLOAD CLASS", 0, nil},
		{"time 2^32", rtCat([]byte{0x0a}, v(1<<32)), "does not fit in 32 bits", "TIME", 0, nil},
		{"trace 2^32", rtCat([]byte{0x14}, v(1<<32)), "does not fit in 32 bits", "TRACE", 0, nil},
		{"array length 2^32", rtCat([]byte{0x10, 0x0a}, v(1<<32)), "does not fit in 32 bits", "PRIMITIVE ARRAY", 0, nil},
		{"object array length 2^32", rtCat([]byte{0x0f, 0x00, 0x00}, v(1<<32)), "array length 4294967296", "OBJECT ARRAY", 0, nil},
		{"object array of class above C", rtCat(E, []byte{0x0f, 0x03, 0x00}), "array class index 3 is not a class defined before (the metadata counts 2 classes)", "OBJECT ARRAY", 13, nil},
		{"object array of a class not yet defined", rtCat(E, []byte{0x0f, 0x02, 0x00}), "array class index 2 is not a class defined before", "OBJECT ARRAY", 13, nil},
		{"varint overflow", rtCat([]byte{0x04}, bytes.Repeat([]byte{0xFF}, 11)), "corrupt varint at offset", "UNLOAD CLASS", 0, nil},
		{"varint overflow in 10 bytes", rtCat([]byte{0x04}, bytes.Repeat([]byte{0xFF}, 9), []byte{0x02}), "corrupt varint at offset", "UNLOAD CLASS", 0, nil},
		{"string 2^31+1", rtCat([]byte{0x01, 0x00}, v(1<<31+1)), "string of 2147483649 bytes is implausible", "STRING", 0, nil},
		{"raw tag 256", rtCat([]byte{0x09}, v(256), []byte{0}), "raw record tag 256 length 0 out of range", "RAW RECORD", 0, nil},
		{"raw HEAP DUMP", []byte{0x09, 0x0c, 0x00}, "raw record with HPROF tag 0x0C, which has its own record kind", "RAW RECORD", 0, nil},
		{"raw cut", []byte{0x09, 0x0e, 0x05, 1, 2}, "truncated", "RAW RECORD", 0, io.ErrUnexpectedEOF},
		{"element type object", []byte{0x10, 0x02, 0x05}, "invalid element type 2", "PRIMITIVE ARRAY", 0, nil},
		{"element type 12", []byte{0x11, 0x0c, 0x05}, "invalid element type 12", "PRIMITIVE ARRAY NODATA", 0, nil},
		{"element type 260", []byte{0x10, 0x84, 0x02, 0x05}, "invalid element type 260", "PRIMITIVE ARRAY", 0, nil},
		{"end thread 2^32", rtCat([]byte{0x08}, v(1<<32)), "does not fit in 32 bits", "END THREAD", 0, nil},
		{"stack trace serial 2^32", rtCat([]byte{0x06}, v(1<<32), []byte{0x00, 0x00}), "does not fit in 32 bits", "STACK TRACE", 0, nil},
		{"stack trace thread 2^32", rtCat([]byte{0x06, 0x01}, v(1<<32), []byte{0x00}), "does not fit in 32 bits", "STACK TRACE", 0, nil},
		{"start thread serial 2^32", rtCat([]byte{0x07}, v(1<<32), []byte{0x00, 0x00, 0x00, 0x00, 0x00}), "does not fit in 32 bits", "START THREAD", 0, nil},
		{"start thread trace 2^32", rtCat([]byte{0x07, 0x01, 0x00}, v(1<<32), []byte{0x00, 0x00, 0x00}), "does not fit in 32 bits", "START THREAD", 0, nil},
		{"load class trace 2^32", rtCat([]byte{0x03, 0x02, 0x02}, v(1<<32), []byte{0x00}), "does not fit in 32 bits", "LOAD CLASS", 0, nil},
		{"stack frame class serial 2^32", rtCat([]byte{0x05, 0x00, 0x00, 0x00}, v(1<<32), []byte{0x00}), "does not fit in 32 bits", "STACK FRAME", 0, nil},
		{"heap info type 2^32", rtCat([]byte{0x13}, v(1<<32), []byte{0x00}), "does not fit in 32 bits", "HEAP INFO", 0, nil},
		{"string cut", []byte{0x01, 0x00, 0x05, 'a'}, "truncated", "STRING", 0, io.ErrUnexpectedEOF},
		{"objects cut", []byte{0x19, 3, 1}, "truncated", "OBJECTS", 0, io.ErrUnexpectedEOF},
		{"objects count 0", rtCat(objs(3, 0, 20), []byte{0x10, 0x0a, 0x05}), "0 object records in 3 bytes", "OBJECTS", 0, nil},
		{"objects 2 in 3 bytes", rtCat(objs(3, 2, 20), []byte{0x10, 0x0a, 0x05}), "2 object records in 3 bytes", "OBJECTS", 0, nil},
		{"objects 2^32", rtCat(objs(1<<40, 1<<32, 20), []byte{0x10, 0x0a, 0x05}), "4294967296 object records in 1099511627776 bytes", "OBJECTS", 0, nil},
		{"objects 2^62+1 bytes", rtCat(objs(1<<62+1, 1, 20), []byte{0x10, 0x0a, 0x05}), "1 object records in 4611686018427387905 bytes", "OBJECTS", 0, nil},
		{"objects holding a string", rtCat(objs(4, 1, 0), []byte{0x01, 0x00, 0x01, 'a'}), "not an object record, inside the OBJECTS run at offset", "STRING", 4, nil},
		{"objects holding more", rtCat(objs(6, 1, 40), []byte{0x10, 0x0a, 0x05, 0x10, 0x0a, 0x05, 0x15, 0x02, 0x00}),
			"says 1 object records; 2 records end 0 bytes from its end", "OBJECTS", 10, nil},
		{"objects holding fewer", rtCat(objs(6, 3, 40), []byte{0x10, 0x0a, 0x05, 0x10, 0x0a, 0x05, 0x15, 0x02, 0x00}),
			"says 3 object records; 2 records end 0 bytes from its end", "OBJECTS", 10, nil},
		{"objects crossing its end", rtCat(objs(2, 1, 20), []byte{0x10, 0x0a, 0x05, 0x15, 0x01, 0x00}),
			"says 1 object records; 1 records end 1 bytes from its end", "OBJECTS", 7, nil},
		{"objects taking more HPROF", rtCat(objs(6, 2, 39), []byte{0x10, 0x0a, 0x05, 0x10, 0x0a, 0x05, 0x15, 0x02, 0x00}),
			"its objects take more than the 39 bytes of HPROF the OBJECTS run at offset", "PRIMITIVE ARRAY", 7, nil},
		{"objects taking less HPROF", rtCat(objs(6, 2, 41), []byte{0x10, 0x0a, 0x05, 0x10, 0x0a, 0x05, 0x15, 0x02, 0x00}),
			"says 41 bytes of HPROF; its objects take 40", "OBJECTS", 10, nil},
	} {
		// In one block, and in blocks of 1 and 3 bytes: the offset is the
		// record's in the file, framing included.
		for _, sizes := range [][]int{nil, {1}, {3}} {
			t.Run(fmt.Sprintf("%s/%v", c.name, sizes), func(t *testing.T) {
				file := rtFrame(hdr, c.stream, sizes...)
				f, err := rtUnframe(file)
				if err != nil {
					t.Fatal(err)
				}
				at := f.size
				if c.at >= 0 {
					at = f.fileOff(c.at)
				}
				_, err = rtReadErr(file)
				rtCheckErr(t, err, c.msg, c.record, at, c.is)
			})
		}
	}

	// PLACE CLASSES in a file whose metadata does not set classes_placed
	// (spec §5.22), where it would otherwise be valid.
	unplaced := rtHeaderOf(bmd.Metadata{IDSize: 4, Classes: 2})
	file := rtFrame(unplaced, rtCat(E, []byte{0x16, 0x01}))
	f, err := rtUnframe(file)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rtReadErr(file)
	rtCheckErr(t, err, "PLACE CLASSES in a file whose metadata does not set classes_placed", "PLACE CLASSES", f.fileOff(13), nil)

	// Version 1 files are for NewV1Reader.
	if _, err := bmd.NewReader(bytes.NewReader([]byte{1, 0x12})); !errors.Is(err, bmd.ErrVersion1) {
		t.Errorf("version 1: %v", err)
	}
	// Bytes after END are not read, in its block or after it.
	for _, file := range [][]byte{
		rtFrame(hdr, []byte{0x15, 0x00, 0x00, 0xFF, 0xFF}),
		rtCat(rtFrame(hdr, []byte{0x15, 0x00, 0x00}), []byte{0x00, 0xFF}),
		rtCat(rtFrame(hdr, []byte{0x15, 0x00, 0x00}), rtFrame(nil, []byte{0xFF}), []byte{1}),
	} {
		recs, err := rtReadErr(file)
		if err != io.EOF || len(recs) != 1 || recs[0] != "END" {
			t.Errorf("after END: %q, %v", recs, err)
		}
	}
	// An error of the source is returned as such, not as damage.
	boom := errors.New("disk on fire")
	file = rtFrame(hdr, rtCat(E, E[:5]), 13, 5)
	for _, cut := range []int{len(hdr) + 1, len(hdr) + 16, len(file) - 3} {
		r, err := bmd.NewReader(io.MultiReader(bytes.NewReader(file[:cut]), iotest.ErrReader(boom)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Next()
		if cut > len(hdr)+22 { // the first block is whole
			if err != nil {
				t.Fatalf("source error after the first block: %v", err)
			}
			_, err = r.Next()
		}
		var fe *bmd.FormatError
		if !errors.Is(err, boom) || errors.As(err, &fe) {
			t.Errorf("source error after %d bytes: %v", cut, err)
		}
	}
	if _, err := bmd.NewReader(io.MultiReader(bytes.NewReader(hdr[:5]), iotest.ErrReader(boom))); !errors.Is(err, boom) {
		t.Errorf("source error in the header: %v", err)
	}
}

// rtSmall is a small file with every record kind, classes defined out of
// index order, and a second heap dump that dumps a class and an object
// again.
func rtSmall(t testing.TB) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := bmd.NewWriter(&out, &bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.2", IDSize: 4, Timestamp: 1 << 40,
		Hash: bmd.HashXX64, Tool: "t", Objects: 7, Classes: 2, Strings: 5, ClassesPlaced: true, Labels: []string{"app=a"}})
	if err != nil {
		t.Fatal(err)
	}
	w.ClearString([]byte("java.lang.String"))
	w.HashedString(300, math.MaxUint64)
	w.HashedString(5, 1)
	w.ClearString([]byte("java.lang.Object"))
	w.ArrayName(4, 2, true)
	w.Time(1 << 20)
	w.LoadClass(1<<20, 2, 1, 1)
	w.LoadClass(1, 1, 0, 2)
	w.UnloadClass(7)
	f, _ := w.StackFrame(1, 2, 3, 1<<20, -1000)
	w.StackTrace(3, 4, []uint64{f, 200})
	w.StartThread(4, 300, 3, 1, 2, 0)
	w.EndThread(4)
	w.RawRecord(0x0E, []byte{0, 0, 0, 1, 0, 8})
	point := &bmd.Class{Index: 2, Super: 1, Statics: []bmd.Static{{Name: 2, Type: bmd.Float, Kept: true, Value: 0x3f800000}},
		Constants: []bmd.Constant{{Index: 9, Type: bmd.Object, Value: 1 << 35}}, Fields: []bmd.Field{{Name: 1, Type: bmd.Object}}}
	w.Class(point)
	w.Class(&bmd.Class{Index: 1, Loader: 1 << 30, Fields: []bmd.Field{{Name: 3, Type: bmd.Long, Kept: true}, {Name: 4, Type: bmd.Double, Kept: true}}})
	w.HeapDump(true)
	w.HeapInfo('A', 2)
	w.PlaceClasses(1)
	w.Trace(9)
	w.Instance(2, []uint64{4, 1 << 62, math.Float64bits(-2.5)}) // object 3
	w.PlaceClasses(1)
	w.ObjectArray(50, []uint64{0, 3, 1 << 33}) // 4
	w.PrimitiveArray(bmd.Char, 1<<30, false)   // 5
	w.PrimitiveArray(bmd.Byte, 3, true)        // 6
	w.Root(0x01, 4, 0, 0, 1<<40, 0)
	w.Root(0x03, 5, 1, 0xFFFFFFFF, 0, 0)
	w.Root(0x03, 3, 1, 2, 0, 0)
	w.Root(0x08, 1<<34, 1, 0, 0, 3)
	w.HeapDumpEnd()
	w.HeapDump(true) // a second heap dump
	again := *point
	again.Redump, again.Statics = true, []bmd.Static{{Name: 2, Type: bmd.Float, Kept: true, Value: 0x40000000}}
	w.Class(&again)
	w.ObjectID(3)
	w.Instance(2, []uint64{3, 1, 2}) // object 3 again
	w.ObjectID(7)
	w.PrimitiveArray(bmd.Int, 2, false) // 7
	w.HeapDumpEnd()
	w.Time(1 << 21)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// rtTruthFiles are small files to damage and cut: rtSmall in one block and
// in blocks of a few bytes, and the first file of spec §9.
func rtTruthFiles(t *testing.T) map[string][]byte {
	small := rtSmall(t)
	return map[string][]byte{
		"small":            small,
		"small in pieces":  rtReframe(t, small, 5, 1, 13, 2, 40),
		"small in 7 bytes": rtReframe(t, small, 7),
		"spec file 1":      exHex(t, exFile1Hex),
	}
}

// rtRecordsOf reads a sound file and returns its records and the stream
// offset where each ends (the reader's offset after it: an OBJECTS header,
// which Next does not return, belongs to the record after it).
func rtRecordsOf(t *testing.T, file []byte) (f *rtFramed, recs []string, ends []int) {
	t.Helper()
	f, err := rtUnframe(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := bmd.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	offs := newRTOffsets(f)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := offs.check(rec); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rtRender(rec))
		ends = append(ends, f.endOff(r.Offset()))
	}
	return f, recs, ends
}

// endOff returns the stream offset of the record end at file offset off,
// which may be the start of the next block, or past the last.
func (f *rtFramed) endOff(off int64) int {
	if s, ok := f.streamOff(off); ok {
		return s
	}
	for _, b := range f.blocks {
		if b.at == off {
			return b.stream
		}
	}
	return len(f.stream)
}

// rtWhole returns how many of the records (by their stream ends) lie
// wholly in the first k blocks of f.
func rtWhole(f *rtFramed, ends []int, k int) int {
	payload := len(f.stream)
	if k < len(f.blocks) {
		payload = f.blocks[k].stream
	}
	n := 0
	for n < len(ends) && ends[n] <= payload {
		n++
	}
	return n
}

// TestReaderTruncated cuts small files at every byte: the reader gives the
// records of the whole blocks before the cut, exactly, then a
// *bmd.FormatError wrapping io.ErrUnexpectedEOF (ErrNotBMD for no byte at
// all), at the cut block or at the record cut, never a panic.
func TestReaderTruncated(t *testing.T) {
	for name, file := range rtTruthFiles(t) {
		f, full, ends := rtRecordsOf(t, file)
		for cut := 0; cut < len(file); cut++ {
			recs, err := rtReadErr(file[:cut])
			var fe *bmd.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("%s cut at %d: error %v (%T), want a *bmd.FormatError", name, cut, err, err)
			}
			want := io.ErrUnexpectedEOF
			if cut == 0 {
				want = bmd.ErrNotBMD
			}
			if !errors.Is(err, want) {
				t.Errorf("%s cut at %d: %v does not wrap %v", name, cut, err, want)
			}
			k := f.blockAt(int64(cut)) // the block cut, or the next one
			switch {
			case k < 0:
				if fe.Record != "header" {
					t.Errorf("%s cut at %d in the header: %v", name, cut, err)
				}
			case int64(cut) > f.blocks[k].at:
				if fe.Record != "block" || fe.Offset != f.blocks[k].at {
					t.Errorf("%s cut at %d in block %d at %d: %v", name, cut, k+1, f.blocks[k].at, err)
				}
			default: // between blocks: the record cut
				if fe.Record == "block" || fe.Offset > int64(cut) || fe.Offset < int64(f.header) {
					t.Errorf("%s cut at %d, after block %d: %v", name, cut, k, err)
				}
			}
			if k < 0 {
				k = 0
			}
			if n := rtWhole(f, ends, k); !slices.Equal(recs, full[:n]) {
				t.Fatalf("%s cut at %d: records\n%q\nwant the %d records of the whole blocks\n%q", name, cut, recs, n, full[:n])
			}
		}
	}
}

// TestBlockDamage changes every byte of small files, one at a time: each
// change gives an error, never a panic and never a file read whole. A
// change in the header fails the header; a change in a block fails that
// block (its checksum, its length, or a block then cut short), at its
// offset, after exactly the records of the blocks before it.
func TestBlockDamage(t *testing.T) {
	for name, file := range rtTruthFiles(t) {
		f, full, ends := rtRecordsOf(t, file)
		bad := slices.Clone(file)
		for i := range file {
			for _, flip := range []byte{0x01, 0x80, 0xFF} {
				bad[i] = file[i] ^ flip
				recs, err := rtReadErr(bad)
				bad[i] = file[i]
				var fe *bmd.FormatError
				if err == io.EOF {
					t.Fatalf("%s: byte %d ^ %02x: read whole, %d records", name, i, flip, len(recs))
				}
				k := f.blockAt(int64(i))
				if k < 0 {
					hdrErr := errors.As(err, &fe) && fe.Record == "header" &&
						(errors.Is(err, bmd.ErrChecksum) || errors.Is(err, bmd.ErrNotBMD) || errors.Is(err, io.ErrUnexpectedEOF))
					if !hdrErr && !errors.Is(err, bmd.ErrVersion1) || recs != nil {
						t.Errorf("%s: byte %d ^ %02x of the header: %v", name, i, flip, err)
					}
					if i >= f.header-8 && !errors.Is(err, bmd.ErrChecksum) {
						t.Errorf("%s: byte %d ^ %02x of the header checksum: %v", name, i, flip, err)
					}
					continue
				}
				b := f.blocks[k]
				if !errors.As(err, &fe) || fe.Record != "block" || fe.Offset != b.at {
					t.Fatalf("%s: byte %d ^ %02x of block %d at %d: %v", name, i, flip, k+1, b.at, err)
				}
				inLength := i < int(b.at)+b.head
				if !inLength && !errors.Is(err, bmd.ErrChecksum) {
					t.Errorf("%s: byte %d ^ %02x of block %d: %v, want a checksum error", name, i, flip, k+1, err)
				}
				if !errors.Is(err, bmd.ErrChecksum) && !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(fe.Msg, "block length") {
					t.Errorf("%s: byte %d ^ %02x of block %d: %v", name, i, flip, k+1, err)
				}
				if n := rtWhole(f, ends, k); !slices.Equal(recs, full[:n]) {
					t.Fatalf("%s: byte %d ^ %02x of block %d: records\n%q\nwant the %d records before it\n%q", name, i, flip, k+1, recs, n, full[:n])
				}
			}
		}
	}
}

// TestBlocks: the blocks the Writer makes, records that span blocks, and
// what the reader accepts and refuses of the framing.
func TestBlocks(t *testing.T) {
	hdr := rtHeaderOf(bmd.Metadata{IDSize: 4, Classes: 1})

	// A 100 KiB STRING, a long object array and small records around them.
	var out bytes.Buffer
	w, err := bmd.NewWriter(&out, &bmd.Metadata{IDSize: 4, Classes: 1})
	if err != nil {
		t.Fatal(err)
	}
	text := make([]byte, 100<<10)
	for i := range text {
		text[i] = byte(i * 7)
	}
	elems := make([]uint64, 30000)
	for i := range elems {
		elems[i] = uint64(i*i) % 1000003
	}
	w.ClearString([]byte("a"))
	w.ClearString(text)
	w.ObjectArray(0, elems)
	w.PrimitiveArray(bmd.Int, 3, false)
	written := w.Written()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	flushed := rtWritten(w)
	if w.Written() <= written || w.Written() != int64(out.Len()) {
		t.Errorf("Flush wrote %d bytes, Written says %d", out.Len(), w.Written())
	}
	if err := w.Flush(); err != nil || w.Written() != int64(out.Len()) {
		t.Errorf("a second Flush wrote %d bytes (%v)", int64(out.Len())-w.Written(), err)
	}
	last := bytes.Repeat([]byte{'b'}, 100)
	w.ClearString(last)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	file := out.Bytes()
	f, err := rtUnframe(file)
	if err != nil {
		t.Fatal(err)
	}
	// Blocks of BlockSize, but the last before Flush and the last.
	var sizes []int
	for _, b := range f.blocks {
		sizes = append(sizes, b.n)
	}
	full, rest := int(flushed/bmd.BlockSize), int(flushed%bmd.BlockSize)
	if len(sizes) != full+2 || sizes[full] != rest || sizes[full+1] != 3+100+3 || slices.Max(sizes) != bmd.BlockSize {
		t.Errorf("blocks of %v bytes, want %d of %d, one of %d, one of 106", sizes, full, bmd.BlockSize, rest)
	}
	_, recs := rtRead(t, file, nil)
	want := []string{
		`STRING id=1 len=1 "a"`,
		fmt.Sprintf("STRING id=2 len=%d %s", len(text), rtBytes(text)),
		fmt.Sprintf("OBJECT ARRAY id=2 trace=0 class=0 n=%d elems=%s", len(elems), rtShort(elems)),
		"PRIMITIVE ARRAY id=3 trace=0 type=10 n=3",
		fmt.Sprintf("STRING id=3 len=100 %s", rtBytes(last)),
		"END",
	}
	rtCompare(t, recs, want)
	if len(f.blocks) < 9 {
		t.Errorf("only %d blocks", len(f.blocks))
	}

	// Blocks of any size from 1 byte to MaxBlockSize are read; a length
	// of 0 or above MaxBlockSize is refused where it is.
	for _, sizes := range [][]int{{1}, {2, 3}, {bmd.MaxBlockSize}, {bmd.BlockSize + 1, 1}} {
		_, recs := rtRead(t, rtReframe(t, file, sizes...), nil)
		rtCompare(t, recs, want)
	}
	largest := rtCat([]byte{0x01, 0x00}, rtV(bmd.MaxBlockSize-8), make([]byte, bmd.MaxBlockSize-8), []byte{0x15, 0x00, 0x01})
	if len(largest) != bmd.MaxBlockSize {
		t.Fatalf("%d bytes", len(largest))
	}
	if _, recs := rtRead(t, rtFrame(hdr, largest), nil); len(recs) != 2 {
		t.Errorf("a block of MaxBlockSize bytes: %q", recs)
	}
	over := rtCat([]byte{0x01, 0x00}, rtV(bmd.MaxBlockSize-7), make([]byte, bmd.MaxBlockSize-7), []byte{0x15, 0x00, 0x01})
	h := int64(len(hdr))
	for _, c := range []struct {
		name string
		file []byte
		msg  string
		at   int64
		is   error
	}{
		{"length 0", rtCat(hdr, []byte{0x00}, rtFrame(nil, []byte{0x15, 0, 0})), "block length 0", h, nil},
		{"length 0 later", rtCat(rtFrame(hdr, []byte{0x01, 0x00, 0x00}), []byte{0x00, 0x00}), "block length 0", h + 12, nil},
		{"length above MaxBlockSize", rtFrame(hdr, over), "block length 1048577 (a block holds 1 to 1048576 bytes)", h, nil},
		{"length 2^64-1", rtCat(hdr, bytes.Repeat([]byte{0xFF}, 9), []byte{0x01}), "block length 18446744073709551615", h, nil},
		{"length overflows", rtCat(hdr, bytes.Repeat([]byte{0xFF}, 12)), "block length", h, nil},
		{"length cut", rtCat(hdr, []byte{0x80}), "truncated: block 1 is cut short", h, io.ErrUnexpectedEOF},
		{"payload cut", rtFrame(hdr, []byte{0x15, 0, 0})[:h+3], "truncated: block 1 is cut short", h, io.ErrUnexpectedEOF},
		{"checksum cut", rtFrame(hdr, []byte{0x15, 0, 0})[:h+11], "truncated: block 1 is cut short", h, io.ErrUnexpectedEOF},
		{"second block cut", rtFrame(hdr, []byte{0x01, 0x00, 0x00, 0x15, 0x00, 0x01}, 3)[:h+12+5], "truncated: block 2 is cut short", h + 12, io.ErrUnexpectedEOF},
		{"checksum", rtCat(rtFrame(hdr, []byte{0x01, 0x00, 0x00}), []byte{0x03, 0x15, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0}),
			fmt.Sprintf("block 2 (bytes %d to %d): checksum mismatch: the file is damaged", h+12, h+24), h + 12, bmd.ErrChecksum},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := rtReadErr(c.file)
			rtCheckErr(t, err, c.msg, "block", c.at, c.is)
		})
	}
	// Records are read block by block: those of the blocks before the
	// damage are returned, in a block of a long record too.
	damaged := rtReframe(t, file, bmd.BlockSize)
	bf, _ := rtUnframe(damaged)
	damaged[bf.blocks[3].at+100] ^= 0x40
	recs, err = rtReadErr(damaged)
	var fe *bmd.FormatError
	if !errors.Is(err, bmd.ErrChecksum) || !errors.As(err, &fe) || fe.Offset != bf.blocks[3].at || len(recs) != 1 {
		t.Errorf("a damaged block 4 of a long string: %q, %v", recs, err)
	}
}

// TestRecordOffsets: a record's Offset is that of its tag in the file,
// when it starts a block, the first block included, and when it starts
// after a long record.
func TestRecordOffsets(t *testing.T) {
	hdr := rtHeaderOf(bmd.Metadata{IDSize: 4})
	str := func(n int) []byte { return rtCat([]byte{0x01, 0x00}, rtV(uint64(n)), bytes.Repeat([]byte{'a'}, n)) }
	s1 := str(bmd.BlockSize - 4) // exactly one block
	for _, stream := range [][]byte{
		rtCat(s1, str(1), []byte{0x15, 0x00, 0x02}),
		rtCat(s1, s1, s1, []byte{0x15, 0x00, 0x03}),
		rtCat(str(readBufSize+100), str(3), []byte{0x15, 0x00, 0x02}),
	} {
		for _, sizes := range [][]int{nil, {bmd.BlockSize}, {len(s1) - 1}, {1}} {
			file := rtFrame(hdr, stream, sizes...)
			rtRead(t, file, nil) // checks every offset
			rtRead(t, file, iotest.OneByteReader)
		}
	}
}

// readBufSize is larger than the reader's buffer.
const readBufSize = 1 << 18

// TestClassesAnyOrder: classes are defined in any index order, anywhere
// among the objects; their index is stated, objects are numbered from
// C+1 whatever comes between, and an instance needs its whole class chain
// up to the first super class above C.
func TestClassesAnyOrder(t *testing.T) {
	const C = 6
	s := newRTScript(t, &bmd.Metadata{IDSize: 4, Classes: C, ClassesPlaced: true})
	w := s.w
	f := func(name uint64, ty bmd.Type) []bmd.Field { return []bmd.Field{{Name: name, Type: ty, Kept: true}} }
	defs := map[uint64]*bmd.Class{
		5: {Index: 5, Fields: f(5, bmd.Int)},
		2: {Index: 2, Super: 5, Fields: f(2, bmd.Object)},
		4: {Index: 4, Super: 2, Fields: f(4, bmd.Long)},
		1: {Index: 1, Super: 9, Fields: f(1, bmd.Byte)}, // super above C: a class without a record
		3: {Index: 3, Super: 6, Fields: f(3, bmd.Short)},
		6: {Index: 6, Super: 4},
	}
	next := uint64(C + 1)
	class := func(i uint64) {
		t.Helper()
		if idx, err := w.Class(defs[i]); err != nil || idx != i {
			t.Fatalf("class %d: %d, %v", i, idx, err)
		}
		s.expect(&bmd.Record{Kind: bmd.KindClass, ID: i, Def: rtClassRead(defs[i])})
	}
	instance := func(class uint64, values ...uint64) {
		t.Helper()
		id, err := w.Instance(class, values)
		if err != nil || id != next {
			t.Fatalf("instance of %d: %d, %v; want object %d", class, id, err, next)
		}
		s.expect(&bmd.Record{Kind: bmd.KindInstance, ID: id, Class: class, Values: values})
		next++
	}
	array := func() {
		t.Helper()
		id, err := w.PrimitiveArray(bmd.Int, 1, false)
		if err != nil || id != next {
			t.Fatalf("array: %d, %v; want object %d", id, err, next)
		}
		s.expect(&bmd.Record{Kind: bmd.KindPrimitiveArray, ID: id, Type: bmd.Int, Count: 1})
		next++
	}
	array() // an object before any class: object C+1
	class(5)
	instance(5, 7)
	class(2)
	array()
	if _, ok := w.Layout(4); ok || w.Defined(4) {
		t.Error("class 4 is defined before its record")
	}
	class(4)
	instance(4, 1<<40, 9, 7) // its own field, then 2's, then 5's
	instance(2, 0, 3)
	class(1)
	instance(1, 255)
	class(3)
	if _, ok := w.Layout(3); ok || !w.Defined(3) {
		t.Error("class 3, whose super class 6 is not defined, has a layout")
	}
	s.ok(w.PlaceClasses(5)) // classes 1 to 5, in index order
	s.expect(&bmd.Record{Kind: bmd.KindPlaceClasses, ID: 1, Length: 5})
	class(6)
	instance(3, 1, 2, 3, 4) // 3's field, then 6's (none), 4's, 2's, 5's
	instance(6, 5, 6, 7)
	s.ok(w.PlaceClasses(1))
	s.expect(&bmd.Record{Kind: bmd.KindPlaceClasses, ID: 6, Length: 1})
	s.ok(w.Close())
	s.expect(&bmd.Record{Kind: bmd.KindEnd})
	file := s.out.Bytes()
	_, got := rtRead(t, file, nil)
	rtCompare(t, got, s.want)

	// The index field of each CLASS record is zigzag(index - previous) << 1;
	// the reader counts the classes defined and gives their layouts.
	fr, _ := rtUnframe(file)
	r, _ := bmd.NewReader(bytes.NewReader(file))
	var fields []uint64
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if rec.Kind == bmd.KindClass {
			at, _ := fr.streamOff(rec.Offset)
			v, _ := protowire.ConsumeVarint(fr.stream[at+1:])
			fields = append(fields, v)
			if r.Classes() != uint64(len(fields)) {
				t.Errorf("Classes() = %d after %d classes", r.Classes(), len(fields))
			}
		}
		if rec.Kind == bmd.KindInstance && rec.Class == 3 {
			if l, ok := r.Layout(3); !ok || len(l) != 4 || l[0].Name != 3 || l[1].Name != 4 || l[2].Name != 2 || l[3].Name != 5 {
				t.Errorf("layout of class 3: %v", l)
			}
		}
		if rec.Kind == bmd.KindClass && rec.ID == 3 {
			if _, ok := r.Layout(3); ok {
				t.Error("the reader gives a layout of class 3 before its super class 6 is defined")
			}
		}
	}
	// 5, 2, 4, 1, 3, 6: deltas +5 -3 +2 -3 +2 +3.
	if want := []uint64{20, 10, 8, 10, 8, 12}; !slices.Equal(fields, want) {
		t.Errorf("class index fields %v, want %v", fields, want)
	}
}

// TestRedump: another dump of a class (a file with several heap dumps)
// carries its own statics, constants, links and instance size, the super
// class and fields of the definition; it is not placed, leaves the layout
// alone, and counts in END.
func TestRedump(t *testing.T) {
	s := newRTScript(t, &bmd.Metadata{IDSize: 8, Classes: 2, ClassesPlaced: true})
	w := s.w
	base := &bmd.Class{Index: 1, Fields: []bmd.Field{{Name: 1, Type: bmd.Int, Kept: true}}}
	sub := &bmd.Class{Index: 2, Super: 1, Loader: 5, InstanceSize: 12, StackTrace: 1,
		Statics:   []bmd.Static{{Name: 3, Type: bmd.Object, Kept: true, Value: 3}, {Name: 4, Type: bmd.Long, Kept: true, Value: 1}},
		Constants: []bmd.Constant{{Index: 1, Type: bmd.Int, Kept: true, Value: 9}},
		Fields:    []bmd.Field{{Name: 2, Type: bmd.Object, Kept: true}}}
	again := &bmd.Class{Index: 2, Redump: true, Super: 1, Loader: 6, Signers: 7, InstanceSize: 16, StackTrace: 2,
		Statics: []bmd.Static{{Name: 3, Type: bmd.Object, Kept: true, Value: 4}},
		Fields:  []bmd.Field{{Name: 2, Type: bmd.Object, Kept: true}}}
	for _, c := range []*bmd.Class{sub, base} {
		if _, err := w.Class(c); err != nil {
			t.Fatal(err)
		}
		s.expect(&bmd.Record{Kind: bmd.KindClass, ID: c.Index, Trace: c.StackTrace, Def: rtClassRead(c)})
	}
	s.ok(w.HeapDump(true))
	s.expect(&bmd.Record{Kind: bmd.KindHeapDump, Segment: true})
	s.ok(w.PlaceClasses(2))
	s.expect(&bmd.Record{Kind: bmd.KindPlaceClasses, ID: 1, Length: 2})
	id, err := w.Instance(2, []uint64{4, 7})
	s.ok(err)
	s.expect(&bmd.Record{Kind: bmd.KindInstance, ID: id, Class: 2, Values: []uint64{4, 7}})
	s.ok(w.HeapDumpEnd())
	s.expect(&bmd.Record{Kind: bmd.KindHeapDumpEnd})
	s.ok(w.HeapDump(true))
	s.expect(&bmd.Record{Kind: bmd.KindHeapDump, Segment: true})
	if idx, err := w.Class(again); err != nil || idx != 2 {
		t.Fatalf("another dump of class 2: %d, %v", idx, err)
	}
	s.expect(&bmd.Record{Kind: bmd.KindClass, ID: 2, Trace: 2, Def: rtClassRead(again)})
	if l, ok := w.Layout(2); !ok || len(l) != 2 {
		t.Errorf("layout of class 2 after another dump: %v", l)
	}
	// Another dump is not placed: PLACE CLASSES has no class left.
	w3, _ := bmd.NewWriter(io.Discard, &bmd.Metadata{IDSize: 8, Classes: 2, ClassesPlaced: true})
	w3.Class(sub)
	w3.Class(base)
	w3.PlaceClasses(2)
	w3.Class(again)
	if err := w3.PlaceClasses(1); err == nil || !strings.Contains(err.Error(), "3 classes placed, 2 in the file") {
		t.Errorf("PLACE CLASSES after another dump: %v", err)
	}
	// Refusals, each in a writer of its own.
	for _, c := range []struct {
		name string
		c    bmd.Class
		msg  string
	}{
		{"not defined", bmd.Class{Index: 1, Redump: true}, "another dump of class 1, not defined or with another layout"},
		{"other super", bmd.Class{Index: 2, Redump: true, Super: 0, Fields: sub.Fields}, "another dump of class 2, not defined or with another layout"},
		{"other fields", bmd.Class{Index: 2, Redump: true, Super: 1}, "another dump of class 2, not defined or with another layout"},
		{"field kept", bmd.Class{Index: 2, Redump: true, Super: 1, Fields: []bmd.Field{{Name: 2, Type: bmd.Int, Kept: true}}}, "another dump of class 2"},
		{"defined twice", bmd.Class{Index: 2, Super: 1, Fields: sub.Fields}, "class 2 defined twice"},
	} {
		var out bytes.Buffer
		w2, _ := bmd.NewWriter(&out, &bmd.Metadata{IDSize: 8, Classes: 2})
		if _, err := w2.Class(sub); err != nil {
			t.Fatal(err)
		}
		if _, err := w2.Class(&c.c); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %q", c.name, err, c.msg)
		}
	}
	s.ok(w.HeapDumpEnd())
	s.expect(&bmd.Record{Kind: bmd.KindHeapDumpEnd})
	s.ok(w.Close())
	s.expect(&bmd.Record{Kind: bmd.KindEnd})
	if w.Objects() != 4 {
		t.Errorf("Objects() = %d, want 4 (2 classes, 1 instance, 1 class again)", w.Objects())
	}
	file := s.out.Bytes()
	_, got := rtRead(t, file, nil)
	rtCompare(t, got, s.want)
	// The reader keeps the definition's layout and counts.
	r, _ := bmd.NewReader(bytes.NewReader(file))
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if rec.Kind == bmd.KindClass && rec.Def.Redump {
			if l, ok := r.Layout(2); !ok || len(l) != 2 || r.Classes() != 2 {
				t.Errorf("after another dump: layout %v, %d classes", l, r.Classes())
			}
		}
	}
}

// TestObjectID: OBJECT ID sets the ID of the next object record, one
// taken before or the next new one; the objects after it count on from
// there; the Writer writes it only when the ID is not the one implied.
func TestObjectID(t *testing.T) {
	s := newRTScript(t, &bmd.Metadata{IDSize: 4, Classes: 1})
	w := s.w
	next, maxID := uint64(2), uint64(1)
	array := func() {
		t.Helper()
		id, err := w.PrimitiveArray(bmd.Byte, 1, true)
		if err != nil || id != next {
			t.Fatalf("array %d, %v; want %d", id, err, next)
		}
		s.expect(&bmd.Record{Kind: bmd.KindPrimitiveNoData, ID: id, Type: bmd.Byte, Count: 1})
		next++
		maxID = max(maxID, id)
	}
	objectID := func(id uint64, written bool) {
		t.Helper()
		before := w.Count[bmd.KindObjectID]
		s.ok(w.ObjectID(id))
		if (w.Count[bmd.KindObjectID] != before) != written {
			t.Fatalf("ObjectID(%d) with next %d: written %v", id, next, !written)
		}
		if written {
			s.expect(&bmd.Record{Kind: bmd.KindObjectID, ID: id})
		}
		next = id
	}
	objectID(2, false) // the first object: implied
	array()            // 2
	array()            // 3
	array()            // 4
	objectID(5, false)
	objectID(3, true)
	array()            // 3 again
	array()            // 4 again
	objectID(5, false) // the next new one, implied
	array()            // 5
	objectID(2, true)
	array()           // 2 again
	objectID(6, true) // the next new one, not implied
	array()           // 6
	objectID(2, true) // the last one counts
	objectID(7, true)
	objectID(2, true) // an OBJECT ID with no object after it
	// Out of bounds: a class, 0, beyond the next new one.
	for _, bad := range []uint64{1, 0, 4, math.MaxUint64} {
		w2, _ := bmd.NewWriter(io.Discard, &bmd.Metadata{IDSize: 4, Classes: 1})
		w2.PrimitiveArray(bmd.Int, 1, false) // 2
		w2.ObjectID(2)
		w2.PrimitiveArray(bmd.Int, 1, false) // 2 again
		if want := fmt.Sprintf("object ID %d (objects are 2 to 3)", bad); !strings.Contains(fmt.Sprint(w2.ObjectID(bad)), want) {
			t.Errorf("ObjectID(%d): %v, want %q", bad, w2.Err(), want)
		}
	}
	s.ok(w.Close())
	s.expect(&bmd.Record{Kind: bmd.KindEnd})
	if w.Objects() != 8 {
		t.Errorf("Objects() = %d, want 8 object records", w.Objects())
	}
	_, got := rtRead(t, s.out.Bytes(), nil)
	rtCompare(t, got, s.want)
	// The reader accepts an OBJECT ID of delta 0, which the Writer does not
	// write, and two in a row.
	hdr := rtHeaderOf(bmd.Metadata{IDSize: 4, Classes: 1})
	file := rtFrame(hdr, []byte{0x18, 0x00, 0x10, 0x0a, 0x01, 0x18, 0x01, 0x18, 0x00, 0x10, 0x0a, 0x01, 0x15, 0x02, 0x00})
	_, got = rtRead(t, file, nil)
	rtCompare(t, got, []string{"OBJECT ID id=2", "PRIMITIVE ARRAY id=2 trace=0 type=10 n=1", "OBJECT ID id=2", "OBJECT ID id=2",
		"PRIMITIVE ARRAY id=2 trace=0 type=10 n=1", "END"})
}

// rtFailingWriter fails every write after the first n bytes.
type rtFailingWriter struct {
	n   int
	err error
}

func (f *rtFailingWriter) Write(p []byte) (int, error) {
	if len(p) <= f.n {
		f.n -= len(p)
		return len(p), nil
	}
	n := f.n
	f.n = 0
	return n, f.err
}

// TestWriterErrors: the writer refuses what the reader would reject, and
// the first error sticks: every later call returns it, whatever it is.
func TestWriterErrors(t *testing.T) {
	newW := func() (*bmd.Writer, *bytes.Buffer) {
		var out bytes.Buffer
		w, err := bmd.NewWriter(&out, &bmd.Metadata{IDSize: 4, Classes: 3, ClassesPlaced: true})
		if err != nil {
			t.Fatal(err)
		}
		return w, &out
	}
	sticks := func(w *bmd.Writer, out *bytes.Buffer, err error, msg string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), msg) || !strings.HasPrefix(err.Error(), "bmd: ") {
			t.Fatalf("error %v, want \"bmd: …%s…\"", err, msg)
		}
		if w.Err() != err {
			t.Errorf("Err() = %v, want %v", w.Err(), err)
		}
		later := map[string]error{}
		_, later["ClearString"] = w.ClearString([]byte("more"))
		_, later["ArrayName"] = w.ArrayName(0, 0, false)
		later["Root"] = w.Root(0x09, 1, 0, 0, 0, 0)
		later["RawRecord"] = w.RawRecord(0x01, nil)
		_, later["Class"] = w.Class(&bmd.Class{Index: 0})
		_, later["Instance"] = w.Instance(99, nil)
		later["PlaceClasses"] = w.PlaceClasses(99)
		later["ObjectID"] = w.ObjectID(math.MaxUint64)
		later["Time"] = w.Time(0)
		later["Trace"] = w.Trace(0)
		later["Flush"] = w.Flush()
		later["Close"] = w.Close()
		for call, e := range later {
			if e != err {
				t.Errorf("a later %s returns %v, want the first error", call, e)
			}
		}
		if _, e := rtReadErr(out.Bytes()); e == io.EOF {
			t.Errorf("the output of a failed writer reads as a complete file")
		}
	}
	class := func(w *bmd.Writer, c *bmd.Class) {
		t.Helper()
		if _, err := w.Class(c); err != nil {
			t.Fatal(err)
		}
	}

	// Class indexes: 1 to C, each defined once.
	for _, idx := range []uint64{0, 4, math.MaxUint64} {
		w, out := newW()
		id, err := w.Class(&bmd.Class{Index: idx})
		if id != 0 {
			t.Errorf("a refused class has index %d", id)
		}
		sticks(w, out, err, fmt.Sprintf("class index %d (the metadata counts 3 classes)", idx))
	}
	w, out := newW()
	class(w, &bmd.Class{Index: 2})
	_, err := w.Class(&bmd.Class{Index: 2})
	sticks(w, out, err, "class 2 defined twice")
	w, out = newW()
	_, err = w.Class(&bmd.Class{Index: 2, Redump: true})
	sticks(w, out, err, "another dump of class 2, not defined or with another layout")
	w, out = newW()
	class(w, &bmd.Class{Index: 2, Fields: []bmd.Field{{Name: 1, Type: bmd.Int}}})
	_, err = w.Class(&bmd.Class{Index: 2, Redump: true, Super: 3, Fields: []bmd.Field{{Name: 1, Type: bmd.Int}}})
	sticks(w, out, err, "another dump of class 2, not defined or with another layout")
	// Classes after objects are fine.
	w, _ = newW()
	w.PrimitiveArray(bmd.Int, 1, false)
	class(w, &bmd.Class{Index: 3})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// PLACE CLASSES: classes in index order, defined, at most C.
	w, out = newW()
	class(w, &bmd.Class{Index: 1})
	class(w, &bmd.Class{Index: 2})
	class(w, &bmd.Class{Index: 3})
	if err := w.PlaceClasses(2); err != nil {
		t.Fatal(err)
	}
	sticks(w, out, w.PlaceClasses(2), "4 classes placed, 3 in the file")
	w, out = newW()
	class(w, &bmd.Class{Index: 2})
	sticks(w, out, w.PlaceClasses(1), "class 1 placed before it is defined")
	w, out = newW()
	class(w, &bmd.Class{Index: 1})
	class(w, &bmd.Class{Index: 3})
	sticks(w, out, w.PlaceClasses(3), "class 2 placed before it is defined")
	w, out = newW()
	sticks(w, out, w.PlaceClasses(math.MaxUint64), "classes placed, 3 in the file")

	// PlaceClasses(0) writes nothing.
	w1, out1 := newW()
	w2, out2 := newW()
	class(w1, &bmd.Class{Index: 1})
	class(w2, &bmd.Class{Index: 1})
	if err := w2.PlaceClasses(0); err != nil {
		t.Fatal(err)
	}
	w1.Close()
	w2.Close()
	if !bytes.Equal(out1.Bytes(), out2.Bytes()) {
		t.Errorf("PlaceClasses(0) wrote % x", out2.Bytes()[out1.Len()-3:])
	}

	// An instance of a class that is not defined, whose chain is not, or
	// with the wrong number of values.
	for _, c := range []uint64{0, 1, 4} {
		w, out = newW()
		_, err = w.Instance(c, nil)
		sticks(w, out, err, fmt.Sprintf("instance of undefined class %d", c))
	}
	w, out = newW()
	class(w, &bmd.Class{Index: 1, Super: 3})
	class(w, &bmd.Class{Index: 3, Super: 2})
	_, err = w.Instance(1, nil)
	sticks(w, out, err, "instance of class 1, whose super class 2 is not defined")
	w, out = newW()
	class(w, &bmd.Class{Index: 1, Fields: []bmd.Field{{Name: 1, Type: bmd.Int}}})
	_, err = w.Instance(1, []uint64{1, 2})
	sticks(w, out, err, "instance of class 1 has 2 values for 1 fields")
	w, out = newW()
	class(w, &bmd.Class{Index: 1, Fields: []bmd.Field{{Name: 1, Type: bmd.Int}, {Name: 2, Type: bmd.Object}}})
	_, err = w.InstanceKept(1, []uint64{1, 2})
	sticks(w, out, err, "instance of class 1 has 2 values for 1 fields kept")
	w, out = newW()
	_, err = w.InstanceKept(2, nil)
	sticks(w, out, err, "instance of undefined class 2")

	// OBJECT ID beyond the objects.
	w, out = newW()
	sticks(w, out, w.ObjectID(3), "object ID 3 (objects are 4 to 4)")
	w, out = newW()
	sticks(w, out, w.ObjectID(5), "object ID 5 (objects are 4 to 4)")

	// An array name of no string, or of no dimension.
	for _, c := range []struct {
		elem uint64
		dims uint8
	}{{0, 1}, {2, 1}, {1, 0}} {
		w, out = newW()
		w.ClearString([]byte("a"))
		_, err = w.ArrayName(c.elem, c.dims, false)
		sticks(w, out, err, fmt.Sprintf("array name of string %d with %d dimensions (1 strings written)", c.elem, c.dims))
	}

	// A root of a kind that does not exist; a raw record of a kind.
	w, out = newW()
	sticks(w, out, w.Root(0x09, 1, 0, 0, 0, 0), "invalid root kind 0x09")
	w, out = newW()
	sticks(w, out, w.RawRecord(0x0C, nil), "raw record with HPROF tag 0x0C, which has its own record kind")

	// A reference whose distance from its object is exactly 2^63 has no
	// encoding (zigzag(-2^63)+1 wraps to 0, null): refused, not written
	// as null.
	w, out = newW()
	class(w, &bmd.Class{Index: 1, Fields: []bmd.Field{{Name: 1, Type: bmd.Object}}})
	_, err = w.Instance(1, []uint64{4 + 1<<63})
	sticks(w, out, err, "cannot be encoded")
	// One less or more is fine.
	for _, target := range []uint64{3 + 1<<63, 5 + 1<<63, math.MaxUint64} {
		w, out = newW()
		class(w, &bmd.Class{Index: 1, Fields: []bmd.Field{{Name: 1, Type: bmd.Object}}})
		if _, err := w.Instance(1, []uint64{target}); err != nil {
			t.Fatalf("reference to %d: %v", target, err)
		}
		w.Close()
		_, recs := rtRead(t, out.Bytes(), nil)
		if want := fmt.Sprintf("INSTANCE id=4 trace=0 class=1 values=[%d]", target); recs[1] != want {
			t.Errorf("reference to %d read as %s", target, recs[1])
		}
	}

	// A CLASS record's index is written as the zigzag of its step from
	// the previous one, shifted for the redump flag: a step whose zigzag
	// is 2^63 or more has no encoding (spec/bmd.md §5.13).
	for _, c := range []struct {
		index uint64
		ok    bool
	}{{2, true}, {1 << 62, true}, {1<<62 + 1, false}} {
		var out bytes.Buffer
		w, err := bmd.NewWriter(&out, &bmd.Metadata{IDSize: 4, Classes: 1 << 63})
		if err != nil {
			t.Fatal(err)
		}
		class(w, &bmd.Class{Index: 1})
		_, err = w.Class(&bmd.Class{Index: c.index})
		if !c.ok {
			sticks(w, &out, err, "too far apart to encode")
			continue
		}
		if err != nil {
			t.Fatalf("class %d after class 1: %v", c.index, err)
		}
		w.Close()
		_, recs := rtRead(t, out.Bytes(), nil)
		if want := fmt.Sprintf("CLASS id=%d ", c.index); !strings.HasPrefix(recs[1], want) {
			t.Errorf("class %d read as %s", c.index, recs[1])
		}
	}

	// An error of the underlying writer sticks too; what was written
	// before it is whole blocks.
	boom := errors.New("disk full")
	fw := &rtFailingWriter{n: 3 * bmd.BlockSize, err: boom}
	w, err = bmd.NewWriter(fw, &bmd.Metadata{IDSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; w.Err() == nil && i < 100; i++ {
		w.ClearString(make([]byte, bmd.BlockSize))
	}
	if !errors.Is(w.Err(), boom) || w.Close() != w.Err() || w.Flush() != w.Err() {
		t.Errorf("write error: %v", w.Err())
	}

	// Metadata a reader would refuse.
	for _, c := range []struct {
		m   bmd.Metadata
		msg string
	}{
		{bmd.Metadata{}, "identifier size 0"},
		{bmd.Metadata{IDSize: 2}, "identifier size 2"},
		{bmd.Metadata{IDSize: 4, Alignment: 8}, "alignment 8"}, // absent, 0, stands for 8
		{bmd.Metadata{IDSize: 4, Alignment: 24}, "alignment 24"},
		{bmd.Metadata{IDSize: 4, Alignment: 512}, "alignment 512"},
		{bmd.Metadata{IDSize: 4, HPROFVersion: "JAVA PROFILE"}, `HPROF version "JAVA PROFILE"`},
		{bmd.Metadata{IDSize: 4, HPROFVersion: "JAVA PROFILE " + strings.Repeat("1", 40)}, "HPROF version"},
		{bmd.Metadata{IDSize: 4, Labels: []string{"="}}, `label "="`},
	} {
		if _, err := bmd.NewWriter(io.Discard, &c.m); err == nil || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "bmd: ") {
			t.Errorf("NewWriter(%+v): %v, want %q", c.m, err, c.msg)
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

// TestWriterRefusesInvalidTypes: the writer refuses what the reader
// refuses (spec/bmd.md §2.7, §5.16): a field, static or constant whose
// type is not one of the nine HPROF type codes, and a primitive array of
// objects or of an unknown element type.
func TestWriterRefusesInvalidTypes(t *testing.T) {
	newW := func() *bmd.Writer {
		w, err := bmd.NewWriter(io.Discard, &bmd.Metadata{IDSize: 4, Classes: 1})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	for _, typ := range []bmd.Type{0, 1, 3, 12, 255} {
		for what, c := range map[string]*bmd.Class{
			"field":    {Index: 1, Fields: []bmd.Field{{Name: 0, Type: typ}}},
			"static":   {Index: 1, Statics: []bmd.Static{{Name: 0, Type: typ, Kept: true}}},
			"constant": {Index: 1, Constants: []bmd.Constant{{Index: 1, Type: typ}}},
		} {
			if _, err := newW().Class(c); err == nil || !strings.Contains(err.Error(), "invalid") {
				t.Errorf("a %s of type %d: %v, want an error", what, typ, err)
			}
		}
	}
	for _, typ := range []bmd.Type{0, bmd.Object, 3, 12, 255} {
		for _, noData := range []bool{false, true} {
			if _, err := newW().PrimitiveArray(typ, 1, noData); err == nil || !strings.Contains(err.Error(), "invalid") {
				t.Errorf("a primitive array of type %d (NODATA %v): %v, want an error", typ, noData, err)
			}
		}
	}
	// The valid ones are written and read back.
	var b bytes.Buffer
	w, _ := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 4, Classes: 1})
	var fields []bmd.Field
	for _, typ := range []bmd.Type{bmd.Object, bmd.Boolean, bmd.Char, bmd.Float, bmd.Double, bmd.Byte, bmd.Short, bmd.Int, bmd.Long} {
		fields = append(fields, bmd.Field{Type: typ})
		if typ != bmd.Object {
			if _, err := w.PrimitiveArray(typ, 1, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := w.Class(&bmd.Class{Index: 1, Fields: fields}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := bmd.NewReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := r.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkWriterLargeRecord writes one object array of 4M elements (about
// 20 MB): the Writer cuts it into blocks as it goes.
func BenchmarkWriterLargeRecord(b *testing.B) {
	elems := make([]uint64, 4<<20)
	for i := range elems {
		elems[i] = uint64(i * 1000)
	}
	for b.Loop() {
		w, _ := bmd.NewWriter(io.Discard, &bmd.Metadata{IDSize: 4})
		w.ObjectArray(0, elems)
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(w.Written())
	}
}

// TestPlaceClassesNeedsMetadata: PLACE CLASSES belongs to files whose
// metadata sets classes_placed (spec/bmd.md §5.22), which a reader refuses
// elsewhere: the Writer refuses to write it in another file.
func TestPlaceClassesNeedsMetadata(t *testing.T) {
	for _, placed := range []bool{false, true} {
		w, err := bmd.NewWriter(io.Discard, &bmd.Metadata{IDSize: 4, Classes: 1, ClassesPlaced: placed})
		if err != nil {
			t.Fatal(err)
		}
		w.HeapDump(true)
		if _, err := w.Class(&bmd.Class{Index: 1}); err != nil {
			t.Fatal(err)
		}
		err = w.PlaceClasses(1)
		if placed && err != nil {
			t.Errorf("PlaceClasses with classes_placed: %v", err)
		}
		if !placed && (err == nil || !strings.Contains(err.Error(), "does not set classes_placed")) {
			t.Errorf("PlaceClasses without classes_placed: %v, want a refusal", err)
		}
	}
}

package bmd_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/decrunch"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// The worked examples of spec/bmd.md §9, built with the Writer, checked
// byte for byte against the hex kept here and against the hex printed in
// the spec, and read back record by record.

// exFile1Hex is the complete file of §9, as printed there.
const exFile1Hex = `02 43 0a 12 4a 41 56 41 20 50 52 4f 46 49 4c 45 20 31 2e 30 2e 33 10 04 18 80
d0 95 ff bc 31 22 08 78 78 68 61 73 68 36 34 32 10 68 65 61 70 63 72 75 6e 63
68 20 30 2e 31 2e 30 38 03 40 01 48 02 50 01 68 01 74 11 6d 25 17 4b b7 b7 3c
02 02 06 4f dd bd b1 87 ff 11 9f 06 f4 fc e5 09 05 1a 2b 41 0d 04 00 00 08 00
00 00 00 08 00 00 02 02 05 02 14 0b 01 10 0a 05 16 01 0e 01 02 12 03 02 04 01
00 02 01 01 0c 15 03 02 ae 7c da b6 db 5f bb 1a`

// exFile2Hex is the second file of §9.12, as printed there.
const exFile2Hex = `02 1d 10 08 18 00 38 07 40 02 48 07 68 01 72 0f 61 70 70 3d 63 6f 6d 2e 65 78
61 6d 70 6c 65 a9 69 e6 f9 52 14 ae e2 cc 01 01 00 10 6a 61 76 61 2e 6c 61 6e
67 2e 4f 62 6a 65 63 74 01 00 11 63 6f 6d 2e 65 78 61 6d 70 6c 65 2e 50 6f 69
6e 74 01 00 01 78 01 00 01 79 01 00 06 4f 52 49 47 49 4e 17 02 02 01 06 02 41
4c 03 02 02 00 02 03 02 02 00 02 0a 07 0b 00 13 41 01 0d 04 00 00 00 00 00 00
00 00 00 00 00 0d 04 00 02 0c 00 00 00 00 0c 01 03 17 01 02 06 05 05 00 15 05
02 03 15 02 0d 14 05 0e 02 05 00 00 c0 3f 0f 00 0b 03 00 02 02 0f 02 01 02 11
08 ac 02 12 01 01 08 9a 01 12 08 01 01 02 09 12 ff 01 06 0c 0b 00 0d 01 00 02
00 00 00 00 00 0c 00 02 02 05 03 00 15 0a 02 03 15 02 0d 18 07 0e 02 08 00 00
c0 3f 18 06 10 0a 02 0c 15 09 07 ab 38 06 08 3c be 82 44`

// exPiece is the bytes one step of an example writes, and the section of
// the spec whose annotated block (or table row) shows them.
type exPiece struct {
	section string // "9.4"; "" if the spec shows the bytes only in the full dump
	hex     string
}

func exHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// exDump formats b as the spec prints a whole file: 26 bytes a line.
func exDump(b []byte) string {
	var sb strings.Builder
	for i, c := range b {
		switch {
		case i == 0:
		case i%26 == 0:
			sb.WriteByte('\n')
		default:
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%02x", c)
	}
	return sb.String()
}

// exSpec returns spec/bmd.md.
func exSpec(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../spec/bmd.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// exSection returns the text of a section, from its heading to the next
// heading of the same or a higher level.
func exSection(t *testing.T, spec, heading string) string {
	t.Helper()
	i := strings.Index(spec, "\n"+heading)
	if i < 0 {
		t.Fatalf("spec/bmd.md has no heading %q", heading)
	}
	level := strings.Index(heading, " ")
	rest := spec[i+1+len(heading):]
	for j := 0; j < len(rest); {
		k := strings.Index(rest[j:], "\n#")
		if k < 0 {
			break
		}
		j += k + 1
		n := 0
		for j+n < len(rest) && rest[j+n] == '#' {
			n++
		}
		if n <= level {
			return rest[:j]
		}
	}
	return rest
}

// exBlocks returns the bytes shown in each fenced code block of text: on
// each line, the leading two-digit hex tokens (the rest is annotation).
func exBlocks(text string) [][]byte {
	var out [][]byte
	var cur []byte
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			if in {
				out = append(out, cur)
			}
			in, cur = !in, []byte{}
			continue
		}
		if !in {
			continue
		}
		for _, tok := range strings.Fields(line) {
			b, err := hex.DecodeString(tok)
			if err != nil || len(b) != 1 {
				break
			}
			cur = append(cur, b[0])
		}
	}
	return out
}

func exCompare(t *testing.T, got, want []string) {
	t.Helper()
	for i := 0; i < len(got) || i < len(want); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("record %d:\n got %s\nwant %s", i, g, w)
		}
	}
}

// exWriter writes a file through a bmd.Writer and cuts the payload of its
// one block into pieces, at the records it is told to: what the Writer
// has put in the payload so far is the sum of its Bytes (a pending run of
// hashed strings or roots is counted once the next record writes it).
type exWriter struct {
	t    *testing.T
	out  bytes.Buffer
	w    *bmd.Writer
	cuts []uint64 // payload offsets where pieces end
}

func newExWriter(t *testing.T, m *bmd.Metadata) *exWriter {
	e := &exWriter{t: t}
	w, err := bmd.NewWriter(&e.out, m)
	if err != nil {
		t.Fatal(err)
	}
	e.w = w
	return e
}

// cut ends a piece after what was written since the previous cut, or
// several, at the given lengths from there.
func (e *exWriter) cut(splits ...int) {
	from := uint64(0)
	if len(e.cuts) > 0 {
		from = e.cuts[len(e.cuts)-1]
	}
	for _, n := range splits {
		e.cuts = append(e.cuts, from+uint64(n))
	}
	e.cuts = append(e.cuts, rtWritten(e.w))
}

func (e *exWriter) ok(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *exWriter) id(id uint64, err error) uint64 {
	e.t.Helper()
	e.ok(err)
	return id
}

// close writes END and returns the file and its pieces: the header, the
// block's length, the payload cut as told (END last), the block's
// checksum.
func (e *exWriter) close() (file []byte, pieces [][]byte) {
	e.t.Helper()
	e.ok(e.w.Close())
	e.cut()
	file = e.out.Bytes()
	f, err := rtUnframe(file)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(f.blocks) != 1 || uint64(f.blocks[0].n) != e.cuts[len(e.cuts)-1] {
		e.t.Fatalf("%d blocks, %d bytes of payload; the Writer counts %d", len(f.blocks), len(f.stream), e.cuts[len(e.cuts)-1])
	}
	b := f.blocks[0]
	pieces = append(pieces, file[:f.header], file[b.at:b.at+int64(b.head)])
	from := uint64(0)
	for _, to := range e.cuts {
		pieces = append(pieces, f.stream[from:to])
		from = to
	}
	return file, append(pieces, file[len(file)-8:])
}

// exHPROF1 is the HPROF dump of §9's first file: strings parent and weight,
// then one HEAP DUMP SEGMENT with an int[5], the CLASS DUMP of a class
// whose loader is not in the dump, with fields parent (object) and weight
// (int), an instance of it whose parent is the array, a ROOT JAVA FRAME
// of the instance (frame 0) and one of the array (no frame); then HEAP
// DUMP END.
func exHPROF1(t *testing.T) []byte {
	var b bytes.Buffer
	w, err := hprof.NewWriter(&b, hprof.Header{Version: hprof.Version103, IDSize: 4, Timestamp: 1700000000000})
	if err != nil {
		t.Fatal(err)
	}
	str := func(id uint32, s string) {
		w.WriteRecord(hprof.TagString, 0, append(binary.BigEndian.AppendUint32(nil, id), s...))
	}
	str(0x100, "parent")
	str(0x108, "weight")
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubPrimitiveArrayDump, ID: 0x1008, ElemType: hprof.Int, Length: 5})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x1000, Class: hprof.ClassDump{ID: 0x1000, Loader: 0x9000, InstanceSize: 8,
		Fields: []hprof.Field{{Name: 0x100, Type: hprof.Object}, {Name: 0x108, Type: hprof.Int}}}})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: 0x1010, ClassID: 0x1000, Data: []byte{0, 0, 0x10, 0x08, 0, 0, 0, 42}})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubRootJavaFrame, ID: 0x1010, Thread: 1, Frame: 0})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubRootJavaFrame, ID: 0x1008, Thread: 1, Frame: 0xFFFFFFFF})
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// exFile1 writes the complete file of §9, as crunch writes it for
// exHPROF1. Each piece is shown in a section.
func exFile1(t *testing.T) (file []byte, pieces []exPiece) {
	e := newExWriter(t, &bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.3", IDSize: 4,
		Timestamp: 1700000000000, Hash: bmd.HashXX64, Tool: "heapcrunch 0.1.0",
		Objects: 3, Classes: 1, Strings: 2, ClassesPlaced: true})
	s1 := e.id(e.w.HashedString(6, xxhash.Sum64String("parent"))) // string 1
	s2 := e.id(e.w.HashedString(6, xxhash.Sum64String("weight"))) // string 2
	cls := e.id(e.w.Class(&bmd.Class{Index: 1, Loader: 4, InstanceSize: 8, Fields: []bmd.Field{
		{Name: s1, Type: bmd.Object, Kept: true}, {Name: s2, Type: bmd.Int}}})) // class 1, object 1
	e.cut(20) // the run of hashed strings, written by the CLASS record; the CLASS
	e.ok(e.w.HeapDump(true))
	e.cut()
	arr := e.id(e.w.PrimitiveArray(bmd.Int, 5, false)) // object 2
	e.cut()
	e.ok(e.w.PlaceClasses(1)) // the CLASS DUMP of class 1 came here
	e.cut()
	inst := e.id(e.w.Instance(cls, []uint64{arr, 42})) // object 3
	e.cut()
	e.ok(e.w.Root(0x03, inst, 1, 0, 0, 0))         // JAVA FRAME, thread 1, frame 0
	e.ok(e.w.Root(0x03, arr, 1, 0xFFFFFFFF, 0, 0)) // JAVA FRAME, thread 1, no frame
	e.ok(e.w.HeapDumpEnd())
	e.cut(9) // the ROOT run, written by HEAP DUMP END; HEAP DUMP END
	if s1 != 1 || s2 != 2 || cls != 1 || arr != 2 || inst != 3 {
		t.Fatalf("IDs: strings %d %d, class %d, array %d, instance %d", s1, s2, cls, arr, inst)
	}
	file, bs := e.close()
	sections := []string{"9.1", "9.2", "9.3", "9.4", "9.5", "9.6", "9.7", "9.8", "9.9", "9.10", "9.10", "9.2"}
	if len(bs) != len(sections) {
		t.Fatalf("%d pieces for %d sections", len(bs), len(sections))
	}
	for i, b := range bs {
		pieces = append(pieces, exPiece{sections[i], fmt.Sprintf("% x", b)})
	}
	return file, pieces
}

// exFile2 writes the second file of §9.12 (8-byte IDs, a label, no PLACE
// CLASSES, two heap dumps). Every piece but the header (annotated in a
// block of its own) and four of the strings has a table row there.
func exFile2(t *testing.T) (file []byte, pieces []exPiece) {
	e := newExWriter(t, &bmd.Metadata{IDSize: 8, Objects: 7, Classes: 2, Strings: 7, Labels: []string{"app=com.example"}})
	for i, s := range []string{"java.lang.Object", "com.example.Point", "x", "y", "ORIGIN"} {
		if id := e.id(e.w.ClearString([]byte(s))); id != uint64(i+1) {
			t.Fatalf("string %q has ID %d", s, id)
		}
		e.cut()
	}
	if id := e.id(e.w.ArrayName(2, 1, false)); id != 6 { // "com.example.Point[]"
		t.Fatalf("array name has ID %d", id)
	}
	e.cut()
	if id := e.id(e.w.ClearString([]byte("ORIGINAL"))); id != 7 { // shares "ORIGIN" with string 5
		t.Fatalf("string ORIGINAL has ID %d", id)
	}
	e.cut()
	e.ok(e.w.LoadClass(1, 1, 0, 1))
	e.cut()
	e.ok(e.w.LoadClass(2, 2, 0, 2))
	e.cut()
	e.ok(e.w.Time(7))
	e.cut()
	e.ok(e.w.HeapDump(false))
	e.cut()
	e.ok(e.w.HeapInfo('A', 1))
	e.cut()
	if c := e.id(e.w.Class(&bmd.Class{Index: 1})); c != 1 {
		t.Fatalf("class 1 has index %d", c)
	}
	e.cut()
	if c := e.id(e.w.Class(exPoint())); c != 2 {
		t.Fatalf("class 2 has index %d", c)
	}
	e.cut()
	e.ok(e.w.Trace(5))
	e.cut()
	if o := e.id(e.w.Instance(2, []uint64{uint64(uint32(0xFFFFFFFD)), uint64(math.Float32bits(1.5))})); o != 3 {
		t.Fatalf("instance is object %d", o)
	}
	e.cut()
	if o := e.id(e.w.ObjectArray(9, []uint64{0, 3, 3})); o != 4 {
		t.Fatalf("array is object %d", o)
	}
	e.cut()
	if o := e.id(e.w.ObjectArray(2, []uint64{4})); o != 5 {
		t.Fatalf("array is object %d", o)
	}
	e.cut()
	if o := e.id(e.w.PrimitiveArray(bmd.Byte, 300, true)); o != 6 {
		t.Fatalf("array is object %d", o)
	}
	e.cut()
	// Each root is a run of one, written by the next record.
	e.ok(e.w.Root(0x01, 4, 0, 0, 77, 0))
	e.ok(e.w.Root(0x08, 3, 2, 0, 0, 9))
	e.ok(e.w.Root(0xFF, 6, 0, 0, 0, 0))
	e.ok(e.w.HeapDumpEnd())
	e.cut(6, 12, 16)
	// The second heap dump: class 2 and object 3 dumped again, and a new
	// object.
	e.ok(e.w.HeapDump(false))
	e.cut()
	if c := e.id(e.w.Class(exPointAgain())); c != 2 {
		t.Fatalf("class 2 dumped again has index %d", c)
	}
	e.cut()
	e.ok(e.w.ObjectID(3))
	e.cut()
	if o := e.id(e.w.Instance(2, []uint64{4, uint64(math.Float32bits(1.5))})); o != 3 {
		t.Fatalf("instance dumped again is object %d", o)
	}
	e.cut()
	e.ok(e.w.ObjectID(7))
	e.cut()
	if o := e.id(e.w.PrimitiveArray(bmd.Int, 2, false)); o != 7 {
		t.Fatalf("new array is object %d", o)
	}
	e.cut()
	e.ok(e.w.HeapDumpEnd())
	e.cut()
	file, bs := e.close()
	for i, b := range bs {
		sec := "9.12"
		if i == 0 || i >= 2 && i <= 6 && i != 4 { // the header, and the strings but "x"
			sec = ""
		}
		pieces = append(pieces, exPiece{sec, fmt.Sprintf("% x", b)})
	}
	return file, pieces
}

// exPoint is class 2 of §9.12: super class 1, loader object 6, instance
// size 12, a kept long constant -1, statics ORIGIN (object 4) and ORIGIN
// (int -3, kept), fields x (int, kept) and y (float, kept).
func exPoint() *bmd.Class {
	return &bmd.Class{Index: 2, Super: 1, Loader: 6, InstanceSize: 12,
		Constants: []bmd.Constant{{Index: 3, Type: bmd.Long, Kept: true, Value: math.MaxUint64}},
		Statics: []bmd.Static{{Name: 5, Type: bmd.Object, Value: 4},
			{Name: 5, Type: bmd.Int, Kept: true, Value: uint64(uint32(0xFFFFFFFD))}},
		Fields: []bmd.Field{{Name: 3, Type: bmd.Int, Kept: true}, {Name: 4, Type: bmd.Float, Kept: true}}}
}

// exPointAgain is class 2 dumped again in the second heap dump: statics
// ORIGIN (object 3) and ORIGIN (int 5), no constant.
func exPointAgain() *bmd.Class {
	c := exPoint()
	c.Redump, c.Constants = true, nil
	c.Statics = []bmd.Static{{Name: 5, Type: bmd.Object, Value: 3}, {Name: 5, Type: bmd.Int, Kept: true, Value: 5}}
	return c
}

// TestSpecExamples builds the worked examples of spec/bmd.md §9 and checks
// them against the hex kept here and the hex in the spec: the whole files,
// the annotated blocks of §9.1–9.10 and the table rows and blocks of
// §9.12.
func TestSpecExamples(t *testing.T) {
	spec := exSpec(t)
	sec9 := exSection(t, spec, "## 9. Worked examples")
	sec12 := exSection(t, spec, "### 9.12 ")
	for _, ex := range []struct {
		name  string
		build func(*testing.T) ([]byte, []exPiece)
		want  string
	}{{"file 1", exFile1, exFile1Hex}, {"file 2", exFile2, exFile2Hex}} {
		got, pieces := ex.build(t)
		want := exHex(t, ex.want)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: writer gives\n%s\nwant\n%s", ex.name, exDump(got), exDump(want))
		}
		if exDump(want) != ex.want {
			t.Errorf("%s: the kept hex is not laid out 26 bytes a line", ex.name)
		}
		if !strings.Contains(sec9, "```\n"+ex.want+"\n```") {
			t.Errorf("%s: spec/bmd.md §9 does not show the hex dump\n%s", ex.name, ex.want)
		}
		if !strings.Contains(sec9, fmt.Sprintf("is %d bytes:\n", len(got))) {
			t.Errorf("%s: spec/bmd.md §9 does not say the file is %d bytes", ex.name, len(got))
		}
		bySection := map[string][]byte{}
		var order []string
		for _, p := range pieces {
			switch {
			case p.section == "9.12":
				if !strings.Contains(sec12, "`"+p.hex+"`") {
					t.Errorf("%s: §9.12 has no row with `%s`", ex.name, p.hex)
				}
			case p.section != "":
				if _, ok := bySection[p.section]; !ok {
					order = append(order, p.section)
				}
				bySection[p.section] = append(bySection[p.section], exHex(t, p.hex)...)
			}
		}
		for _, s := range order {
			shown := bytes.Join(exBlocks(exSection(t, spec, "### "+s+" ")), nil)
			if !bytes.Equal(shown, bySection[s]) {
				t.Errorf("%s: §%s shows\n% x\nthe writer gives\n% x", ex.name, s, shown, bySection[s])
			}
		}
	}
	// In §9.12, the header, class 2 and class 2 dumped again are
	// annotated byte by byte in blocks of their own.
	_, pieces := exFile2(t)
	blocks := exBlocks(sec12)
	for _, c := range []struct {
		what  string
		piece int
	}{{"the header", 0}, {"class 2", 15}, {"class 2 dumped again", 26}} {
		found := false
		for _, blk := range blocks {
			found = found || fmt.Sprintf("% x", blk) == pieces[c.piece].hex
		}
		if !found {
			t.Errorf("§9.12 has no block showing %s as %s", c.what, pieces[c.piece].hex)
		}
	}
	// The header with empty metadata but the identifier size (§9.1).
	var b bytes.Buffer
	if w, err := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 8}); err != nil || w.Flush() != nil {
		t.Fatal(err)
	}
	if h := fmt.Sprintf("`% x`", b.Bytes()); !strings.Contains(exSection(t, spec, "### 9.1 "), h) || b.Len() != 22 {
		t.Errorf("§9.1: the 22-byte header is %s (%d bytes)", h, b.Len())
	}
}

// TestSpecRootRowsNameTheirKind: each row of §9.12 that shows a ROOT run
// names, in its call column, the root kind its kind byte is ("JNI GLOBAL
// root" for 01, "UNKNOWN root" for ff…).
func TestSpecRootRowsNameTheirKind(t *testing.T) {
	rows := 0
	for _, line := range strings.Split(exSection(t, exSpec(t), "### 9.12 "), "\n") {
		cols := strings.Split(line, "|")
		if len(cols) < 4 || !strings.HasPrefix(strings.TrimSpace(cols[2]), "`12 ") {
			continue
		}
		b := exHex(t, strings.Trim(strings.TrimSpace(cols[2]), "`"))
		kind := strings.TrimPrefix(hprof.SubTag(b[1]).String(), "ROOT ")
		if rows++; !strings.HasPrefix(strings.TrimSpace(cols[1]), kind+" root,") {
			t.Errorf("§9.12: the row of % x says %q; its kind 0x%02x is %s", b, strings.TrimSpace(cols[1]), b[1], kind)
		}
	}
	if rows != 3 {
		t.Errorf("§9.12 has %d rows of ROOT runs, want 3", rows)
	}
}

// TestSpecFile1IsCrunched: the first file of §9 is what crunch writes for
// the HPROF dump §9 describes.
func TestSpecFile1IsCrunched(t *testing.T) {
	var out bytes.Buffer
	if _, err := crunch.Crunch(bytes.NewReader(exHPROF1(t)), &out, crunch.Options{Tool: "heapcrunch 0.1.0"}); err != nil {
		t.Fatal(err)
	}
	if want, _ := exFile1(t); !bytes.Equal(out.Bytes(), want) {
		t.Errorf("crunch writes\n%s\n§9 shows\n%s", exDump(out.Bytes()), exDump(want))
	}
}

// exRender gives the fields of a record that its kind sets, with its offset.
func exRender(r *bmd.Record) string {
	s := fmt.Sprintf("@%d %s", r.Offset, r.Kind)
	switch r.Kind {
	case bmd.KindString:
		return s + fmt.Sprintf(" id=%d %q", r.ID, r.Text)
	case bmd.KindHashedString:
		return s + fmt.Sprintf(" id=%d len=%d hash=%016x", r.ID, r.Length, r.Hash)
	case bmd.KindArrayName:
		return s + fmt.Sprintf(" id=%d element=%d dims=%d descriptor=%v", r.ID, r.Name, r.Dims, r.Descriptor)
	case bmd.KindLoadClass:
		return s + fmt.Sprintf(" serial=%d class=%d trace=%d name=%d", r.Serial, r.Class, r.Trace, r.Name)
	case bmd.KindTime:
		return s + fmt.Sprintf(" %d", r.Time)
	case bmd.KindTrace:
		return s + fmt.Sprintf(" %d", r.Trace)
	case bmd.KindHeapDump:
		return s + fmt.Sprintf(" segment=%v", r.Segment)
	case bmd.KindHeapInfo:
		return s + fmt.Sprintf(" type=%d name=%d", r.HeapType, r.Name)
	case bmd.KindClass:
		d := r.Def
		return s + fmt.Sprintf(" id=%d index=%d redump=%v trace=%d super=%d links=%d,%d,%d,%d,%d size=%d constants=%v statics=%v fields=%v",
			r.ID, d.Index, d.Redump, d.StackTrace, d.Super, d.Loader, d.Signers, d.ProtectionDomain, d.Reserved1, d.Reserved2,
			d.InstanceSize, d.Constants, d.Statics, d.Fields)
	case bmd.KindPlaceClasses:
		return s + fmt.Sprintf(" first=%d n=%d", r.ID, r.Length)
	case bmd.KindObjectID:
		return s + fmt.Sprintf(" id=%d", r.ID)
	case bmd.KindInstance:
		return s + fmt.Sprintf(" id=%d trace=%d class=%d values=%v", r.ID, r.Trace, r.Class, r.Values)
	case bmd.KindObjectArray:
		return s + fmt.Sprintf(" id=%d trace=%d class=%d n=%d elems=%v", r.ID, r.Trace, r.Class, r.Count, r.Elements)
	case bmd.KindPrimitiveArray, bmd.KindPrimitiveNoData:
		return s + fmt.Sprintf(" id=%d trace=%d type=%d n=%d", r.ID, r.Trace, r.Type, r.Count)
	case bmd.KindRoot:
		return s + fmt.Sprintf(" kind=%02x object=%d thread=%d frame=%d jni=%d trace=%d", r.Tag, r.Object, r.Thread, r.Frame, r.JNIRef, r.Trace)
	}
	return s
}

func exReadAll(t *testing.T, file []byte) (bmd.Metadata, []string) {
	t.Helper()
	r, err := bmd.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	var recs []string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %q: %v", recs, err)
		}
		recs = append(recs, exRender(rec))
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("Next after END: %v, want io.EOF", err)
	}
	return r.Metadata(), recs
}

// TestSpecExamplesRead reads the §9 files back and checks every record and
// its offset in the file.
func TestSpecExamplesRead(t *testing.T) {
	file1, _ := exFile1(t)
	meta, recs := exReadAll(t, file1)
	wantMeta := bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.3", IDSize: 4, Timestamp: 1700000000000,
		Hash: bmd.HashXX64, Tool: "heapcrunch 0.1.0", Objects: 3, Classes: 1, Strings: 2, ClassesPlaced: true, Blocks: true}
	if !reflect.DeepEqual(meta, wantMeta) {
		t.Errorf("file 1 metadata %+v, want %+v", meta, wantMeta)
	}
	exCompare(t, recs, []string{
		"@78 HASHED STRING id=1 len=6 hash=9f11ff87b1bddd4f",
		"@89 HASHED STRING id=2 len=6 hash=412b1a0509e5fcf4",
		"@98 CLASS id=1 index=1 redump=false trace=0 super=0 links=4,0,0,0,0 size=8 constants=[] statics=[] fields=[{1 2 true} {2 10 false}]",
		"@115 HEAP DUMP segment=true",
		"@117 PRIMITIVE ARRAY id=2 trace=0 type=10 n=5",
		"@120 PLACE CLASSES first=1 n=1",
		"@122 INSTANCE id=3 trace=0 class=1 values=[2 0]",
		"@125 ROOT kind=03 object=2 thread=1 frame=4294967295 jni=0 trace=0",
		"@131 ROOT kind=03 object=3 thread=1 frame=0 jni=0 trace=0",
		"@134 HEAP DUMP END",
		"@135 END",
	})
	if xxhash.Sum64String("parent") != 0x9f11ff87b1bddd4f || xxhash.Sum64String("weight") != 0x412b1a0509e5fcf4 {
		t.Error("the hashes of §9.3 are not xxhash64 of the names")
	}

	file2, _ := exFile2(t)
	meta, recs = exReadAll(t, file2)
	if want := (bmd.Metadata{IDSize: 8, Objects: 7, Classes: 2, Strings: 7, Blocks: true, Labels: []string{"app=com.example"}}); !reflect.DeepEqual(meta, want) {
		t.Errorf("file 2 metadata %+v, want %+v", meta, want)
	}
	if v, ok := meta.Label("app"); !ok || v != "com.example" {
		t.Errorf("file 2 label app = %q, %v", v, ok)
	}
	exCompare(t, recs, []string{
		`@41 STRING id=1 "java.lang.Object"`,
		`@60 STRING id=2 "com.example.Point"`,
		`@80 STRING id=3 "x"`,
		`@84 STRING id=4 "y"`,
		`@88 STRING id=5 "ORIGIN"`,
		"@97 ARRAY NAME id=6 element=2 dims=1 descriptor=false",
		`@100 STRING id=7 "ORIGINAL"`,
		"@105 LOAD CLASS serial=1 class=1 trace=0 name=1",
		"@110 LOAD CLASS serial=2 class=2 trace=0 name=2",
		"@115 TIME 7",
		"@117 HEAP DUMP segment=false",
		"@119 HEAP INFO type=65 name=1",
		"@122 CLASS id=1 index=1 redump=false trace=0 super=0 links=0,0,0,0,0 size=0 constants=[] statics=[] fields=[]",
		"@135 CLASS id=2 index=2 redump=false trace=0 super=1 links=6,0,0,0,0 size=12 constants=[{3 11 true 18446744073709551615}] " +
			"statics=[{5 2 true 4} {5 10 true 4294967293}] fields=[{3 10 true} {4 6 true}]",
		"@161 TRACE 5",
		"@163 INSTANCE id=3 trace=5 class=2 values=[4294967293 1069547520]",
		"@170 OBJECT ARRAY id=4 trace=5 class=9 n=3 elems=[0 3 3]",
		"@177 OBJECT ARRAY id=5 trace=5 class=2 n=1 elems=[4]",
		"@181 PRIMITIVE ARRAY NODATA id=6 trace=5 type=8 n=300",
		"@185 ROOT kind=01 object=4 thread=0 frame=0 jni=77 trace=0",
		"@191 ROOT kind=08 object=3 thread=2 frame=0 jni=0 trace=9",
		"@197 ROOT kind=ff object=6 thread=0 frame=0 jni=0 trace=0",
		"@201 HEAP DUMP END",
		"@202 HEAP DUMP segment=false",
		"@204 CLASS id=2 index=2 redump=true trace=0 super=1 links=6,0,0,0,0 size=12 constants=[] " +
			"statics=[{5 2 true 3} {5 10 true 5}] fields=[{3 10 true} {4 6 true}]",
		"@227 OBJECT ID id=3",
		"@229 INSTANCE id=3 trace=5 class=2 values=[4 1069547520]",
		"@236 OBJECT ID id=7",
		"@238 PRIMITIVE ARRAY id=7 trace=5 type=10 n=2",
		"@241 HEAP DUMP END",
		"@242 END",
	})
	if len(file2) != 253 {
		t.Errorf("file 2 is %d bytes", len(file2))
	}
}

// exHPROFRecords renders the records and sub-records of an HPROF file.
func exHPROFRecords(t *testing.T, b []byte) []string {
	t.Helper()
	r, err := hprof.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	idSize := r.IDSize()
	id := func(b []byte) uint64 {
		if idSize == 4 {
			return uint64(binary.BigEndian.Uint32(b))
		}
		return binary.BigEndian.Uint64(b)
	}
	out := []string{fmt.Sprintf("%s, %d-byte IDs, %d", r.Header().Version, idSize, r.Header().Timestamp)}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		s := rec.Tag.String()
		if rec.Time != 0 {
			s += fmt.Sprintf(" (time %d)", rec.Time)
		}
		switch {
		case rec.Tag == hprof.TagString:
			body, _ := r.Body()
			s += fmt.Sprintf(" 0x%x %q", id(body), body[idSize:])
		case rec.Tag == hprof.TagLoadClass:
			body, _ := r.Body()
			s += fmt.Sprintf(" serial %d class 0x%x name 0x%x", binary.BigEndian.Uint32(body), id(body[4:]), id(body[8+idSize:]))
		case rec.Tag.IsHeapDump():
			out = append(out, s)
			var sub hprof.SubRecord
			for {
				err := r.NextSub(&sub)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				s := "  " + sub.Tag.String()
				switch sub.Tag {
				case hprof.SubClassDump:
					c := sub.Class
					s += fmt.Sprintf(" 0x%x super 0x%x loader 0x%x size %d constants %v statics %v fields %v", c.ID, c.Super, c.Loader, c.InstanceSize, c.Constants, c.Statics, c.Fields)
				case hprof.SubInstanceDump:
					s += fmt.Sprintf(" 0x%x class 0x%x trace %d data % x", sub.ID, sub.ClassID, sub.StackTrace, sub.Data)
				case hprof.SubObjectArrayDump:
					s += fmt.Sprintf(" 0x%x class 0x%x trace %d elements %#x", sub.ID, sub.ClassID, sub.StackTrace, sub.Elements)
				case hprof.SubPrimitiveArrayDump, hprof.SubPrimitiveArrayNoData:
					s += fmt.Sprintf(" 0x%x trace %d %d × type %d", sub.ID, sub.StackTrace, sub.Length, sub.ElemType)
				case hprof.SubHeapDumpInfo:
					s += fmt.Sprintf(" type 0x%x name 0x%x", sub.HeapType, sub.HeapName)
				case hprof.SubRootJNIGlobal:
					s += fmt.Sprintf(" 0x%x jni 0x%x", sub.ID, sub.JNIRef)
				case hprof.SubRootJavaFrame, hprof.SubRootJNILocal:
					s += fmt.Sprintf(" 0x%x thread %d frame %d", sub.ID, sub.Thread, int32(sub.Frame))
				case hprof.SubRootThreadObject:
					s += fmt.Sprintf(" 0x%x thread %d trace %d", sub.ID, sub.Thread, sub.StackTrace)
				default:
					s += fmt.Sprintf(" 0x%x", sub.ID)
				}
				out = append(out, s)
			}
			continue
		}
		out = append(out, s)
	}
}

// TestSpecExamplesDecrunched: what §9.11 and §9.12 say decrunch writes for
// the two files.
func TestSpecExamplesDecrunched(t *testing.T) {
	for _, c := range []struct {
		build func(*testing.T) ([]byte, []exPiece)
		want  []string
	}{
		{exFile1, []string{
			"JAVA PROFILE 1.0.3, 4-byte IDs, 1700000000000",
			`STRING 0xc "unknown$9f11ff87b1bddd4f"`,
			`STRING 0x14 "unknown$412b1a0509e5fcf4"`,
			"HEAP DUMP SEGMENT",
			"  PRIMITIVE ARRAY DUMP 0x10 trace 0 5 × type 10",
			"  CLASS DUMP 0x8 super 0x0 loader 0x20 size 8 constants [] statics [] fields [{12 object} {20 int}]",
			"  INSTANCE DUMP 0x18 class 0x8 trace 0 data 00 00 00 10 00 00 00 00",
			"  ROOT JAVA FRAME 0x10 thread 1 frame -1",
			"  ROOT JAVA FRAME 0x18 thread 1 frame 0",
			"HEAP DUMP END",
		}},
		{exFile2, []string{
			"JAVA PROFILE 1.0.2, 8-byte IDs, 0",
			`STRING 0xc "java.lang.Object"`,
			`STRING 0x14 "com.example.Point"`,
			`STRING 0x1c "x"`,
			`STRING 0x24 "y"`,
			`STRING 0x2c "ORIGIN"`,
			`STRING 0x34 "com.example.Point[]"`,
			`STRING 0x3c "ORIGINAL"`,
			"LOAD CLASS serial 1 class 0x8 name 0xc",
			"LOAD CLASS serial 2 class 0x10 name 0x14",
			"HEAP DUMP (time 7)",
			"  HEAP DUMP INFO type 0x41 name 0xc",
			"  CLASS DUMP 0x8 super 0x0 loader 0x0 size 0 constants [] statics [] fields []",
			"  CLASS DUMP 0x10 super 0x8 loader 0x30 size 12 constants [{3 long 18446744073709551615}] statics [{44 object 32} {44 int 4294967293}] fields [{28 int} {36 float}]",
			"  INSTANCE DUMP 0x18 class 0x10 trace 5 data ff ff ff fd 3f c0 00 00",
			"  OBJECT ARRAY DUMP 0x20 class 0x48 trace 5 elements [0x0 0x18 0x18]",
			"  OBJECT ARRAY DUMP 0x28 class 0x10 trace 5 elements [0x20]",
			"  PRIMITIVE ARRAY NODATA 0x30 trace 5 300 × type 8",
			"  ROOT JNI GLOBAL 0x20 jni 0x4d",
			"  ROOT THREAD OBJECT 0x18 thread 2 trace 9",
			"  ROOT UNKNOWN 0x30",
			"HEAP DUMP END (time 7)",
			"HEAP DUMP (time 7)",
			"  CLASS DUMP 0x10 super 0x8 loader 0x30 size 12 constants [] statics [{44 object 24} {44 int 5}] fields [{28 int} {36 float}]",
			"  INSTANCE DUMP 0x18 class 0x10 trace 5 data 00 00 00 04 3f c0 00 00",
			"  PRIMITIVE ARRAY DUMP 0x38 trace 5 2 × type 10",
			"HEAP DUMP END (time 7)",
		}},
	} {
		file, _ := c.build(t)
		var out bytes.Buffer
		if _, err := decrunch.Decrunch(bytes.NewReader(file), &out, decrunch.Options{}); err != nil {
			t.Fatal(err)
		}
		exCompare(t, exHPROFRecords(t, out.Bytes()), c.want)
	}
}

package bmd_test

import (
	"bytes"
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
)

// The worked examples of spec/bmd.md §9, built with the Writer, checked
// byte for byte against the hex kept here and against the hex printed in
// the spec, and read back record by record.

// exFile1Hex is the complete file of §9, as printed there.
const exFile1Hex = `02 41 0a 12 4a 41 56 41 20 50 52 4f 46 49 4c 45 20 31 2e 30 2e 33 10 04 18 80
d0 95 ff bc 31 22 08 78 78 68 61 73 68 36 34 32 10 68 65 61 70 63 72 75 6e 63
68 20 30 2e 31 2e 30 38 03 40 01 48 02 50 01 02 02 06 4f dd bd b1 87 ff 11 9f
06 f4 fc e5 09 05 1a 2b 41 0d 00 00 00 00 00 00 00 08 00 00 02 02 05 02 14 0b
01 10 0a 05 16 01 0e 01 02 12 03 02 04 01 00 02 01 01 0c 15 03 02`

// exFile2Hex is the second file of §9.11, as printed there.
const exFile2Hex = `02 0a 10 08 18 00 38 06 40 02 48 07 01 00 10 6a 61 76 61 2e 6c 61 6e 67 2e 4f
62 6a 65 63 74 01 00 11 63 6f 6d 2e 65 78 61 6d 70 6c 65 2e 50 6f 69 6e 74 01
00 01 78 01 00 01 79 01 00 06 4f 52 49 47 49 4e 17 02 02 01 06 02 41 4c 03 02
02 00 02 03 02 02 00 02 0a 07 0b 00 13 41 01 0d 00 00 00 00 00 00 00 00 00 00
00 0d 00 02 0c 00 00 00 00 0c 01 03 17 01 02 06 05 05 00 15 05 02 03 15 02 0d
14 05 0e 02 05 00 00 c0 3f 0f 00 0b 03 00 02 02 0f 02 01 02 11 08 ac 02 12 01
01 08 9a 01 12 08 01 01 02 09 12 ff 01 06 15 06 07`

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

// exWriter writes through a bmd.Writer and cuts what it wrote into pieces.
type exWriter struct {
	t      *testing.T
	out    bytes.Buffer
	w      *bmd.Writer
	pieces [][]byte
}

// cut flushes and keeps what was written since the previous cut as one
// piece, or as several when split at the given offsets. A pending run
// (hashed strings, roots) is written by the next record only.
func (e *exWriter) cut(splits ...int) {
	e.t.Helper()
	if err := e.w.Flush(); err != nil {
		e.t.Fatal(err)
	}
	b := append([]byte(nil), e.out.Bytes()...)
	e.out.Reset()
	from := 0
	for _, to := range append(splits, len(b)) {
		e.pieces = append(e.pieces, b[from:to])
		from = to
	}
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

func newExWriter(t *testing.T, m *bmd.Metadata) *exWriter {
	e := &exWriter{t: t}
	w, err := bmd.NewWriter(&e.out, m)
	if err != nil {
		t.Fatal(err)
	}
	e.w = w
	return e
}

// exFile1 writes the complete file of §9: what crunch writes for an HPROF
// heap dump segment holding an int[5], then the CLASS DUMP of a class with
// fields parent (object) and weight (int), then an instance of it, then two
// JAVA FRAME roots (instance, then array). Each piece is shown in a section.
func exFile1(t *testing.T) (file []byte, pieces []exPiece) {
	e := newExWriter(t, &bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.3", IDSize: 4,
		Timestamp: 1700000000000, Hash: bmd.HashXX64, Tool: "heapcrunch 0.1.0",
		Objects: 3, Classes: 1, Strings: 2, ClassesPlaced: true})
	e.cut()
	s1 := e.id(e.w.HashedString(6, xxhash.Sum64String("parent"))) // string 1
	s2 := e.id(e.w.HashedString(6, xxhash.Sum64String("weight"))) // string 2
	cls := e.id(e.w.Class(&bmd.Class{InstanceSize: 8, Fields: []bmd.Field{
		{Name: s1, Type: bmd.Object, Kept: true}, {Name: s2, Type: bmd.Int}}})) // object 1
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
	e.ok(e.w.Close())
	e.cut()
	if s1 != 1 || s2 != 2 || cls != 1 || arr != 2 || inst != 3 {
		t.Fatalf("IDs: strings %d %d, class %d, array %d, instance %d", s1, s2, cls, arr, inst)
	}
	sections := []string{"9.1", "9.2", "9.3", "9.4", "9.5", "9.6", "9.7", "9.8", "9.9", "9.9"}
	if len(e.pieces) != len(sections) {
		t.Fatalf("%d pieces for %d sections", len(e.pieces), len(sections))
	}
	for i, b := range e.pieces {
		file = append(file, b...)
		pieces = append(pieces, exPiece{sections[i], fmt.Sprintf("% x", b)})
	}
	return file, pieces
}

// exFile2 writes the second file of §9.11 (8-byte IDs, no PLACE CLASSES).
// Every piece but the header and four of the strings has a table row there.
func exFile2(t *testing.T) (file []byte, pieces []exPiece) {
	e := newExWriter(t, &bmd.Metadata{IDSize: 8, Objects: 6, Classes: 2, Strings: 7})
	e.cut()
	for i, s := range []string{"java.lang.Object", "com.example.Point", "x", "y", "ORIGIN"} {
		if id := e.id(e.w.String([]byte(s))); id != uint64(i+1) {
			t.Fatalf("string %q has ID %d", s, id)
		}
		e.cut()
	}
	if id := e.id(e.w.ArrayName(2, 1, false)); id != 6 { // "com.example.Point[]"
		t.Fatalf("array name has ID %d", id)
	}
	e.cut()
	if id := e.id(e.w.String([]byte("ORIGINAL"))); id != 7 { // shares "ORIGIN" with string 5
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
	if c := e.id(e.w.Class(&bmd.Class{})); c != 1 {
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
	e.ok(e.w.Close())
	e.cut(6, 12, 16)
	for i, b := range e.pieces {
		file = append(file, b...)
		sec := "9.11"
		if i <= 5 && i != 3 { // the header, and the strings but "x"
			sec = ""
		}
		pieces = append(pieces, exPiece{sec, fmt.Sprintf("% x", b)})
	}
	return file, pieces
}

// exPoint is class 2 of §9.11: super class 1, loader object 6, instance
// size 12, a kept long constant -1, statics ORIGIN (object 4) and ORIGIN
// (int -3, kept), fields x (int, kept) and y (float, kept).
func exPoint() *bmd.Class {
	return &bmd.Class{Super: 1, Loader: 6, InstanceSize: 12,
		Constants: []bmd.Constant{{Index: 3, Type: bmd.Long, Kept: true, Value: math.MaxUint64}},
		Statics: []bmd.Static{{Name: 5, Type: bmd.Object, Value: 4},
			{Name: 5, Type: bmd.Int, Kept: true, Value: uint64(uint32(0xFFFFFFFD))}},
		Fields: []bmd.Field{{Name: 3, Type: bmd.Int, Kept: true}, {Name: 4, Type: bmd.Float, Kept: true}}}
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

// TestSpecExamples builds the worked examples of spec/bmd.md §9 and checks
// them against the hex kept here and the hex in the spec: the whole files,
// the annotated blocks of §9.1–9.9 and the table rows of §9.11.
func TestSpecExamples(t *testing.T) {
	spec := exSpec(t)
	sec9 := exSection(t, spec, "## 9. Worked examples")
	sec11 := exSection(t, spec, "### 9.11 ")
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
			case p.section == "9.11":
				if !strings.Contains(sec11, "`"+p.hex+"`") {
					t.Errorf("%s: §9.11 has no row with `%s`", ex.name, p.hex)
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
	// Class 2 of §9.11, annotated byte by byte in a block of its own.
	var b bytes.Buffer
	w, err := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	w.LoadClass(2, 2, 0, 2) // the last name before the class is 2
	w.Class(&bmd.Class{})
	w.Flush()
	n := b.Len()
	if _, err := w.Class(exPoint()); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	class := b.Bytes()[n:]
	found := false
	for _, blk := range exBlocks(sec11) {
		found = found || bytes.Equal(blk, class)
	}
	if !found {
		t.Errorf("§9.11 has no block showing class 2 as % x", class)
	}
	// The header with empty metadata but the identifier size (§9.1).
	b.Reset()
	if w, err := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 8}); err != nil || w.Flush() != nil {
		t.Fatal(err)
	}
	if h := fmt.Sprintf("`% x`", b.Bytes()); !strings.Contains(exSection(t, spec, "### 9.1 "), h) || b.Len() != 12 {
		t.Errorf("§9.1: the 12-byte header is %s (%d bytes)", h, b.Len())
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
		return s + fmt.Sprintf(" id=%d trace=%d super=%d links=%d,%d,%d,%d,%d size=%d constants=%v statics=%v fields=%v",
			r.ID, d.StackTrace, d.Super, d.Loader, d.Signers, d.ProtectionDomain, d.Reserved1, d.Reserved2,
			d.InstanceSize, d.Constants, d.Statics, d.Fields)
	case bmd.KindPlaceClasses:
		return s + fmt.Sprintf(" first=%d n=%d", r.ID, r.Length)
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

// TestSpecExamplesRead reads the §9 files back and checks every record.
func TestSpecExamplesRead(t *testing.T) {
	file1, _ := exFile1(t)
	meta, recs := exReadAll(t, file1)
	wantMeta := bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.3", IDSize: 4, Timestamp: 1700000000000,
		Hash: bmd.HashXX64, Tool: "heapcrunch 0.1.0", Objects: 3, Classes: 1, Strings: 2, ClassesPlaced: true}
	if !reflect.DeepEqual(meta, wantMeta) {
		t.Errorf("file 1 metadata %+v, want %+v", meta, wantMeta)
	}
	exCompare(t, recs, []string{
		"@67 HASHED STRING id=1 len=6 hash=9f11ff87b1bddd4f",
		"@78 HASHED STRING id=2 len=6 hash=412b1a0509e5fcf4",
		"@87 CLASS id=1 trace=0 super=0 links=0,0,0,0,0 size=8 constants=[] statics=[] fields=[{1 2 true} {2 10 false}]",
		"@103 HEAP DUMP segment=true",
		"@105 PRIMITIVE ARRAY id=2 trace=0 type=10 n=5",
		"@108 PLACE CLASSES first=1 n=1",
		"@110 INSTANCE id=3 trace=0 class=1 values=[2 0]",
		"@113 ROOT kind=03 object=2 thread=1 frame=4294967295 jni=0 trace=0",
		"@119 ROOT kind=03 object=3 thread=1 frame=0 jni=0 trace=0",
		"@122 HEAP DUMP END",
		"@123 END",
	})
	if xxhash.Sum64String("parent") != 0x9f11ff87b1bddd4f || xxhash.Sum64String("weight") != 0x412b1a0509e5fcf4 {
		t.Error("the hashes of §9.2 are not xxhash64 of the names")
	}

	file2, _ := exFile2(t)
	meta, recs = exReadAll(t, file2)
	if want := (bmd.Metadata{IDSize: 8, Objects: 6, Classes: 2, Strings: 7}); !reflect.DeepEqual(meta, want) {
		t.Errorf("file 2 metadata %+v, want %+v", meta, want)
	}
	exCompare(t, recs, []string{
		`@12 STRING id=1 "java.lang.Object"`,
		`@31 STRING id=2 "com.example.Point"`,
		`@51 STRING id=3 "x"`,
		`@55 STRING id=4 "y"`,
		`@59 STRING id=5 "ORIGIN"`,
		"@68 ARRAY NAME id=6 element=2 dims=1 descriptor=false",
		`@71 STRING id=7 "ORIGINAL"`,
		"@76 LOAD CLASS serial=1 class=1 trace=0 name=1",
		"@81 LOAD CLASS serial=2 class=2 trace=0 name=2",
		"@86 TIME 7",
		"@88 HEAP DUMP segment=false",
		"@90 HEAP INFO type=65 name=1",
		"@93 CLASS id=1 trace=0 super=0 links=0,0,0,0,0 size=0 constants=[] statics=[] fields=[]",
		"@105 CLASS id=2 trace=0 super=1 links=6,0,0,0,0 size=12 constants=[{3 11 true 18446744073709551615}] " +
			"statics=[{5 2 true 4} {5 10 true 4294967293}] fields=[{3 10 true} {4 6 true}]",
		"@130 TRACE 5",
		"@132 INSTANCE id=3 trace=5 class=2 values=[4294967293 1069547520]",
		"@139 OBJECT ARRAY id=4 trace=5 class=9 n=3 elems=[0 3 3]",
		"@146 OBJECT ARRAY id=5 trace=5 class=2 n=1 elems=[4]",
		"@150 PRIMITIVE ARRAY NODATA id=6 trace=5 type=8 n=300",
		"@154 ROOT kind=01 object=4 thread=0 frame=0 jni=77 trace=0",
		"@160 ROOT kind=08 object=3 thread=2 frame=0 jni=0 trace=9",
		"@166 ROOT kind=ff object=6 thread=0 frame=0 jni=0 trace=0",
		"@170 END",
	})
	if len(file2) != 173 {
		t.Errorf("file 2 is %d bytes", len(file2))
	}
}

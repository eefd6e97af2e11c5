package names_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/heapcrunch/heapcrunch/apkstrings"
	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/decrunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/names"
)

// pipelineSeeds are names a VM writes (modified UTF-8) and malformed ones:
// the review's ED C0 41 9F, on which crunch and apkstrings once disagreed.
var pipelineSeeds = []string{
	"mListener",
	"com.example.MainActivity",
	"com/example/Outer$Inner",
	"été",
	"名前",
	"a\xC0\x80b",                       // NUL as C0 80
	"a\x00b",                           // a plain NUL (class files only: it ends a DEX string)
	"\xED\xA0\xBD\xED\xB8\x80x",        // U+1F600 as a surrogate pair
	"\xF0\x9F\x98\x80x",                // U+1F600 as standard UTF-8
	"\xED\xAF\xBF\xED\xBF\xBF",         // U+10FFFF
	"\xED\xA0\xBDx",                    // a lone high surrogate
	"\xED\xB8\x80",                     // a lone low surrogate
	"\xED\xC0\x41\x9F",                 // ED that starts no sequence: the A stays
	"\xEDAB",                           // likewise
	"\xE2\x82A",                        // a truncated sequence before A
	"\xC0\xAF",                         // an overlong slash
	"\xFF\xFE",                         // bytes that never occur in UTF-8
	"com.example.Foo[]",                // an array spelling: an ARRAY NAME as a class name
	"value",                            // a name analyzers read: in the clear
	"unknown$0123456789abcdef",         // a placeholder: keeps its hash, length 0
	"\xED\xA0\xBD\xED\xA0\xBD\xED\xB8", // a pair cut short after another high surrogate
}

// FuzzNamePipelines is the differential test of issue 11: a name, any
// bytes, goes through both real pipelines. (a) It is the name of a field
// and of a class of a small HPROF dump, which crunch turns into BMD
// version 2 and version 1; the hashes and lengths are read back from the
// files. (b) The same bytes are a DEX string_data_item and a class-file
// CONSTANT_Utf8, read by apkstrings into a decrunch.NameTable. The table
// must recover from (a)'s hash and length exactly the name (b) read, and
// that name must be names.Normalize of the bytes.
func FuzzNamePipelines(f *testing.F) {
	for _, s := range pipelineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, name []byte) {
		if len(name) > 4096 {
			return
		}
		want := string(names.Normalize(name))

		// (b) The name read from the app's code.
		table := decrunch.NewNameTable()
		add := table.Source("code")
		var fromCode []string
		emit := func(s string) { fromCode = append(fromCode, s); add(s) }
		if _, err := apkstrings.ReadClass(classFile(name), emit); err != nil {
			t.Fatalf("ReadClass: %v", err)
		}
		if bytes.IndexByte(name, 0) < 0 { // NUL ends a DEX string
			dex := dexFile(name)
			if _, err := apkstrings.ReadDEX(bytes.NewReader(dex), int64(len(dex)), emit); err != nil {
				t.Fatalf("ReadDEX: %v", err)
			}
		}
		for _, s := range fromCode {
			if s != want {
				t.Fatalf("apkstrings read % X as %q, names.Normalize gives %q", name, s, want)
			}
		}

		// (a) The name in a heap dump, crunched.
		dump := tinyDump(t, name)
		var v2, v1 bytes.Buffer
		if _, err := crunch.Crunch(bytes.NewReader(dump), &v2, crunch.Options{}); err != nil {
			t.Fatalf("Crunch: %v", err)
		}
		if _, err := crunch.CrunchV1(bytes.NewReader(dump), &v1, crunch.Options{}, nil); err != nil {
			t.Fatalf("CrunchV1: %v", err)
		}

		check := func(version, use string, n stored, lookup decrunch.Names, hash uint64) {
			t.Helper()
			switch {
			case n.clear:
				if n.text != string(name) {
					t.Fatalf("%s %s: clear text %q, want % X", version, use, n.text, name)
				}
			case n.length == 0:
				// A placeholder keeps its own hash (spec §5.2): not a hash of the text.
				if len(name) != len("unknown$0123456789abcdef") {
					t.Fatalf("%s %s: % X hashed with length 0", version, use, name)
				}
			default:
				if n.hash != hash || n.length != uint64(len(want)) {
					t.Fatalf("%s %s: hash %x length %d, names gives %x %d", version, use, n.hash, n.length, hash, len(want))
				}
				got, ok := lookup.Lookup(n.hash, n.length)
				if !ok || got != want {
					t.Fatalf("%s %s: % X not recovered from the code (got %q %v, want %q)", version, use, name, got, ok, want)
				}
			}
		}
		field, class, err := readV2(v2.Bytes())
		if err != nil {
			t.Fatalf("reading the version 2 file: %v", err)
		}
		check("v2", "field name", field, table.ForHash(bmd.HashXX64), names.Hash(name))
		if class != nil { // nil: written as an ARRAY NAME of its element
			check("v2", "class name", *class, table.ForHash(bmd.HashXX64), names.Hash(name))
		}
		field, cls, err := readV1(v1.Bytes())
		if err != nil {
			t.Fatalf("reading the version 1 file: %v", err)
		}
		java := uint64(uint32(names.JavaHash(name)))
		check("v1", "field name", field, table.ForHash(bmd.HashJava), java)
		check("v1", "class name", cls, table.ForHash(bmd.HashJava), java)
	})
}

// TestNamePipelinesHashed: the fuzz target's checks are not vacuous. App
// names, well-formed or not, are hashed in both versions, and the fuzz
// target's seeds pass.
func TestNamePipelinesHashed(t *testing.T) {
	for _, s := range []string{"mListener", "a\xC0\x80b", "\xED\xA0\xBD\xED\xB8\x80x", "\xED\xC0\x41\x9F"} {
		dump := tinyDump(t, []byte(s))
		var v2, v1 bytes.Buffer
		if _, err := crunch.Crunch(bytes.NewReader(dump), &v2, crunch.Options{}); err != nil {
			t.Fatal(err)
		}
		if _, err := crunch.CrunchV1(bytes.NewReader(dump), &v1, crunch.Options{}, nil); err != nil {
			t.Fatal(err)
		}
		f2, c2, err := readV2(v2.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		f1, c1, err := readV1(v1.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		n := uint64(names.Len([]byte(s)))
		if c2 == nil || f2.clear || c2.clear || f1.clear || c1.clear || f2.length != n || c2.length != n || f1.length != n || c1.length != n {
			t.Errorf("%q: not hashed with length %d: v2 %+v %+v, v1 %+v %+v", s, n, f2, c2, f1, c1)
		}
	}
}

// stored is a name as a BMD file holds it.
type stored struct {
	clear  bool
	text   string
	hash   uint64
	length uint64
}

const (
	classA = 0x100 // com.example.A, with one object field named by the fuzzed name
	classB = 0x200 // named by the fuzzed name
	loader = 0x300 // an app class loader (not in the dump): the names are the app's
)

// tinyDump writes an HPROF dump in which name is the name of class A's
// object field (STRING 1) and the name of class B (STRING 2); A has one
// instance.
func tinyDump(t *testing.T, name []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version102, IDSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	enc := w.Encoder()
	for _, r := range []struct {
		tag  hprof.Tag
		body []byte
	}{
		{hprof.TagString, enc.AppendString(nil, 1, name)},
		{hprof.TagString, enc.AppendString(nil, 2, name)},
		{hprof.TagString, enc.AppendString(nil, 3, []byte("com.example.A"))},
		{hprof.TagLoadClass, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 1, ClassID: classA, Name: 3})},
		{hprof.TagLoadClass, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 2, ClassID: classB, Name: 2})},
	} {
		if err := w.WriteRecord(r.tag, 0, r.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.BeginHeapDump(hprof.TagHeapDumpSegment, 0); err != nil {
		t.Fatal(err)
	}
	subs := []hprof.SubRecord{
		{Tag: hprof.SubClassDump, ID: classA, Class: hprof.ClassDump{ID: classA, Loader: loader, InstanceSize: 8,
			Fields: []hprof.Field{{Name: 1, Type: hprof.Object}}}},
		{Tag: hprof.SubClassDump, ID: classB, Class: hprof.ClassDump{ID: classB, Loader: loader}},
		{Tag: hprof.SubInstanceDump, ID: 0x1000, ClassID: classA, Data: make([]byte, 8)},
	}
	for i := range subs {
		if err := w.WriteSub(&subs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.EndHeapDump(); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readV2 returns how a version 2 file holds the name of class A's field
// and the name of class B (nil if it is an ARRAY NAME).
func readV2(file []byte) (field stored, class *stored, err error) {
	r, err := bmd.NewReader(bytes.NewReader(file))
	if err != nil {
		return stored{}, nil, err
	}
	strs := map[uint64]*stored{}
	classNames := map[uint64]uint64{} // class object ID -> name string ID
	var fieldName, classBName uint64
	classes := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return stored{}, nil, err
		}
		switch rec.Kind {
		case bmd.KindString:
			strs[rec.ID] = &stored{clear: true, text: string(rec.Text)}
		case bmd.KindHashedString:
			strs[rec.ID] = &stored{hash: rec.Hash, length: rec.Length}
		case bmd.KindArrayName:
			strs[rec.ID] = nil
		case bmd.KindLoadClass:
			classNames[rec.Class] = rec.Name
		case bmd.KindClass:
			classes++
			if len(rec.Def.Fields) == 1 {
				fieldName = rec.Def.Fields[0].Name
			} else {
				classBName = classNames[rec.ID]
			}
		}
	}
	if classes != 2 || fieldName == 0 || classBName == 0 {
		return stored{}, nil, errors.New("not the two classes of the dump")
	}
	f, ok := strs[fieldName]
	if !ok || f == nil {
		return stored{}, nil, errors.New("no string for the field name")
	}
	c, ok := strs[classBName]
	if !ok {
		return stored{}, nil, errors.New("no string for class B's name")
	}
	return *f, c, nil
}

// readV1 returns how a version 1 file holds the name of class A's field
// and the name of class B.
func readV1(file []byte) (field, class stored, err error) {
	r, err := bmd.NewV1Reader(bytes.NewReader(file))
	if err != nil {
		return stored{}, stored{}, err
	}
	strs := map[uint32]stored{}
	var fieldName, className uint32
	classes := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return stored{}, stored{}, err
		}
		switch rec.Tag {
		case bmd.V1String:
			strs[rec.ID] = stored{clear: true, text: string(rec.Text)}
		case bmd.V1HashedString:
			strs[rec.ID] = stored{hash: uint64(uint32(rec.Hash)), length: uint64(rec.Length)}
		case bmd.V1ClassDefinition:
			classes++
			if len(rec.Class.Fields) == 1 {
				fieldName = uint32(rec.Class.Fields[0].Name)
			} else {
				className = rec.Class.Name
			}
		}
	}
	f, okf := strs[fieldName]
	c, okc := strs[className]
	if classes != 2 || !okf || !okc {
		return stored{}, stored{}, errors.New("not the two classes of the dump")
	}
	return f, c, nil
}

// dexFile makes a minimal DEX file whose string table holds s (raw
// modified UTF-8, without NUL): only the header fields a reader of the
// string table needs are set.
func dexFile(s []byte) []byte {
	const hdr, table = 0x70, 0x70
	out := make([]byte, table+4)
	copy(out, "dex\n035\x00")
	le := binary.LittleEndian
	le.PutUint32(out[table:], uint32(len(out)))
	out = binary.AppendUvarint(out, uint64(len(s))) // utf16_size (not checked)
	out = append(out, s...)
	out = append(out, 0)
	le.PutUint32(out[0x20:], uint32(len(out))) // file_size
	le.PutUint32(out[0x24:], hdr)              // header_size
	le.PutUint32(out[0x28:], 0x12345678)       // endian_tag
	le.PutUint32(out[0x38:], 1)                // string_ids_size
	le.PutUint32(out[0x3C:], table)            // string_ids_off
	return out
}

// classFile makes a minimal class file whose constant pool holds s as its
// one CONSTANT_Utf8.
func classFile(s []byte) []byte {
	b := []byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52, 0, 2, 1}
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	b = append(b, s...)
	return append(b, 0, 0x21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}

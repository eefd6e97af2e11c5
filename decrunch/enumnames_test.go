package decrunch

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/apkstrings"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestEnumNames is the user's flow (crunch with defaults, decrunch with
// the app's own names) on every real dump: each enum constant's name, as
// Shark reads the String (heapstat.EnumNames), must read in the round
// trip as in the original wherever the original's is the name of the
// static field that holds the constant, the one source of it in a BMD
// file; elsewhere (a build that renamed the field) it has no text, as
// every String had before: zeros, or on Android a count of 0.
func TestEnumNames(t *testing.T) {
	more := []string{testutil.Fixture("libuser/libuser.hprof.gz"), testutil.Fixture("obfuscated/obfuscated.hprof.gz"),
		testutil.Fixture("fragment/fragmentleak.hprof.gz")}
	for _, p := range append(layoutInputs(t), more...) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			src := testutil.ReadAll(t, p)
			want, err := heapstat.EnumNames(src)
			if err != nil {
				t.Fatal(err)
			}
			out, st := userFlow(t, src, crunch.Options{})
			got, err := heapstat.EnumNames(out)
			if err != nil {
				t.Fatalf("output does not read back: %v", err)
			}
			same, other := 0, 0
			var bad []string
			for k, w := range want {
				field := k[strings.LastIndexByte(k, '.')+1:]
				g, ok := got[k]
				switch {
				case !ok:
					bad = append(bad, k+": not in the round trip")
				case w == field && g == w:
					same++
				case w != field && strings.Trim(g, "\x00") == "":
					other++ // zeros, or no text (an Android String's count 0)
				default:
					bad = append(bad, k+": "+quote(g)+" where the original has "+quote(w))
				}
			}
			sort.Strings(bad)
			if len(bad) > 0 {
				t.Fatalf("%d of %d constants:\n%s", len(bad), len(want), strings.Join(bad[:min(len(bad), 20)], "\n"))
			}
			if len(got) != len(want) {
				t.Errorf("%d constants in the round trip, %d in the original", len(got), len(want))
			}
			// Constants of the same name share an interned String.
			if st.EnumNames > uint64(same) || same > 0 && st.EnumNames == 0 {
				t.Errorf("Stats.EnumNames %d, %d constants' names written", st.EnumNames, same)
			}
			t.Logf("%d enum constants: %d names written back (%d Strings), %d not the field's name", len(want), same, st.EnumNames, other)
		})
	}
}

// TestEnumNamesMapping: in an app whose build renamed an enum's fields
// (the obfuscated fixture, ProGuard), its constants' names are written
// back where decrunch is given the build's mapping, which names the
// fields as the constants.
func TestEnumNamesMapping(t *testing.T) {
	dir := testutil.Fixture("obfuscated")
	src := testutil.ReadAll(t, filepath.Join(dir, "obfuscated.hprof.gz"))
	m, err := apkstrings.ParseMapping(bytes.NewReader(testutil.ReadAll(t, filepath.Join(dir, "mapping.txt"))))
	if err != nil {
		t.Fatal(err)
	}
	out, st := decrunchBytes(t, crunchBytes(t, src, crunch.Options{}), Options{Names: appNameTable(t, src), Mapping: m})
	got, err := heapstat.EnumNames(out)
	if err != nil {
		t.Fatal(err)
	}
	var level []string
	for k, g := range got {
		i := strings.LastIndexByte(k, '.')
		cls, field := k[:i], k[i+1:]
		if g != field {
			t.Errorf("%s reads %s", k, quote(g))
		}
		if strings.ReplaceAll(cls, "/", ".") == "org.example.lib.Level" {
			level = append(level, g)
		}
	}
	sort.Strings(level)
	if want := []string{"DEBUG", "ERROR", "INFO", "TRACE", "WARN"}; !slices.Equal(level, want) {
		t.Errorf("org.example.lib.Level's constants read %q, want %q", level, want)
	}
	t.Logf("%d constants, %d Strings written back", len(got), st.EnumNames)
}

func quote(s string) string { return "\"" + s + "\"" }

// enumFlavour is a String layout of a VM, as its dumps have it.
type enumFlavour struct {
	name    string
	fields  []string // java.lang.String's instance fields, "value" the array
	elem    hprof.BasicType
	sdk     int64              // android.os.Build$VERSION.SDK_INT, or -1 for none
	count   func(n int) uint32 // the count a String of n ASCII chars has, if String has one
	charFor map[string]bool    // the names whose array is of chars where elem is Byte (ART's uncompressed)
}

var enumFlavours = []enumFlavour{
	{name: "jdk", fields: []string{"value", "coder", "hash"}, elem: hprof.Byte, sdk: -1},
	{name: "dalvik", fields: []string{"count", "hashCode", "offset", "value"}, elem: hprof.Char, sdk: 19, count: func(n int) uint32 { return uint32(n) }},
	{name: "art25", fields: []string{"count", "hash", "value"}, elem: hprof.Char, sdk: 25, count: func(n int) uint32 { return uint32(n) }},
	{name: "art33", fields: []string{"count", "hash", "value"}, elem: hprof.Byte, sdk: 33, count: func(n int) uint32 { return uint32(n) << 1 },
		charFor: map[string]bool{"GREEN": true}},
}

// stringOf returns the array and the String instance (of class
// stringC) of text, at IDs s and arr, as a VM of flavour f makes them: its
// array of f's elements or, with chars, of chars (ART's uncompressed).
func (f enumFlavour) stringOf(enc hprof.BodyEncoder, text string, chars bool, s, arr, stringC uint64) (array, str hprof.SubRecord) {
	elem := f.elem
	if chars {
		elem = hprof.Char
	}
	var elems []byte
	for _, ch := range []byte(text) {
		if elem == hprof.Char {
			elems = append(elems, 0)
		}
		elems = append(elems, ch)
	}
	var data []byte
	for _, n := range f.fields {
		switch n {
		case "value":
			data = enc.AppendID(data, arr)
		case "coder":
			data = append(data, 0) // Latin-1
		case "count":
			n := f.count(len(text))
			if elem == hprof.Char && f.elem == hprof.Byte {
				n |= 1 // ART's uncompressed
			}
			data = binary.BigEndian.AppendUint32(data, n)
		default:
			data = binary.BigEndian.AppendUint32(data, 0)
		}
	}
	return hprof.SubRecord{Tag: hprof.SubPrimitiveArrayDump, ID: arr, ElemType: elem, Length: uint32(len(text)), Data: elems},
		hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: s, ClassID: stringC, Data: data}
}

// enumDump returns an HPROF of an app's enum com.example.Color on the
// String layout of flavour f: RED, whose name String lies before it (its
// array after the String); GREEN, its String and array after it; BLUE, a
// constant with a body (Color$1), its array before its String, before it;
// DEFAULT, an alias of RED; and a static "a" that holds the constant
// named LONGNAME (a field renamed by a build). Each String has the text
// and count a VM gives it.
func enumDump(t *testing.T, f enumFlavour) []byte {
	t.Helper()
	d := newSmallDump(t)
	const (
		object, enum, stringC, color, color1, build, colorArr = 0x1000, 0x1010, 0x1020, 0x1030, 0x1040, 0x1050, 0x1060
	)
	d.loadClasses([]loadedClass{{object, "java.lang.Object"}, {enum, "java.lang.Enum"}, {stringC, "java.lang.String"}, {color, "com.example.Color"},
		{color1, "com.example.Color$1"}, {build, "android.os.Build$VERSION"}, {colorArr, "com.example.Color[]"}})
	// The objects: each name's String, its array, its constant.
	type constant struct {
		name        string
		obj, s, arr uint64
		class       uint64
		statics     []string
	}
	consts := []constant{
		{"RED", 0x2100, 0x2000, 0x2008, color, []string{"RED", "DEFAULT"}},
		{"GREEN", 0x2110, 0x2200, 0x2208, color, []string{"GREEN"}},
		{"BLUE", 0x2120, 0x1f10, 0x1f00, color1, []string{"BLUE"}},
		{"LONGNAME", 0x2130, 0x2300, 0x2308, color, []string{"a"}},
	}
	must(t, d.w.BeginHeapDump(hprof.TagHeapDump, 0))
	strFields := f.stringFields(d.str)
	var statics []hprof.StaticField
	for _, c := range consts {
		for _, n := range c.statics {
			statics = append(statics, hprof.StaticField{Name: d.str(n), Type: hprof.Object, Value: c.obj})
		}
	}
	statics = append(statics, hprof.StaticField{Name: d.str("$VALUES"), Type: hprof.Object, Value: 0x2400})
	app := uint64(0x4000) // the app's class loader: names hashed
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: object}})
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: enum, Super: object, InstanceSize: 8,
		Fields: []hprof.Field{{Name: d.str("name"), Type: hprof.Object}, {Name: d.str("ordinal"), Type: hprof.Int}}}})
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: stringC, Super: object, InstanceSize: 16, Fields: strFields}})
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: color, Super: enum, Loader: app, InstanceSize: 8, Statics: statics}})
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: color1, Super: color, Loader: app, InstanceSize: 8}})
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: colorArr, Super: object, Loader: app}})
	if f.sdk >= 0 {
		d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: build, Super: object,
			Statics: []hprof.StaticField{{Name: d.str("SDK_INT"), Type: hprof.Int, Value: uint64(f.sdk)}}}})
	}
	var objs []hprof.SubRecord
	for i, c := range consts {
		arr, str := f.stringOf(d.enc, c.name, f.charFor[c.name], c.s, c.arr, stringC)
		objs = append(objs, arr, str, hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: c.obj, ClassID: c.class,
			Data: binary.BigEndian.AppendUint32(d.enc.AppendID(nil, c.s), uint32(i))})
	}
	objs = append(objs, hprof.SubRecord{Tag: hprof.SubObjectArrayDump, ID: 0x2400, ClassID: colorArr, Elements: []uint64{0x2100, 0x2110, 0x2120, 0x2130}})
	d.objects(objs)
	d.sub(hprof.SubRecord{Tag: hprof.SubRootStickyClass, ID: color})
	return d.end()
}

// smallDump writes a hand-built HPROF (version 1.0.2, 4-byte IDs) for
// the tests of the names decrunch writes back.
type smallDump struct {
	t   *testing.T
	out bytes.Buffer
	w   *hprof.Writer
	enc hprof.BodyEncoder
	sid map[string]uint64
}

// loadedClass is a class of a smallDump: its ID and name.
type loadedClass struct {
	id   uint64
	name string
}

func newSmallDump(t *testing.T) *smallDump {
	d := &smallDump{t: t, sid: map[string]uint64{}}
	w, err := hprof.NewWriter(&d.out, hprof.Header{Version: hprof.Version102, IDSize: 4, Timestamp: 1})
	if err != nil {
		t.Fatal(err)
	}
	d.w, d.enc = w, w.Encoder()
	return d
}

// str returns the ID of the STRING record of s, written at its first use.
func (d *smallDump) str(s string) uint64 {
	if id, ok := d.sid[s]; ok {
		return id
	}
	id := uint64(0x100 + 8*len(d.sid))
	d.sid[s] = id
	must(d.t, d.w.WriteRecord(hprof.TagString, 0, d.enc.AppendString(nil, id, []byte(s))))
	return id
}

// loadClasses writes a LOAD CLASS record for each class, serials from 1.
func (d *smallDump) loadClasses(classes []loadedClass) {
	for i, c := range classes {
		must(d.t, d.w.WriteRecord(hprof.TagLoadClass, 0, d.enc.AppendLoadClass(nil, hprof.LoadClass{Serial: uint32(i + 1), ClassID: c.id, Name: d.str(c.name)})))
	}
}

// sub writes a sub-record of the heap dump.
// platform writes the class dumps of java.lang.Object (object), of
// java.lang.String (stringC) on the String layout of flavour f, and, where
// f has an API level, of android.os.Build$VERSION (version) with its
// SDK_INT: what every Android-shaped dump of these tests has.
func (d *smallDump) platform(f enumFlavour, object, stringC, version uint64) {
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: object}})
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: stringC, Super: object, InstanceSize: 16, Fields: f.stringFields(d.str)}})
	if f.sdk >= 0 {
		d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: version, Super: object,
			Statics: []hprof.StaticField{{Name: d.str("SDK_INT"), Type: hprof.Int, Value: uint64(f.sdk)}}}})
	}
}

func (d *smallDump) sub(s hprof.SubRecord) { must(d.t, d.w.WriteSub(&s)) }

// objects writes the object sub-records objs in the order of their IDs,
// as a VM whose objects' IDs are addresses dumps them.
func (d *smallDump) objects(objs []hprof.SubRecord) {
	slices.SortFunc(objs, func(a, b hprof.SubRecord) int { return cmp.Compare(a.ID, b.ID) })
	for _, o := range objs {
		d.sub(o)
	}
}

// end closes the heap dump and returns the file.
func (d *smallDump) end() []byte {
	must(d.t, d.w.EndHeapDump())
	must(d.t, d.w.Flush())
	return d.out.Bytes()
}

// stringFields returns java.lang.String's instance fields in flavour f,
// their names' IDs from str.
func (f enumFlavour) stringFields(str func(string) uint64) []hprof.Field {
	var fields []hprof.Field
	for _, n := range f.fields {
		t := hprof.Int
		switch n {
		case "value":
			t = hprof.Object
		case "coder":
			t = hprof.Byte
		}
		fields = append(fields, hprof.Field{Name: str(n), Type: t})
	}
	return fields
}

// TestEnumNamesLayouts: on the String layouts of a JDK, Dalvik and ART
// before and after Android 8 (enumDump), in every order of a constant, its
// String and its array, each constant's name String reads after a round
// trip as in the original, its count (where String has one) as the VM
// gave it; the constant whose static was renamed keeps no text (its
// String's count 0 on Android, where Shark then reads the empty string).
func TestEnumNamesLayouts(t *testing.T) {
	for _, f := range enumFlavours {
		t.Run(f.name, func(t *testing.T) {
			src := enumDump(t, f)
			want, err := heapstat.EnumStrings(src)
			if err != nil {
				t.Fatal(err)
			}
			out, st := userFlow(t, src, crunch.Options{})
			got, err := heapstat.EnumStrings(out)
			if err != nil {
				t.Fatalf("output does not read back: %v", err)
			}
			if len(want) != 5 || len(got) != 5 {
				t.Fatalf("%d constants' statics in the original, %d in the round trip, want 5", len(want), len(got))
			}
			for k, w := range want {
				g := got[k]
				if strings.HasSuffix(k, ".a") {
					if w.Text != "LONGNAME" || strings.Trim(g.Text, "\x00") != "" || g.Fields["count"] != 0 {
						t.Errorf("%s: %q (count %d), want no text; the original %q", k, g.Text, g.Fields["count"], w.Text)
					}
					continue
				}
				if g.Text != w.Text || g.Fields["count"] != w.Fields["count"] || g.Fields["offset"] != 0 {
					t.Errorf("%s: %q (count %d), want %q (count %d)", k, g.Text, g.Fields["count"], w.Text, w.Fields["count"])
				}
			}
			if st.EnumNames != 3 {
				t.Errorf("Stats.EnumNames %d, want 3 (RED and DEFAULT share a String)", st.EnumNames)
			}
		})
	}
}

// TestEnumFuzzSeeds: the seeds of FuzzDecrunch in testdata/fuzz that hold
// enum constants (the BMD files of enumDump's dumps, which the dumps
// sampled for the other seeds lack) decrunch, and write names back: they
// lead the fuzzer into enumnames.go. With ENUM_FUZZ_SEEDS=1 it writes
// them first, from enumDump as it is.
func TestEnumFuzzSeeds(t *testing.T) {
	for _, f := range enumFlavours {
		p := filepath.Join("testdata", "fuzz", "FuzzDecrunch", "enum-"+f.name)
		if os.Getenv("ENUM_FUZZ_SEEDS") != "" {
			b := crunchBytes(t, enumDump(t, f), crunch.Options{})
			if err := os.WriteFile(p, fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		seed, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, lit, ok := strings.Cut(strings.TrimSpace(string(seed)), "\n[]byte(")
		if !ok || !strings.HasPrefix(string(seed), "go test fuzz v1\n") {
			t.Fatalf("%s: not a fuzz seed", p)
		}
		text, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if _, st := decrunchBytes(t, []byte(text), Options{Names: appNameTable(t, enumDump(t, f))}); st.EnumNames == 0 {
			t.Errorf("%s: no enum name written back", p)
		}
	}
}

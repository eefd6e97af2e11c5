package crunch_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// inconsistentDump writes a small dump: class 0x100 (no fields), then the
// sub-records subs, in one heap dump segment.
func inconsistentDump(t *testing.T, subs ...hprof.SubRecord) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := newDumpWriter(t, &buf, 4)
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x100, Class: hprof.ClassDump{ID: 0x100}})
	for i := range subs {
		if err := w.WriteSub(&subs[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestInconsistentDumps: a dump that breaks what every VM writes gets an
// error that says what and where, not a BMD that decrunches to another
// heap (an object with ID 0, the null reference, would take a number and
// shift every object after it: FuzzCrunch found it).
func TestInconsistentDumps(t *testing.T) {
	const segment = 31 + 9 // header, segment record header
	classDump := 1 + 4 + 4 + 6*4 + 4 + 2 + 2 + 2
	for _, c := range []struct {
		name   string
		subs   []hprof.SubRecord
		msg    string
		offset int64 // of the sub-record, or -1 for an error without one
	}{
		{"object ID 0", []hprof.SubRecord{{Tag: hprof.SubPrimitiveArrayDump, ID: 0, ElemType: hprof.Int, Length: 1}},
			"object ID 0 (null)", int64(segment + classDump)},
		{"class ID 0", []hprof.SubRecord{{Tag: hprof.SubClassDump, ID: 0, Class: hprof.ClassDump{ID: 0}}},
			"object ID 0 (null)", int64(segment + classDump)},
		{"instance of no class", []hprof.SubRecord{{Tag: hprof.SubInstanceDump, ID: 0x200, ClassID: 0x300}},
			"instance of class 0x300, which has no CLASS DUMP", int64(segment + classDump)},
		{"instance too long", []hprof.SubRecord{{Tag: hprof.SubInstanceDump, ID: 0x200, ClassID: 0x100, Data: []byte{1, 2}}},
			"instance has 2 bytes of fields, its class layout 0", int64(segment + classDump)},
		{"class and object", []hprof.SubRecord{{Tag: hprof.SubPrimitiveArrayDump, ID: 0x100, ElemType: hprof.Int}},
			"object 0x100 is dumped both as a class and as another object", -1},
		{"class dumped again, other fields", []hprof.SubRecord{{Tag: hprof.SubClassDump, ID: 0x100, Class: hprof.ClassDump{ID: 0x100, Fields: []hprof.Field{{Name: 1, Type: hprof.Int}}}}},
			"class 0x100 dumped again with another super class or other fields", int64(segment + classDump)},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := crunch.Crunch(bytes.NewReader(inconsistentDump(t, c.subs...)), &bytes.Buffer{}, crunch.Options{})
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v, want %q", err, c.msg)
			}
			var fe *hprof.FormatError
			if c.offset >= 0 && (!errors.As(err, &fe) || fe.Offset != c.offset) {
				t.Errorf("error %v: want a FormatError at offset %d", err, c.offset)
			}
		})
	}
}

// TestStringIDZero: string ID 0 is null like object ID 0: a class named by
// it has no name, and a STRING record with ID 0 is left out (spec §6.3),
// also with --keep-strings; the round trip keeps the rest of the dump.
// FuzzCrunch found a dump whose oracle read the text of string ID 0.
func TestStringIDZero(t *testing.T) {
	var buf bytes.Buffer
	w := newDumpWriter(t, &buf, 4)
	enc := w.Encoder()
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 0, []byte("ZeroText")))
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 1, []byte("NamedClass")))
	w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 1, ClassID: 0x100, Name: 0}))
	w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 2, ClassID: 0x200, Name: 1}))
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x100, Class: hprof.ClassDump{ID: 0x100}})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x200, Class: hprof.ClassDump{ID: 0x200, Super: 0x100}})
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rt := keepStringsRoundTrip(t, buf.Bytes())
	want, got := rt.want, rt.got
	if !bytes.Contains(rt.bmd, []byte("NamedClass")) || bytes.Contains(rt.bmd, []byte("ZeroText")) {
		t.Errorf("BMD with --keep-strings: want NamedClass and not the text of string ID 0")
	}
	if !slices.Equal(got, want) {
		t.Errorf("round trip (- input, + decrunched):\n%s", lineDiff(want, got, 10))
	}
	if want[1] != "class #1  super=null loader=null size=0" {
		t.Errorf("the class named by string ID 0: %q, want no name", want[1])
	}
}

// TestUnreferencedCount: Stats.Unreferenced counts the STRING records of
// IDs nothing refers to, each record, repeats included; a repeated record
// of an ID the dump refers to is left out but not counted; a referred ID
// with no record makes no string.
func TestUnreferencedCount(t *testing.T) {
	var buf bytes.Buffer
	w := newDumpWriter(t, &buf, 4)
	enc := w.Encoder()
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 2, []byte("Unused")))
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 1, []byte("Used")))
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 2, []byte("UnusedAgain")))
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 1, []byte("UsedAgain")))
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 3, []byte("AlsoUnused")))
	w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 1, ClassID: 0x100, Name: 1}))
	w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 2, ClassID: 0x200, Name: 9})) // no STRING record
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x100, Class: hprof.ClassDump{ID: 0x100}})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x200, Class: hprof.ClassDump{ID: 0x200}})
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	must(t, w.Flush())
	var out bytes.Buffer
	st, err := crunch.Crunch(bytes.NewReader(buf.Bytes()), &out, crunch.Options{KeepStrings: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Unreferenced != 3 {
		t.Errorf("Unreferenced %d, want 3 (Unused, UnusedAgain, AlsoUnused)", st.Unreferenced)
	}
	if st.Strings != 1 {
		t.Errorf("%d strings, want 1 (Used)", st.Strings)
	}
	for _, s := range []string{"Unused", "UsedAgain", "AlsoUnused"} {
		if bytes.Contains(out.Bytes(), []byte(s)) {
			t.Errorf("%s in the BMD", s)
		}
	}
	if !bytes.Contains(out.Bytes(), []byte("Used")) {
		t.Error("Used not in the BMD")
	}
}

// TestStringRepeated: a STRING record whose ID an earlier one has is left
// out: the name is the first record's text (pass 1 indexes the strings
// at its end, so the rule holds there, not as they are read).
func TestStringRepeated(t *testing.T) {
	var buf bytes.Buffer
	w := newDumpWriter(t, &buf, 4)
	enc := w.Encoder()
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 1, []byte("FirstName")))
	w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, 1, []byte("SecondName")))
	w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 1, ClassID: 0x100, Name: 1}))
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x100, Class: hprof.ClassDump{ID: 0x100}})
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil)
	must(t, w.Flush())
	rt := keepStringsRoundTrip(t, buf.Bytes())
	if !bytes.Contains(rt.bmd, []byte("FirstName")) || bytes.Contains(rt.bmd, []byte("SecondName")) {
		t.Errorf("BMD with --keep-strings: want FirstName and not SecondName")
	}
	if !slices.ContainsFunc(rt.got, func(l string) bool { return strings.HasPrefix(l, "class #1 FirstName ") }) {
		t.Errorf("decrunched: no class FirstName in\n%s", strings.Join(rt.got, "\n"))
	}
}

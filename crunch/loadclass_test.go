package crunch_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// dumpLoadedTwice is a dump whose class 0x1000 has two LOAD CLASS records
// (serials 1 and 2, as after an unload and a reload under another name),
// with a STACK FRAME naming serial frame (none when 0), an UNLOAD CLASS of
// serial 1 and a CLASS DUMP and an instance of the class.
func dumpLoadedTwice(t *testing.T, frame uint32) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := newDumpWriter(t, &buf, 4)
	enc := w.Encoder()
	for i, s := range []string{"com.example.First", "com.example.Second", "run", "()V", "Second.java"} {
		must(t, w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, uint64(0x100+i), []byte(s))))
	}
	must(t, w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 1, ClassID: 0x1000, Name: 0x100})))
	must(t, w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 2, ClassID: 0x1000, Name: 0x101})))
	if frame != 0 {
		must(t, w.WriteRecord(hprof.TagStackFrame, 0, enc.AppendStackFrame(nil, hprof.StackFrame{ID: 0x500, Method: 0x102, Signature: 0x103, SourceFile: 0x104, Class: frame, Line: 7})))
		must(t, w.WriteRecord(hprof.TagStackTrace, 0, enc.AppendStackTrace(nil, hprof.StackTrace{Serial: 1, Frames: []uint64{0x500}})))
	}
	must(t, w.WriteRecord(hprof.TagUnloadClass, 0, enc.AppendSerial(nil, 1)))
	must(t, w.BeginHeapDump(hprof.TagHeapDumpSegment, 0))
	must(t, w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x1000, Class: hprof.ClassDump{ID: 0x1000}}))
	must(t, w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: 0x2000, ClassID: 0x1000}))
	must(t, w.EndHeapDump())
	must(t, w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil))
	must(t, w.Flush())
	return buf.Bytes()
}

// loadSerials lists a dump's LOAD CLASS serials in file order.
func loadSerials(t *testing.T, data []byte) []uint32 {
	t.Helper()
	r, err := hprof.NewReaderBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	dec := hprof.BodyDecoder{IDSize: r.IDSize()}
	var serials []uint32
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Tag != hprof.TagLoadClass {
			continue
		}
		body, err := r.Body()
		if err != nil {
			t.Fatal(err)
		}
		l, err := dec.ParseLoadClass(rec, body)
		if err != nil {
			t.Fatal(err)
		}
		serials = append(serials, l.Serial)
	}
	return serials
}

// TestClassLoadedTwice: a class ID with two LOAD CLASS records keeps them
// in their order through a round trip, whether a STACK FRAME names the
// first, the second or neither, so that the name a reader takes (the last
// load's) is the dump's. A frame naming one of them used to keep that one
// in place and move the other after it, to the class's definition.
func TestClassLoadedTwice(t *testing.T) {
	for _, frame := range []uint32{0, 1, 2} {
		t.Run(fmt.Sprint("frame names serial ", frame), func(t *testing.T) {
			rt := keepStringsRoundTrip(t, dumpLoadedTwice(t, frame))
			want, got := rt.want, rt.got
			if serials := loadSerials(t, rt.back); !slices.Equal(serials, []uint32{1, 2}) {
				t.Errorf("LOAD CLASS serials after the round trip: %v, want [1 2]", serials)
			}
			if !slices.Contains(want, "class #1 com.example.Second super=null loader=null size=0") {
				t.Fatalf("the input's canonical form does not name the class by its last load:\n%s", lineDiff(nil, want, 10))
			}
			if !slices.Equal(got, want) {
				t.Errorf("the round trip changed the dump (- input, + decrunched):\n%s", lineDiff(want, got, 10))
			}
		})
	}
}

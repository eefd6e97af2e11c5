// Package fuzzseed makes small seed inputs for the fuzz targets: HPROF dumps
// cut down from the project's fixtures and the shared corpus (a few KB each,
// still valid and still convertible by crunch), plain prefixes of them, and a
// hand-built dump with every record and sub-record kind.
package fuzzseed

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/compress"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// Dump is a named HPROF dump, decompressed.
type Dump struct {
	Name string
	Data []byte
}

// fixtures are the dumps under testdata/ used as seeds.
var fixtures = []string{"sample.hprof.gz", "sample32.hprof.gz"}

// corpus are the dumps of ../shared/corpus used as seeds when present: one
// per HPROF flavour (Android 1.0.3, 1.0.1 and 1.0.2, 4- and 8-byte IDs).
var corpus = []string{
	"android-dalvik-kitkat-dialer.android-hprof",
	"jdk-hprof-slurp-hprof-32.bin",
	"jdk-mat-sun_jdk5_64bit.hprof",
	"jdk-ahat-RI-test-dump.hprof",
}

// Dumps returns the fixture dumps and, when ../shared/corpus exists, a few
// corpus dumps. Missing files are left out silently: the seeds are a help to
// the fuzzer, not a requirement.
func Dumps(tb testing.TB) []Dump {
	tb.Helper()
	var out []Dump
	for _, f := range fixtures {
		if d, ok := readFile(testutil.Fixture(f)); ok {
			out = append(out, Dump{f, d})
		}
	}
	dir := filepath.Join(testutil.Root(), "..", "shared", "corpus")
	for _, f := range corpus {
		if d, ok := readFile(filepath.Join(dir, f)); ok {
			out = append(out, Dump{f, d})
		}
	}
	return out
}

func readFile(path string) ([]byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	r, _, err := compress.NewReader(f)
	if err != nil {
		return nil, false
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	return b, err == nil
}

// Prefix returns the header and the whole top-level records of src that fit
// in max bytes (at least the header): a dump cut at a record boundary.
func Prefix(src []byte, max int) []byte {
	r, err := hprof.NewReader(bytes.NewReader(src))
	if err != nil {
		if len(src) > max {
			return src[:max]
		}
		return src
	}
	end := r.Offset()
	for rec, err := range r.Records() {
		if err != nil {
			break
		}
		next := rec.End()
		if next > int64(max) || next > int64(len(src)) {
			break
		}
		end = next
	}
	return src[:end]
}

// Sample cuts src down to a small valid dump of the same flavour: the
// first records of each top-level kind, a dozen instances of different
// classes with the CLASS DUMPs of their class chains, a few arrays of each
// kind (cut to a few elements), two roots of each kind, the first HEAP DUMP
// INFOs, and the strings that name what is kept. crunch accepts the result
// whenever it accepts src.
func Sample(src []byte) ([]byte, error) {
	var p sampler
	if err := p.choose(src); err != nil {
		return nil, err
	}
	p.closeClasses()
	return p.write(src)
}

// What Sample keeps.
const (
	maxInstances = 12
	maxInstData  = 256
	maxElems     = 6
	perKind      = 2
)

// sampler is the state of Sample: what the first pass chooses, which the
// second pass writes.
type sampler struct {
	dec        hprof.BodyDecoder
	classes    map[uint64]*hprof.ClassDump // first CLASS DUMP of each class
	classOrder []uint64                    // classes in the order of their first dump
	loadName   map[uint64]uint64           // class ID -> name string ID (LOAD CLASS)
	wantSID    map[uint64]bool             // string IDs to keep
	keepSub    map[int]bool                // heap sub-records to keep, by ordinal
	subKinds   map[hprof.SubTag]int
	primKinds  map[hprof.BasicType]int
	instClass  map[uint64]bool // classes with a kept instance
	wantClass  map[uint64]bool // classes whose CLASS DUMP and LOAD CLASS are kept
	topKinds   map[hprof.Tag]int
	nInst      int
	nInfo      int
	ord        int // ordinal of the current heap sub-record
}

// choose is the first pass: it reads src and picks the records to keep.
func (p *sampler) choose(src []byte) error {
	r, err := hprof.NewReader(bytes.NewReader(src))
	if err != nil {
		return err
	}
	p.dec = hprof.BodyDecoder{IDSize: r.IDSize()}
	p.classes = map[uint64]*hprof.ClassDump{}
	p.loadName = map[uint64]uint64{}
	p.wantSID = map[uint64]bool{}
	p.keepSub = map[int]bool{}
	p.subKinds = map[hprof.SubTag]int{}
	p.primKinds = map[hprof.BasicType]int{}
	p.instClass = map[uint64]bool{}
	p.wantClass = map[uint64]bool{}
	p.topKinds = map[hprof.Tag]int{}
	for rec, err := range r.Records() {
		if err != nil {
			return err
		}
		switch {
		case rec.Tag == hprof.TagLoadClass:
			body, err := r.Body()
			if err != nil {
				return err
			}
			if lc, err := p.dec.ParseLoadClass(rec, body); err == nil {
				p.loadName[lc.ClassID] = lc.Name
			}
		case rec.Tag == hprof.TagStartThread || rec.Tag == hprof.TagStackFrame:
			body, err := r.Body()
			if err != nil {
				return err
			}
			p.chooseNames(rec, body)
		case rec.Tag.IsHeapDump():
			if err := p.chooseSubs(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// chooseNames keeps the names of the first START THREAD and STACK FRAME
// records.
func (p *sampler) chooseNames(rec hprof.Record, body []byte) {
	p.topKinds[rec.Tag]++
	if p.topKinds[rec.Tag] > perKind+1 {
		return
	}
	if rec.Tag == hprof.TagStartThread {
		if t, err := p.dec.ParseStartThread(rec, body); err == nil {
			p.wantSID[t.Name], p.wantSID[t.Group], p.wantSID[t.ParentGroup] = true, true, true
		}
	} else if f, err := p.dec.ParseStackFrame(rec, body); err == nil {
		p.wantSID[f.Method], p.wantSID[f.Signature], p.wantSID[f.SourceFile] = true, true, true
	}
}

// chooseSubs reads the sub-records of a heap dump record, remembering
// every class and choosing the other sub-records to keep.
func (p *sampler) chooseSubs(r *hprof.Reader) error {
	for s, err := range r.SubRecords() {
		if err != nil {
			return err
		}
		p.ord++
		switch {
		case s.Tag == hprof.SubClassDump:
			if _, dup := p.classes[s.ID]; !dup {
				p.classes[s.ID] = s.Class.Clone()
				p.classOrder = append(p.classOrder, s.ID)
			}
		case s.Tag == hprof.SubInstanceDump:
			if p.nInst < maxInstances && len(s.Data) <= maxInstData && !p.instClass[s.ClassID] {
				p.nInst++
				p.instClass[s.ClassID] = true
				p.keepSub[p.ord] = true
			}
		case s.Tag == hprof.SubPrimitiveArrayDump:
			if p.primKinds[s.ElemType] < 1 {
				p.primKinds[s.ElemType]++
				p.keepSub[p.ord] = true
			}
		case s.Tag == hprof.SubHeapDumpInfo:
			if p.nInfo < 4 {
				p.nInfo++
				p.keepSub[p.ord] = true
				p.wantSID[s.HeapName] = true
			}
		default:
			if p.subKinds[s.Tag] < perKind {
				p.subKinds[s.Tag]++
				p.keepSub[p.ord] = true
				if s.Tag == hprof.SubObjectArrayDump {
					p.wantClass[s.ClassID] = true
				}
			}
		}
	}
	return nil
}

// closeClasses adds to the classes kept those of the kept instances and
// arrays, their super chains, and the first few classes of the dump, and
// to the strings kept the names of the classes kept and of their fields.
func (p *sampler) closeClasses() {
	for i, id := range p.classOrder {
		if i < 3 {
			p.wantClass[id] = true
		}
	}
	for id := range p.instClass {
		p.wantClass[id] = true
	}
	for id := range p.wantClass {
		for c, n := p.classes[id], 0; c != nil && n <= len(p.classes); n++ {
			p.wantClass[c.ID] = true
			c = p.classes[c.Super]
		}
	}
	for id := range p.wantClass {
		p.wantSID[p.loadName[id]] = true
		if c := p.classes[id]; c != nil {
			for _, f := range c.Fields {
				p.wantSID[f.Name] = true
			}
			for _, f := range c.Statics {
				p.wantSID[f.Name] = true
			}
		}
	}
	delete(p.wantSID, 0)
}

// write is the second pass: it reads src again and writes what was
// chosen.
func (p *sampler) write(src []byte) ([]byte, error) {
	r, err := hprof.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	r.ArrayData = true
	var out bytes.Buffer
	w, err := hprof.NewWriter(&out, r.Header())
	if err != nil {
		return nil, err
	}
	p.topKinds = map[hprof.Tag]int{}
	wroteClass := map[uint64]bool{}
	p.ord = 0
	for rec, err := range r.Records() {
		if err != nil {
			return nil, err
		}
		if rec.Tag.IsHeapDump() {
			if err := p.writeSubs(r, w, rec, wroteClass); err != nil {
				return nil, err
			}
			continue
		}
		body, err := r.Body()
		if err != nil {
			return nil, err
		}
		if p.keepTop(rec, body) {
			if err := w.WriteRecord(rec.Tag, rec.Time, body); err != nil {
				return nil, err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// writeSubs writes the chosen sub-records of heap dump record rec, the
// first dump of each class kept, and arrays cut to maxElems elements, in
// a heap dump record of its own if any.
func (p *sampler) writeSubs(r *hprof.Reader, w *hprof.Writer, rec hprof.Record, wroteClass map[uint64]bool) error {
	begun := false
	for s, err := range r.SubRecords() {
		if err != nil {
			return err
		}
		p.ord++
		keep := p.keepSub[p.ord]
		if s.Tag == hprof.SubClassDump {
			keep = p.wantClass[s.ID] && !wroteClass[s.ID]
			wroteClass[s.ID] = true
		}
		if !keep {
			continue
		}
		if !begun {
			if err := w.BeginHeapDump(rec.Tag, rec.Time); err != nil {
				return err
			}
			begun = true
		}
		switch s.Tag {
		case hprof.SubObjectArrayDump:
			if len(s.Elements) > maxElems {
				s.Elements = s.Elements[:maxElems]
			}
			s.Length = uint32(len(s.Elements))
		case hprof.SubPrimitiveArrayDump:
			if s.Length > maxElems {
				s.Length = maxElems
				s.Data = s.Data[:maxElems*s.ElemType.Size(r.IDSize())]
			}
		}
		if err := w.WriteSub(s); err != nil {
			return err
		}
	}
	if begun {
		return w.EndHeapDump()
	}
	return nil
}

// keepTop says whether the second pass keeps a top-level record: the
// strings chosen and the first few, the LOAD CLASS records of the classes
// kept, HEAP DUMP END, and the first few small records of other kinds.
func (p *sampler) keepTop(rec hprof.Record, body []byte) bool {
	switch rec.Tag {
	case hprof.TagString:
		id, text, err := p.dec.ParseString(rec, body)
		p.topKinds[rec.Tag]++
		return err == nil && (p.wantSID[id] || p.topKinds[rec.Tag] <= 4) && len(text) <= 512
	case hprof.TagLoadClass:
		lc, err := p.dec.ParseLoadClass(rec, body)
		return err == nil && p.wantClass[lc.ClassID]
	case hprof.TagStackTrace:
		p.topKinds[rec.Tag]++
		return p.topKinds[rec.Tag] <= perKind+1 && len(body) <= 12+8*8
	case hprof.TagHeapDumpEnd:
		return true
	default:
		p.topKinds[rec.Tag]++
		return p.topKinds[rec.Tag] <= perKind+1 && len(body) <= 512
	}
}

// Seeds returns, for each dump of Dumps, its Sample and its Prefix of max
// bytes, named "<dump>/sample" and "<dump>/prefix", plus HandBuilt dumps
// with 4- and 8-byte identifiers. Names are sorted for a stable order.
func Seeds(tb testing.TB, max int) []Dump {
	tb.Helper()
	var out []Dump
	for _, d := range Dumps(tb) {
		if s, err := Sample(d.Data); err == nil {
			out = append(out, Dump{d.Name + "/sample", s})
		} else {
			tb.Logf("fuzzseed: cannot sample %s: %v", d.Name, err)
		}
		out = append(out, Dump{d.Name + "/prefix", Prefix(d.Data, max)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	out = append(out, Dump{"handbuilt4", HandBuilt(4, hprof.Version103)}, Dump{"handbuilt8", HandBuilt(8, hprof.Version102)})
	return out
}

// HandBuilt returns a tiny dump with every top-level record kind this
// project knows and every heap sub-record kind, consistent enough for
// crunch: three classes in a chain with instance fields of every type,
// instances whose data matches their layouts, arrays, roots of every kind,
// HEAP DUMP INFOs, and a HEAP DUMP SEGMENT closed by HEAP DUMP END.
func HandBuilt(idSize int, version string) []byte {
	var out bytes.Buffer
	w, _ := hprof.NewWriter(&out, hprof.Header{Version: version, IDSize: idSize, Timestamp: 1700000000000})
	enc := w.Encoder()
	str := func(id uint64, s string) { w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, id, []byte(s))) }
	names := []string{"java.lang.Object", "com.example.Base", "com.example.Leaf", "value", "next", "count",
		"flag", "ch", "f", "d", "b", "s", "l", "main", "system", "run", "()V", "Leaf.java", "app", "zygote", "CONST", "secret"}
	for i, n := range names {
		str(uint64(0x100+i), n)
	}
	const (
		objClass  = 0x1000
		baseClass = 0x1010
		leafClass = 0x1020
		arrClass  = 0x1030
	)
	for i, c := range []uint64{objClass, baseClass, leafClass} {
		w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: uint32(i + 1), ClassID: c, StackTrace: 1, Name: uint64(0x100 + i)}))
	}
	w.WriteRecord(hprof.TagStackFrame, 5, enc.AppendStackFrame(nil, hprof.StackFrame{ID: 0x500, Method: 0x10F, Signature: 0x110, SourceFile: 0x111, Class: 3, Line: 42}))
	w.WriteRecord(hprof.TagStackFrame, 5, enc.AppendStackFrame(nil, hprof.StackFrame{ID: 0x508, Method: 0x10F, Class: 3, Line: -3}))
	w.WriteRecord(hprof.TagStackTrace, 5, enc.AppendStackTrace(nil, hprof.StackTrace{Serial: 1, Thread: 1, Frames: []uint64{0x500, 0x508}}))
	w.WriteRecord(hprof.TagStackTrace, 5, enc.AppendStackTrace(nil, hprof.StackTrace{Serial: 2, Thread: 2}))
	w.WriteRecord(hprof.TagStartThread, 6, enc.AppendStartThread(nil, hprof.StartThread{Serial: 1, Object: 0x2000, StackTrace: 1, Name: 0x10D, Group: 0x10E}))
	w.WriteRecord(hprof.TagControlSettings, 6, []byte{0, 0, 0, 2, 0, 4})
	w.WriteRecord(hprof.TagHeapSummary, 6, make([]byte, 24))
	w.WriteRecord(hprof.Tag(0x42), 6, []byte("unknown record"))

	w.BeginHeapDump(hprof.TagHeapDumpSegment, 7)
	sub := func(s hprof.SubRecord) { w.WriteSub(&s) }
	sub(hprof.SubRecord{Tag: hprof.SubHeapDumpInfo, HeapType: 'Z', HeapName: 0x113})
	sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: objClass, StackTrace: 1, InstanceSize: 0}})
	sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: baseClass, StackTrace: 1, Super: objClass, InstanceSize: 16,
		Constants: []hprof.Constant{{Index: 1, Type: hprof.Int, Value: 7}, {Index: 2, Type: hprof.Object, Value: 0x3000}},
		Statics: []hprof.StaticField{{Name: 0x114, Type: hprof.Long, Value: 0x1122334455667788}, {Name: 0x115, Type: hprof.Object, Value: 0x3000},
			{Name: 0x109, Type: hprof.Double, Value: 0x400921fb54442d18}, {Name: 0x107, Type: hprof.Char, Value: 'x'}},
		Fields: []hprof.Field{{Name: 0x103, Type: hprof.Object}, {Name: 0x105, Type: hprof.Int}}}})
	sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: leafClass, StackTrace: 1, Super: baseClass, Loader: 0x4000, InstanceSize: 40,
		Fields: []hprof.Field{{Name: 0x104, Type: hprof.Object}, {Name: 0x106, Type: hprof.Boolean}, {Name: 0x107, Type: hprof.Char},
			{Name: 0x108, Type: hprof.Float}, {Name: 0x109, Type: hprof.Double}, {Name: 0x10A, Type: hprof.Byte},
			{Name: 0x10B, Type: hprof.Short}, {Name: 0x10C, Type: hprof.Long}}}})
	sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: arrClass, Super: objClass}})
	leafData := func(next, value uint64, n byte) []byte {
		b := enc.AppendID(nil, next)
		b = append(b, 1, 0, 'c', 0x3f, 0x80, 0, 0)
		b = binary.BigEndian.AppendUint64(b, 0x3ff0000000000000)
		b = append(b, n, 0xff, 0xfe)
		b = binary.BigEndian.AppendUint64(b, uint64(n)<<40)
		b = enc.AppendID(b, value)
		return binary.BigEndian.AppendUint32(b, uint32(n))
	}
	sub(hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: 0x2000, StackTrace: 1, ClassID: leafClass, Data: leafData(0x2010, 0x3000, 1)})
	sub(hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: 0x2010, StackTrace: 2, ClassID: leafClass, Data: leafData(0x2000, 0x9999, 2)})
	sub(hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: 0x2020, StackTrace: 2, ClassID: baseClass, Data: binary.BigEndian.AppendUint32(enc.AppendID(nil, 0x2020), 5)})
	sub(hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: 0x2030, StackTrace: 0, ClassID: objClass})
	sub(hprof.SubRecord{Tag: hprof.SubHeapDumpInfo, HeapType: 'A', HeapName: 0x112})
	sub(hprof.SubRecord{Tag: hprof.SubObjectArrayDump, ID: 0x3000, StackTrace: 1, ClassID: arrClass, Elements: []uint64{0x2000, 0, 0x3000, 0x7777}})
	sub(hprof.SubRecord{Tag: hprof.SubObjectArrayDump, ID: 0x3010, ClassID: 0x5555})
	for i, t := range []hprof.BasicType{hprof.Boolean, hprof.Char, hprof.Float, hprof.Double, hprof.Byte, hprof.Short, hprof.Int, hprof.Long} {
		n := uint32(i % 3)
		sub(hprof.SubRecord{Tag: hprof.SubPrimitiveArrayDump, ID: uint64(0x4000 + 16*i), StackTrace: 1, Length: n, ElemType: t,
			Data: bytes.Repeat([]byte{0xAB}, int(n)*t.Size(idSize))})
	}
	sub(hprof.SubRecord{Tag: hprof.SubPrimitiveArrayNoData, ID: 0x4100, Length: 1000, ElemType: hprof.Byte})
	sub(hprof.SubRecord{Tag: hprof.SubHeapDumpInfo, HeapType: 0, HeapName: 0})
	for _, k := range []hprof.SubTag{hprof.SubRootUnknown, hprof.SubRootJNIGlobal, hprof.SubRootJNILocal, hprof.SubRootJavaFrame, hprof.SubRootNativeStack,
		hprof.SubRootStickyClass, hprof.SubRootThreadBlock, hprof.SubRootMonitorUsed, hprof.SubRootThreadObject, hprof.SubRootInternedString,
		hprof.SubRootFinalizing, hprof.SubRootDebugger, hprof.SubRootReferenceCleanup, hprof.SubRootVMInternal, hprof.SubRootJNIMonitor, hprof.SubUnreachable} {
		sub(hprof.SubRecord{Tag: k, ID: 0x2000, Thread: 1, Frame: 0xFFFFFFFF, JNIRef: 0x6000, StackTrace: 1})
		sub(hprof.SubRecord{Tag: k, ID: 0x3000, Thread: 1, Frame: 1, JNIRef: 0x6008, StackTrace: 2})
	}
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, 7, nil)
	w.WriteRecord(hprof.TagUnloadClass, 8, enc.AppendSerial(nil, 3))
	w.WriteRecord(hprof.TagEndThread, 8, enc.AppendSerial(nil, 1))
	w.Flush()
	return out.Bytes()
}

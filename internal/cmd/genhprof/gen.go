package main

import (
	"encoding/binary"
	"errors"
	"io"
	"slices"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// genOptions shape a generated dump.
type genOptions struct {
	Size        int64 // bytes to reach (the dump ends within one block past it)
	IDSize      int   // 4 or 8
	SegmentSize int   // bound of HEAP DUMP SEGMENT bodies (0: hprof.DefaultSegmentSize)
	Seed        uint64
	// MaxArray is the largest big primitive array in bytes (they are
	// MaxArray/16 to MaxArray); 0 means 16 MiB.
	MaxArray int
	// HugeArray, when positive, adds one long[] of about that many bytes,
	// zero-filled (streamed by hprof.Writer in a record of its own), once a
	// quarter of Size is written: a record body over 2 GiB when it is.
	HugeArray int64
}

// rng is splitmix64: deterministic and fast.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// Class indexes, in CLASS DUMP (and rank) order.
const (
	cObject = iota
	cString
	cThread
	cNode
	cByteArray
	cIntArray
	cObjectArray
	nClasses
)

// HotSpot spells class names in LOAD CLASS records in internal form.
var classNames = [nClasses]string{"java/lang/Object", "java/lang/String", "java/lang/Thread",
	"com/example/heap/Node", "[B", "[I", "[Ljava/lang/Object;"}

type field struct {
	name string
	typ  hprof.BasicType
}

var classFields = [nClasses][]field{
	cString: {{"value", hprof.Object}, {"hash", hprof.Int}, {"coder", hprof.Byte}},
	cThread: {{"name", hprof.Object}, {"tid", hprof.Long}, {"daemon", hprof.Boolean}},
	cNode:   {{"next", hprof.Object}, {"data", hprof.Object}, {"id", hprof.Long}, {"count", hprof.Int}, {"flag", hprof.Boolean}},
}

type static struct {
	field
	value uint64 // for Object: a class index + 1, or 0
}

var classStatics = [nClasses][]static{
	cString: {{field{"COMPACT_STRINGS", hprof.Boolean}, 1}, {field{"serialVersionUID", hprof.Long}, 0x7E59E3F5DB7A5AD5}},
	cNode:   {{field{"TYPE", hprof.Object}, cNode + 1}, {field{"created", hprof.Int}, 12345}},
}

// The roots each block gets for its first node, in turn (HotSpot's kinds;
// STICKY CLASS and THREAD OBJECT are written once at the start).
var blockRootKinds = []hprof.SubTag{hprof.SubRootJavaFrame, hprof.SubRootJNILocal, hprof.SubRootJNIGlobal, hprof.SubRootNativeStack,
	hprof.SubRootThreadBlock, hprof.SubRootMonitorUsed, hprof.SubRootUnknown}

const (
	traceDummy  = 1 // the empty stack trace objects and classes name
	traceThread = 2 // the thread's stack trace
	threadSer   = 1
	timestampMS = 1_700_000_000_000
)

type generator struct {
	opt  genOptions
	w    *hprof.Writer
	c    *counts
	r    rng
	ids  []uint64 // every class and object ID written, ascending (ranks)
	next uint64   // next object address
	sids map[string]uint64
	s    hprof.SubRecord
	data []byte
	pat  []byte // deterministic array contents
	size int64  // bytes written, about (segment headers left out)

	classID [nClasses]uint64

	lastNode uint64   // the chain's head
	recent   []uint64 // recently written nodes and strings, for object arrays
}

// generate writes the dump to out and returns what it wrote.
func generate(out io.Writer, opt genOptions) (*counts, error) {
	if opt.IDSize != 4 && opt.IDSize != 8 {
		return nil, errors.New("-idsize must be 4 or 8")
	}
	if opt.MaxArray <= 0 {
		opt.MaxArray = 16 << 20
	}
	opt.MaxArray = max(opt.MaxArray, 64)
	if opt.HugeArray > 0xFFFFFFFF-64 {
		return nil, errors.New("-hugearray must be under 4 GiB (an HPROF record body is at most 4 GiB)")
	}
	w, err := hprof.NewWriter(out, hprof.Header{Version: hprof.Version102, IDSize: opt.IDSize, Timestamp: timestampMS})
	if err != nil {
		return nil, err
	}
	w.SegmentSize = opt.SegmentSize
	g := &generator{opt: opt, w: w, r: rng{opt.Seed}, sids: map[string]uint64{}}
	g.c = newCounts(opt.IDSize, func(id uint64) uint64 {
		i, ok := slices.BinarySearch(g.ids, id)
		if !ok {
			return dangling
		}
		return uint64(i) + 1
	})
	// The pattern array contents are cut from: 2*MaxArray bytes.
	g.pat = make([]byte, 2*opt.MaxArray)
	for i := 0; i < len(g.pat); i += 8 {
		binary.LittleEndian.PutUint64(g.pat[i:], g.r.next())
	}
	if opt.IDSize == 8 {
		// Addresses above 4 GiB, like a 64-bit heap's.
		g.next = 0x7_1000_0000
	} else {
		// Compressed-oop style: an address divided by 8.
		g.next = 0x10_0000
	}
	if err := g.run(); err != nil {
		return nil, err
	}
	g.c.file.bytes = w.Written()
	g.c.file.version = hprof.Version102
	return g.c, nil
}

// sid returns the string ID of a name, writing its STRING record the first
// time.
func (g *generator) sid(name string) uint64 {
	if id, ok := g.sids[name]; ok {
		return id
	}
	var id uint64
	if g.opt.IDSize == 8 {
		id = 0x7F00_0000_1000 + uint64(len(g.sids))*0x20
	} else {
		id = 0x2000_0000 + uint64(len(g.sids))*0x10
	}
	g.sids[name] = id
	body := g.w.Encoder().AppendString(nil, id, []byte(name))
	g.top(hprof.TagString, body)
	return id
}

func (g *generator) top(tag hprof.Tag, body []byte) {
	if err := g.w.WriteRecord(tag, 0, body); err == nil {
		g.c.top(hprof.Record{Tag: tag, Length: uint32(len(body))}, body)
		g.size += 9 + int64(len(body))
	}
}

// alloc returns the ID of a new object of size bytes.
func (g *generator) alloc(size int) uint64 {
	id := g.next
	if g.opt.IDSize == 8 {
		g.next += uint64(16 + (size+7)&^7)
	} else {
		g.next += uint64(2 + (size+7)/8)
	}
	g.ids = append(g.ids, id)
	return id
}

// emit writes the sub-record in g.s and counts it.
func (g *generator) emit() error {
	if err := g.w.WriteSub(&g.s); err != nil {
		return err
	}
	g.c.sub(&g.s)
	g.size += g.subSize(&g.s)
	return nil
}

// subSize returns the encoded size of a sub-record (roots approximately).
// The Writer buffers a segment before it counts it as written, so the
// generator keeps its own count to know when to stop.
func (g *generator) subSize(s *hprof.SubRecord) int64 {
	id := int64(g.opt.IDSize)
	switch s.Tag {
	case hprof.SubInstanceDump:
		return 1 + 2*id + 8 + int64(len(s.Data))
	case hprof.SubObjectArrayDump:
		return 1 + 2*id + 8 + int64(len(s.Elements))*id
	case hprof.SubPrimitiveArrayDump:
		return 1 + id + 9 + int64(s.Length)*int64(s.ElemType.Size(g.opt.IDSize))
	case hprof.SubClassDump:
		return 1 + 7*id + 14 + int64(len(s.Class.Statics))*(id+9) + int64(len(s.Class.Fields))*(id+1)
	}
	return 1 + id + 8
}

func (g *generator) root(kind hprof.SubTag, id uint64) error {
	g.s = hprof.SubRecord{Tag: kind, ID: id, Thread: threadSer, StackTrace: traceThread,
		JNIRef: 0x7F10_0000 + uint64(g.c.roots)*8}
	if kind == hprof.SubRootJNILocal {
		g.s.Frame = 0xFFFFFFFF // HotSpot's "no frame"
	}
	return g.emit()
}

func (g *generator) appendID(b []byte, id uint64) []byte { return g.w.Encoder().AppendID(b, id) }

// run writes the dump: the records before the heap dump, then in HEAP
// DUMP SEGMENTs the classes, the thread and blocks of objects until the
// size is reached, then HEAP DUMP END.
func (g *generator) run() error {
	g.preamble()
	if err := g.w.BeginHeapDump(hprof.TagHeapDumpSegment, 0); err != nil {
		return err
	}
	if err := g.classDumps(); err != nil {
		return err
	}
	if err := g.thread(); err != nil {
		return err
	}
	if err := g.blocks(); err != nil {
		return err
	}
	if err := g.w.EndHeapDump(); err != nil {
		return err
	}
	if err := g.w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil); err != nil {
		return err
	}
	return g.w.Flush()
}

// preamble writes names first, as HotSpot does, then LOAD CLASS, frames
// and traces, and the names of the fields; and chooses the class IDs.
func (g *generator) preamble() {
	enc := g.w.Encoder()
	for k := range nClasses {
		g.sid(classNames[k])
		// Class mirrors: below every other object, so that they rank first.
		if g.opt.IDSize == 8 {
			g.classID[k] = 0x7_0000_0000 + uint64(k)*0x200
		} else {
			g.classID[k] = 0x1000 + uint64(k)*0x40
		}
		g.ids = append(g.ids, g.classID[k])
	}
	for k := range nClasses {
		g.top(hprof.TagLoadClass, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: uint32(k + 1), ClassID: g.classID[k],
			StackTrace: traceDummy, Name: g.sid(classNames[k])}))
	}
	frame := uint64(0x7F20_0000)
	g.top(hprof.TagStackFrame, enc.AppendStackFrame(nil, hprof.StackFrame{ID: frame, Method: g.sid("run"), Signature: g.sid("()V"),
		SourceFile: g.sid("Node.java"), Class: cNode + 1, Line: 42}))
	g.top(hprof.TagStackTrace, enc.AppendStackTrace(nil, hprof.StackTrace{Serial: traceDummy}))
	g.top(hprof.TagStackTrace, enc.AppendStackTrace(nil, hprof.StackTrace{Serial: traceThread, Thread: threadSer, Frames: []uint64{frame}}))
	for k := range nClasses {
		for _, f := range classFields[k] {
			g.sid(f.name)
		}
		for _, f := range classStatics[k] {
			g.sid(f.name)
		}
	}
}

// classDumps writes the CLASS DUMPs and their ROOT STICKY CLASS roots.
func (g *generator) classDumps() error {
	for k := range nClasses {
		d := hprof.ClassDump{ID: g.classID[k], StackTrace: traceDummy}
		if k != cObject {
			d.Super = g.classID[cObject]
		}
		for _, f := range classFields[k] {
			d.Fields = append(d.Fields, hprof.Field{Name: g.sid(f.name), Type: f.typ})
			d.InstanceSize += uint32(f.typ.Size(g.opt.IDSize))
		}
		for _, f := range classStatics[k] {
			v := f.value
			if f.typ == hprof.Object && v != 0 {
				v = g.classID[v-1]
			}
			d.Statics = append(d.Statics, hprof.StaticField{Name: g.sid(f.name), Type: f.typ, Value: v})
		}
		g.c.addClass(&d)
		g.s = hprof.SubRecord{Tag: hprof.SubClassDump, ID: d.ID, Class: d}
		if err := g.emit(); err != nil {
			return err
		}
	}
	g.c.buildLayouts()
	for k := range nClasses {
		if err := g.root(hprof.SubRootStickyClass, g.classID[k]); err != nil {
			return err
		}
	}
	return nil
}

// thread writes the thread, its name and their roots.
func (g *generator) thread() error {
	name, err := g.stringObject()
	if err != nil {
		return err
	}
	thread := g.instance(cThread, func(b []byte) []byte {
		b = g.appendID(b, name)
		b = binary.BigEndian.AppendUint64(b, 1)
		return append(b, 0)
	})
	if err := g.emit(); err != nil {
		return err
	}
	return g.root(hprof.SubRootThreadObject, thread)
}

// blocks writes blocks of objects until the dump reaches its size, and
// the huge array, if asked for, once it is a quarter written.
func (g *generator) blocks() error {
	huge := g.opt.HugeArray >= 8
	for block := 0; g.size < g.opt.Size; block++ {
		if huge && g.size >= g.opt.Size/4 {
			huge = false
			n := g.opt.HugeArray / 8
			id := g.alloc(int(n * 8))
			g.s = hprof.SubRecord{Tag: hprof.SubPrimitiveArrayDump, ID: id, StackTrace: traceDummy, ElemType: hprof.Long, Length: uint32(n)}
			if err := g.emit(); err != nil {
				return err
			}
			if err := g.root(hprof.SubRootJNIGlobal, id); err != nil {
				return err
			}
		}
		if err := g.block(block); err != nil {
			return err
		}
	}
	return nil
}

// instance prepares an INSTANCE DUMP of class k in g.s, its field bytes
// appended by fields, and returns its ID.
func (g *generator) instance(k int, fields func([]byte) []byte) uint64 {
	g.data = fields(g.data[:0])
	id := g.alloc(len(g.data) + 8)
	g.s = hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: id, StackTrace: traceDummy, ClassID: g.classID[k], Data: g.data}
	return id
}

// primitive writes a primitive array of n bytes of contents and returns its
// ID.
func (g *generator) primitive(t hprof.BasicType, n int) (uint64, error) {
	n -= n % t.Size(g.opt.IDSize)
	id := g.alloc(n + 8)
	off := g.r.intn(len(g.pat) - n + 1)
	g.s = hprof.SubRecord{Tag: hprof.SubPrimitiveArrayDump, ID: id, StackTrace: traceDummy, ElemType: t,
		Length: uint32(n / t.Size(g.opt.IDSize)), Data: g.pat[off : off+n]}
	return id, g.emit()
}

// stringObject writes a byte[] and the String holding it.
func (g *generator) stringObject() (uint64, error) {
	value, err := g.primitive(hprof.Byte, 4+g.r.intn(60))
	if err != nil {
		return 0, err
	}
	h := uint32(g.r.next())
	id := g.instance(cString, func(b []byte) []byte {
		b = g.appendID(b, value)
		b = binary.BigEndian.AppendUint32(b, h)
		return append(b, 0)
	})
	return id, g.emit()
}

func (g *generator) remember(id uint64) {
	if len(g.recent) < 64 {
		g.recent = append(g.recent, id)
	} else {
		g.recent[g.r.intn(64)] = id
	}
}

// block writes one big primitive array and a few thousand small objects:
// strings, a linked chain of nodes pointing at them (and at the big array
// or small int arrays), object arrays over recent objects, and two roots.
func (g *generator) block(n int) error {
	left := g.opt.Size - g.size
	size := g.opt.MaxArray/16 + g.r.intn(g.opt.MaxArray-g.opt.MaxArray/16+1)
	groups := 4096 + g.r.intn(8192)
	// Small targets: a smaller block, so that the dump ends near -size.
	if left < int64(size)+int64(groups)*200 {
		size = int(min(int64(size), max(left*3/4, 64)))
		groups = int(min(int64(groups), max(left/4/200, 1)))
	}
	t := hprof.Byte
	if n%4 == 3 {
		t = hprof.Int
	}
	big, err := g.primitive(t, size)
	if err != nil {
		return err
	}
	if err := g.root(hprof.SubRootJNIGlobal, big); err != nil {
		return err
	}
	var smallInts uint64
	for i := range groups {
		str, err := g.stringObject()
		if err != nil {
			return err
		}
		g.remember(str)
		data := str
		switch {
		case i%8 == 5:
			if smallInts, err = g.primitive(hprof.Int, 4*g.r.intn(17)); err != nil {
				return err
			}
			data = smallInts
		case i%97 == 0:
			data = big
		}
		prev := g.lastNode
		node := g.instance(cNode, func(b []byte) []byte {
			b = g.appendID(b, prev)
			b = g.appendID(b, data)
			b = binary.BigEndian.AppendUint64(b, uint64(len(g.ids)))
			b = binary.BigEndian.AppendUint32(b, uint32(i))
			return append(b, byte(i&1))
		})
		if err := g.emit(); err != nil {
			return err
		}
		g.lastNode = node
		g.remember(node)
		if i == 0 {
			if err := g.root(blockRootKinds[n%len(blockRootKinds)], node); err != nil {
				return err
			}
		}
		if i%16 == 15 {
			elems := make([]uint64, 1+g.r.intn(32))
			for j := range elems {
				if g.r.intn(5) != 0 {
					elems[j] = g.recent[g.r.intn(len(g.recent))]
				}
			}
			id := g.alloc(len(elems) * g.opt.IDSize)
			g.s = hprof.SubRecord{Tag: hprof.SubObjectArrayDump, ID: id, StackTrace: traceDummy,
				ClassID: g.classID[cObjectArray], Elements: elems, Length: uint32(len(elems))}
			if err := g.emit(); err != nil {
				return err
			}
		}
	}
	return nil
}

package crunch

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// pass2 reads the dump again and writes the BMD file: top-level records in
// dump order, each name and class definition written just before the
// first record that needs it (a file cut anywhere keeps what precedes the
// cut), objects with their references remapped.
type pass2 struct {
	*state
	r   *hprof.Reader
	w   *bmd.Writer
	dec hprof.BodyDecoder

	class       bmd.Class // reused for each definition
	heap        heapTracker
	heapName    uint64 // HPROF string ID of the current heap's name
	heapInfoOut bool   // the current heap's HEAP INFO is written
	clock       chunkClock
	nextDef     int    // classes of defOrder defined so far
	group       []int  // scratch for defineGroup
	place       uint64 // class dumps met since the last other heap record
	loadsSeen   int    // LOAD CLASS records met

	values, elems, frames []uint64

	topCount, topBytes, subCount [256]int64 // by tag, for Stats
}

func (st *state) runPass2(src io.Reader, out io.Writer) error {
	pr := &progressReader{r: src, pass: 2, f: st.opt.Progress}
	r, err := hprof.NewReader(pr)
	if err != nil {
		return err
	}
	h := r.Header()
	meta := &bmd.Metadata{HPROFVersion: h.Version, IDSize: h.IDSize, Timestamp: h.Timestamp, Hash: bmd.HashXX64,
		Options: st.opt.Canonical(), Tool: st.opt.Tool, Objects: st.nObj, Classes: uint64(len(st.classes)), Strings: st.nStrings,
		ClassesPlaced: true, Alignment: st.addrs.alignment(), UncompressedRefs: h.IDSize == 8 && st.addrs.seen && !st.addrs.overlap,
		Labels: st.opt.Labels}
	w, err := bmd.NewWriter(out, meta)
	if err != nil {
		return err
	}
	p := &pass2{state: st, r: r, w: w, dec: hprof.BodyDecoder{IDSize: st.idSize}}
	st.nStrings = 0 // now: strings written
	for rec, err := range r.Records() {
		if err != nil {
			return err
		}
		p.topCount[rec.Tag]++
		p.topBytes[rec.Tag] += int64(rec.Length) + 9
		if err := w.Time(rec.Time); err != nil {
			return err
		}
		if err := p.record(rec); err != nil {
			return err
		}
	}
	for _, ci := range st.classes {
		if !ci.placed {
			return fmt.Errorf("crunch: class 0x%x dumped outside any heap dump", ci.dump.ID)
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	p.fillStats(pr.n)
	return nil
}

// record handles one top-level record.
func (p *pass2) record(rec hprof.Record) error {
	if rec.Tag.IsHeapDump() {
		return p.heapDump(rec)
	}
	switch rec.Tag {
	case hprof.TagString: // written where first used
		return nil
	case hprof.TagLoadClass:
		return p.loadClass()
	case hprof.TagHeapDumpEnd:
		return p.w.HeapDumpEnd()
	}
	body, err := p.r.Body()
	if err != nil {
		return err
	}
	switch rec.Tag {
	case hprof.TagUnloadClass:
		serial, err := p.dec.ParseSerial(rec, body)
		if err != nil {
			return err
		}
		return p.w.UnloadClass(serial)
	case hprof.TagEndThread:
		serial, err := p.dec.ParseSerial(rec, body)
		if err != nil {
			return err
		}
		return p.w.EndThread(serial)
	case hprof.TagStackFrame:
		return p.stackFrame(rec, body)
	case hprof.TagStackTrace:
		return p.stackTrace(rec, body)
	case hprof.TagStartThread:
		return p.startThread(rec, body)
	}
	return p.w.RawRecord(uint8(rec.Tag), body)
}

// loadClass writes a LOAD CLASS record where the dump has it, unless it
// is written with its class's definition.
func (p *pass2) loadClass() error {
	l := &p.loads[p.loadsSeen]
	p.loadsSeen++
	if l.deferred {
		return nil
	}
	return p.writeLoad(l)
}

// writeLoad writes a LOAD CLASS record, with its time.
func (p *pass2) writeLoad(l *loadInfo) error {
	name, err := p.sid(l.name)
	if err != nil {
		return err
	}
	if err := p.w.Time(l.time); err != nil {
		return err
	}
	return p.w.LoadClass(l.serial, p.obj(l.class), l.trace, name)
}

func (p *pass2) stackFrame(rec hprof.Record, body []byte) error {
	f, err := p.dec.ParseStackFrame(rec, body)
	if err != nil {
		return err
	}
	var ids [3]uint64
	for i, hid := range [3]uint64{f.Method, f.Signature, f.SourceFile} {
		if ids[i], err = p.sid(hid); err != nil {
			return err
		}
	}
	_, err = p.w.StackFrame(ids[0], ids[1], ids[2], f.Class, f.Line)
	return err
}

func (p *pass2) stackTrace(rec hprof.Record, body []byte) error {
	t, err := p.dec.ParseStackTrace(rec, body, p.frames)
	if err != nil {
		return err
	}
	p.frames = t.Frames
	for i, f := range p.frames {
		p.frames[i] = p.state.frames[f]
	}
	return p.w.StackTrace(t.Serial, t.Thread, p.frames)
}

func (p *pass2) startThread(rec hprof.Record, body []byte) error {
	t, err := p.dec.ParseStartThread(rec, body)
	if err != nil {
		return err
	}
	var ids [3]uint64
	for i, hid := range [3]uint64{t.Name, t.Group, t.ParentGroup} {
		if ids[i], err = p.sid(hid); err != nil {
			return err
		}
	}
	return p.w.StartThread(t.Serial, p.obj(t.Object), t.StackTrace, ids[0], ids[1], ids[2])
}

// heapDump writes a heap dump record: the definitions its first chunk
// needs, the HEAP DUMP record, its sub-records with the definitions of
// its later chunks before each, and the place of its last class dumps.
func (p *pass2) heapDump(rec hprof.Record) error {
	if p.clock.record() {
		if err := p.defineChunk(p.clock.chunk); err != nil {
			return err
		}
	}
	if err := p.w.HeapDump(rec.Tag == hprof.TagHeapDumpSegment); err != nil {
		return err
	}
	for s, err := range p.r.SubRecords() {
		if err != nil {
			return err
		}
		p.subCount[s.Tag]++
		if p.clock.next() {
			if err := p.defineChunk(p.clock.chunk); err != nil {
				return err
			}
		}
		if err := p.subRecord(s); err != nil {
			return err
		}
	}
	return p.placeRun()
}

// placeRun writes the place of the class dumps met since the last other
// sub-record.
func (p *pass2) placeRun() error {
	n := p.place
	p.place = 0
	return p.w.PlaceClasses(n)
}

func (p *pass2) subRecord(s *hprof.SubRecord) error {
	if s.Tag == hprof.SubClassDump {
		return p.classDump(s)
	}
	if err := p.placeRun(); err != nil {
		return err
	}
	dropped := p.heap.dropped(p.drop)
	switch {
	case s.Tag == hprof.SubHeapDumpInfo:
		return p.heapInfo(s)
	case s.Tag.IsRoot():
		if dropped {
			return nil
		}
		return p.root(s)
	case dropped:
		return nil
	case s.Tag == hprof.SubInstanceDump:
		return p.instance(s)
	case s.Tag == hprof.SubObjectArrayDump:
		return p.objectArray(s)
	case s.Tag == hprof.SubPrimitiveArrayDump, s.Tag == hprof.SubPrimitiveArrayNoData:
		if err := p.objectStart(s); err != nil {
			return err
		}
		_, err := p.w.PrimitiveArray(bmd.Type(s.ElemType), s.Length, s.Tag == hprof.SubPrimitiveArrayNoData)
		return err
	}
	return nil
}

func (p *pass2) heapInfo(s *hprof.SubRecord) error {
	p.heap.cur, p.heap.set, p.heapName = s.HeapType, true, s.HeapName
	p.heapInfoOut = !p.drop[s.HeapType]
	if !p.heapInfoOut {
		return nil
	}
	name, err := p.sid(s.HeapName)
	if err != nil {
		return err
	}
	return p.w.HeapInfo(s.HeapType, name)
}

// classDump places a class's first dump (its definition was written
// before), or writes another dump of it (a file with several heap dumps)
// where it is.
func (p *pass2) classDump(s *hprof.SubRecord) error {
	k := p.classIdx[s.ID]
	ci := p.classes[k]
	if ci.placed {
		if err := p.placeRun(); err != nil {
			return err
		}
		c, err := p.bmdClass(k, &s.Class)
		if err != nil {
			return err
		}
		c.Redump = true
		_, err = p.w.Class(c)
		return err
	}
	if p.heap.dropped(p.drop) && !p.heapInfoOut {
		// A class is never dropped: name its heap.
		name, err := p.sid(p.heapName)
		if err != nil {
			return err
		}
		if err := p.w.HeapInfo(p.heap.cur, name); err != nil {
			return err
		}
		p.heapInfoOut = true
	}
	if err := p.defineChain(k); err != nil {
		return err
	}
	ci.placed = true
	p.place++
	return nil
}

// defineChain makes sure class k and its super classes are defined (the
// plan of pass 1 has done it before, but for a damaged plan).
func (p *pass2) defineChain(k int) error {
	for j := k; j >= 0 && !p.classes[j].defined; j = p.super(j) {
		if err := p.define(j); err != nil {
			return err
		}
	}
	return nil
}

func (p *pass2) root(s *hprof.SubRecord) error {
	o := p.obj(s.ID)
	if o > p.nObj && o <= p.nObj+uint64(p.dropped.len()) {
		return nil // a root of an object left out with its heap
	}
	return p.w.Root(uint8(s.Tag), o, s.Thread, s.Frame, s.JNIRef, s.StackTrace)
}

// objectStart writes what precedes an object record: its stack trace
// serial, and, in a file where objects are dumped more than once, its ID.
func (p *pass2) objectStart(s *hprof.SubRecord) error {
	if p.redumps {
		if err := p.w.ObjectID(p.obj(s.ID)); err != nil {
			return err
		}
	}
	return p.w.Trace(s.StackTrace)
}

// classOf returns the index of the class of an instance.
func (p *pass2) classOf(s *hprof.SubRecord) (int, error) {
	if o, ok := p.classIndex.lookup(s.ClassID); ok {
		return int(o), nil
	}
	return 0, &hprof.FormatError{Offset: s.Offset, Record: s.Tag.String(), Tag: int(s.Tag), Msg: fmt.Sprintf("instance of class 0x%x, which has no CLASS DUMP", s.ClassID)}
}

func (p *pass2) instance(s *hprof.SubRecord) error {
	k, err := p.classOf(s)
	if err != nil {
		return err
	}
	ci := p.classes[k]
	if ci.chainSize != len(s.Data) {
		return &hprof.FormatError{Offset: s.Offset, Record: s.Tag.String(), Tag: int(s.Tag), Msg: fmt.Sprintf("instance has %d bytes of fields, its class layout %d", len(s.Data), ci.chainSize)}
	}
	if !ci.defined {
		if err := p.defineChain(k); err != nil {
			return err
		}
	}
	p.values = p.values[:0]
	pos := 0
	for _, t := range p.layout(k) {
		v := readValue(s.Data[pos:], t.Size(p.idSize))
		if t == hprof.Object {
			v = p.obj(v)
		}
		p.values = append(p.values, v)
		pos += t.Size(p.idSize)
	}
	if err := p.objectStart(s); err != nil {
		return err
	}
	_, err = p.w.Instance(uint64(k)+1, p.values)
	return err
}

func (p *pass2) objectArray(s *hprof.SubRecord) error {
	p.elems = p.elems[:0]
	for _, e := range s.Elements {
		p.elems = append(p.elems, p.obj(e))
	}
	if err := p.objectStart(s); err != nil {
		return err
	}
	_, err := p.w.ObjectArray(p.obj(s.ClassID), p.elems)
	return err
}

// readValue reads a big-endian value of size bytes.
func readValue(b []byte, size int) uint64 {
	switch size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.BigEndian.Uint16(b))
	case 4:
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

// fillStats counts what went in and out.
func (p *pass2) fillStats(inBytes int64) {
	st := p.stats
	for t := range 256 {
		if p.topCount[t] > 0 {
			st.InRecords[hprof.Tag(t).String()] += p.topCount[t]
			st.InBytesBy[hprof.Tag(t).String()] += p.topBytes[t]
		}
		if p.subCount[t] > 0 {
			st.InRecords[hprof.SubTag(t).String()] += p.subCount[t]
		}
	}
	st.InBytes = inBytes
	st.Objects = p.w.Objects()
	st.Classes = uint64(len(p.classes))
	st.Strings = p.nStrings
	st.Dangling = uint64(len(p.danglingIDs))
	for k := range p.w.Count {
		if p.w.Count[k] > 0 {
			st.OutRecords[bmd.Kind(k).String()] = p.w.Count[k]
			st.OutBytesBy[bmd.Kind(k).String()] = p.w.Bytes[k]
		}
	}
	st.OutBytes = p.w.Written()
}

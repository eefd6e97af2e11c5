package crunch

import (
	"fmt"
	"io"
	"slices"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// pass1 reads the dump once to learn what pass 2 needs before it writes
// anything: the strings and which of them are names, the LOAD CLASS
// records, the class dumps and where each class is first needed, and the
// object IDs (for the dense numbering).
type pass1 struct {
	*state
	r       *hprof.Reader
	dec     hprof.BodyDecoder
	dropIDs idSeq // objects of dropped heaps
	heap    heapTracker
	clock   chunkClock
	// needSeen holds class IDs whose first need is recorded.
	needSeen recentClasses
}

// heapTracker follows the Android heap (HEAP DUMP INFO) that the
// sub-records of a heap dump belong to.
type heapTracker struct {
	cur uint32
	set bool // a HEAP DUMP INFO has been met
}

// dropped reports whether the current heap is one the options leave out.
func (h *heapTracker) dropped(drop map[uint32]bool) bool { return h.set && drop[h.cur] }

// chunkSubRecords is how many heap sub-records a chunk holds at most:
// pass 2 writes the definitions (names, LOAD CLASS, CLASS) that a chunk
// needs right before it, so that a file cut anywhere keeps the objects
// before the cut with their classes.
const chunkSubRecords = 4096

// chunkClock numbers the chunks of a dump the same way in both passes: a
// chunk holds chunkSubRecords sub-records, and starts, when it can, with a
// heap dump record, so that the definitions before it are top-level
// records between two heap dump records. A heap dump record larger than a
// chunk holds several.
type chunkClock struct {
	chunk uint32 // the current chunk
	subs  int    // sub-records of the current chunk so far
	begun bool
}

// record notes the start of a heap dump record, and reports whether it
// starts a new chunk: the first one, or after a full one.
func (c *chunkClock) record() bool {
	if !c.begun || c.subs >= chunkSubRecords {
		if c.begun {
			c.chunk++
		}
		c.begun, c.subs = true, 0
		return true
	}
	return false
}

// next counts a sub-record and reports whether it starts a new chunk
// within a heap dump record.
func (c *chunkClock) next() bool {
	c.subs++
	if c.subs > chunkSubRecords {
		c.chunk++
		c.subs = 1
		return true
	}
	return false
}

func (st *state) runPass1(src io.Reader) error {
	pr := &progressReader{r: src, pass: 1, f: st.opt.Progress}
	r, err := hprof.NewReader(pr)
	if err != nil {
		return err
	}
	r.SkipElements = true // pass 1 needs object IDs, not references
	st.idSize = r.IDSize()
	st.stats.HPROFHeader = r.Header()
	p := &pass1{state: st, r: r, dec: hprof.BodyDecoder{IDSize: st.idSize}}
	for rec, err := range r.Records() {
		if err != nil {
			return err
		}
		if err := p.record(rec); err != nil {
			return err
		}
	}
	return p.finish()
}

// record handles one top-level record.
func (p *pass1) record(rec hprof.Record) error {
	if rec.Tag.IsHeapDump() {
		return p.heapDump()
	}
	switch rec.Tag {
	case hprof.TagString, hprof.TagLoadClass, hprof.TagStackFrame, hprof.TagStartThread:
	default:
		return nil
	}
	body, err := p.r.Body()
	if err != nil {
		return err
	}
	switch rec.Tag {
	case hprof.TagString:
		id, text, err := p.dec.ParseString(rec, body)
		if err != nil {
			return err
		}
		p.addString(id, text)
	case hprof.TagLoadClass:
		lc, err := p.dec.ParseLoadClass(rec, body)
		if err != nil {
			return err
		}
		if _, seen := p.classNames[lc.ClassID]; !seen {
			p.classNames[lc.ClassID] = lc.Name
		}
		p.loads = append(p.loads, loadInfo{serial: lc.Serial, trace: lc.StackTrace, time: rec.Time, class: lc.ClassID, name: lc.Name})
	case hprof.TagStackFrame:
		f, err := p.dec.ParseStackFrame(rec, body)
		if err != nil {
			return err
		}
		p.nFrames++
		if _, dup := p.frames[f.ID]; !dup {
			p.frames[f.ID] = p.nFrames
		}
		p.frameNames = append(p.frameNames, frameNames{f.Method, f.Signature, f.SourceFile, f.Class})
	case hprof.TagStartThread:
		t, err := p.dec.ParseStartThread(rec, body)
		if err != nil {
			return err
		}
		p.threadNames = append(p.threadNames, t.Name, t.Group, t.ParentGroup)
	}
	return nil
}

// heapDump walks the sub-records of a heap dump record.
func (p *pass1) heapDump() error {
	p.clock.record()
	for s, err := range p.r.SubRecords() {
		if err != nil {
			return err
		}
		p.clock.next()
		if err := p.subRecord(s); err != nil {
			return err
		}
	}
	return nil
}

func (p *pass1) subRecord(s *hprof.SubRecord) error {
	switch s.Tag {
	case hprof.SubClassDump, hprof.SubInstanceDump, hprof.SubObjectArrayDump, hprof.SubPrimitiveArrayDump, hprof.SubPrimitiveArrayNoData:
		if s.ID == 0 {
			// 0 is null: no reference could reach it, and a number for it
			// would shift every object after it.
			return &hprof.FormatError{Offset: s.Offset, Record: s.Tag.String(), Tag: int(s.Tag), Msg: "object ID 0 (null)"}
		}
	}
	switch s.Tag {
	case hprof.SubHeapDumpInfo:
		p.heap.cur, p.heap.set = s.HeapType, true
		p.heapsSeen[s.HeapType] = true
		p.heapNames[s.HeapName] = true
	case hprof.SubClassDump:
		return p.classDump(s)
	case hprof.SubInstanceDump, hprof.SubObjectArrayDump, hprof.SubPrimitiveArrayDump, hprof.SubPrimitiveArrayNoData:
		p.addrs.object(s.ID)
		if s.Tag == hprof.SubObjectArrayDump {
			p.addrs.objectArray(s.ID, s.Length)
		}
		if p.heap.dropped(p.drop) {
			p.dropIDs.add(s.ID)
			return nil
		}
		p.objs.add(s.ID)
		if s.Tag == hprof.SubInstanceDump {
			p.need(s.ClassID)
		}
	}
	return nil
}

// classDump records a class dump. A class dumped again (a file with
// several heap dumps) must have the same super class and fields.
func (p *pass1) classDump(s *hprof.SubRecord) error {
	p.addrs.object(s.ID)
	if k, dup := p.classIdx[s.ID]; dup {
		old := p.classes[k].dump
		if old.Super != s.Class.Super || !slices.Equal(old.Fields, s.Class.Fields) {
			return &hprof.FormatError{Offset: s.Offset, Record: s.Tag.String(), Tag: int(s.Tag),
				Msg: fmt.Sprintf("class 0x%x dumped again with another super class or other fields", s.ID)}
		}
		p.stats.Redumps++
		return nil
	}
	p.classIdx[s.ID] = len(p.classes)
	p.classes = append(p.classes, &classInfo{dump: s.Class.Clone(), chunk: noChunk})
	p.need(s.ID)
	return nil
}

// need records that the class with HPROF ID id is needed in the current
// chunk (if it is the first time).
func (p *pass1) need(id uint64) {
	if _, seen := p.needSeen.get(id); seen {
		return
	}
	p.needSeen.put(id, 0)
	if _, ok := p.firstNeed[id]; !ok {
		p.firstNeed[id] = p.clock.chunk
	}
}

// finish turns what pass 1 read into what pass 2 needs.
func (p *pass1) finish() error {
	if err := p.buildIndex(); err != nil {
		return err
	}
	p.keptValues()
	p.optionWarnings()
	p.classifyStrings()
	if err := p.hierarchy(); err != nil {
		return err
	}
	p.planDefinitions()
	return nil
}

// buildIndex numbers the objects: classes first in CLASS DUMP order, then
// the other objects in file order, each distinct ID once.
func (p *pass1) buildIndex() error {
	// Classes apart: their mirrors are spread over the heap, and in the
	// objects' index each would break a run of consecutive ordinals.
	classIDs := make([]uint64, len(p.classes))
	for i, c := range p.classes {
		classIDs[i] = c.dump.ID
	}
	p.classIndex, _ = newDedupedIDIndex(classIDs)
	var dups int
	p.index, dups = buildIDIndex(&p.objs)
	p.objs.release()
	p.nObj = uint64(len(p.classes) + p.index.len())
	p.rank, p.objBase = p.index.rank, uint64(len(p.classes))+1
	p.redumps = dups > 0 || p.stats.Redumps > 0
	p.stats.Redumps += uint64(dups)
	for _, c := range p.classes {
		if _, ok := p.index.lookup(c.dump.ID); ok {
			return fmt.Errorf("crunch: object 0x%x is dumped both as a class and as another object", c.dump.ID)
		}
	}
	p.dropped, _ = buildIDIndex(&p.dropIDs)
	p.dropIDs.release()
	p.stats.Dropped = uint64(p.dropped.len())
	p.stats.IndexBytes = p.classIndex.bytes() + p.index.bytes() + p.dropped.bytes()
	return nil
}

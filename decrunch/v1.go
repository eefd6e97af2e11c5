package decrunch

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// Source is what Decrunch reads: a version 2 *bmd.Reader, or a version 1
// file through NewV1Source, which presents its records as version 2
// records.
type Source interface {
	Next() (*bmd.Record, error)
	Metadata() bmd.Metadata
	Layout(class uint64) ([]bmd.Field, bool)
}

// FillerName is the name of the instance fields that stand for the
// primitive fields a version 1 file dropped (its "discarded field size"):
// the original decruncher's name.
const FillerName = "field_removed"

// fillerSID is the string ID of FillerName in the records of a V1Source:
// above every ID a version 1 file can use with 4-byte HPROF IDs.
const fillerSID = 1<<29 - 1

// maxV1Instance bounds the HPROF size of one instance decoded from a
// version 1 file (kept fields and fillers): far above what a JVM allows,
// far below what would exhaust memory.
const maxV1Instance = 1 << 20

// V1Source reads a BMD version 1 file and presents it as the version 2
// records Decrunch writes, filling in what version 1 does not store
// (spec/bmd.md §11.6):
//
//   - every class gets a LOAD CLASS record with a serial, unless the file
//     has one for it (files written by this project keep them as LEGACY
//     records);
//   - the discarded primitive fields of a class become int and byte fields
//     named "field_removed" after its kept fields, with zero values, so that
//     instance sizes are kept;
//   - every root becomes ROOT UNKNOWN; there is one heap dump, in the
//     default heap; objects have stack trace serial 0;
//   - LEGACY records are converted when their IDs mean something in the
//     file (files written by this project, recognised by their first
//     STRING, spec/bmd.md §11.5); in files of the original cruncher they
//     hold the dump's original IDs, which nothing in the file maps, and
//     those that hold IDs or serials are dropped.
//
// Warnings lists what was filled in or dropped.
type V1Source struct {
	r       *bmd.V1Reader
	meta    bmd.Metadata
	trusted bool // LEGACY records use the file's IDs (this project's marker)

	held    *bmd.V1Record // first record, read by NewV1Source, not the marker
	queue   []*bmd.Record
	pending []*bmd.V1Class // class definitions read, not yet given out
	rec     bmd.Record
	lay     []bmd.Field
	dec     hprof.BodyDecoder

	inHeap, eof, fillerOut bool
	// failed is a read error met while class definitions were pending:
	// they are given out first (salvage keeps them), then the error.
	failed     error
	placeAmong bool              // Android: classes placed among the objects
	toPlace    []uint64          // classes defined, to place after the next object
	loaded     map[uint32]bool   // classes with a LOAD CLASS given out
	synth      map[uint32]bool   // classes given a made-up LOAD CLASS
	sizes      map[uint32]v1Size // instance data size per class (instanceSize)
	sizePath   []v1Step          // instanceSize's scratch
	sizeSteps  int64             // classes and sizes instanceSize has visited, for tests
	nextSerial uint32
	fillers    int64 // filler fields of the classes read
	roots      []uint32
	rootAt     int
	sawRoots   bool

	// counts for the warnings
	nSynth, nFiller, nLegacyLate uint64
	dropped                      map[string]uint64
	badLegacy                    map[string]uint64
	badVersion                   bool
}

// NewV1Source reads the header (and the marker STRING, if any) of the
// version 1 file in r.
func NewV1Source(r io.Reader) (*V1Source, error) {
	vr, err := bmd.NewV1Reader(r)
	if err != nil {
		return nil, err
	}
	s := &V1Source{r: vr, dec: hprof.BodyDecoder{IDSize: 4}, loaded: map[uint32]bool{}, synth: map[uint32]bool{}, nextSerial: 1,
		dropped: map[string]uint64{}, badLegacy: map[string]uint64{}}
	s.meta = bmd.Metadata{HPROFVersion: string(vr.Metadata()), IDSize: 4, Hash: bmd.HashJava}
	if !plausibleVersion(vr.Metadata()) {
		s.meta.HPROFVersion, s.badVersion = hprof.Version102, true
	}
	// Android VMs dump their class objects among the other objects,
	// where analyzers (VisualVM) count them as instances of
	// java.lang.Class; version 1 has no place for them: they go after
	// the first object that follows their definitions.
	s.placeAmong = s.meta.HPROFVersion == hprof.Version103
	s.meta.ClassesPlaced = s.placeAmong
	first, err := vr.Next()
	switch {
	case err == io.EOF:
		s.eof = true
	case err != nil:
		return nil, err
	case first.Tag == bmd.V1String && bmd.ParseV1Marker(first.Text, &s.meta):
		s.meta.Hash = bmd.HashJava
		s.trusted = true
	default:
		s.held = first
	}
	return s, nil
}

// plausibleVersion reports whether the metadata can be an HPROF header's
// version text: "JAVA PROFILE " and printable ASCII.
func plausibleVersion(b []byte) bool {
	if len(b) > 64 || !bytes.HasPrefix(b, []byte("JAVA PROFILE ")) {
		return false
	}
	for _, c := range b {
		if c < 0x20 || c > 0x7E {
			return false
		}
	}
	return true
}

// Metadata returns the file's metadata: the HPROF version text of its
// header, and what this project's marker adds (identifier size, timestamp,
// tool, options); the hash is always bmd.HashJava.
func (s *V1Source) Metadata() bmd.Metadata { return s.meta }

// Trusted reports whether the file carries this project's marker: its
// LEGACY records were rewritten with the file's own IDs.
func (s *V1Source) Trusted() bool { return s.trusted }

// Layout returns the fields of the last INSTANCE returned by Next when
// class is its class: the kept fields and fillers of each class of the
// chain. It is valid until the next call to Next.
func (s *V1Source) Layout(class uint64) ([]bmd.Field, bool) {
	if s.rec.Kind == bmd.KindInstance && s.rec.Class == class {
		return s.lay, true
	}
	return s.buildLayout(uint32(class), false, nil)
}

// buildLayout flattens the chain of class id, fillers included, into
// s.lay; with withValues it also builds the values matching it from vals
// (the kept fields' values; zero for fillers) into s.rec.Values.
func (s *V1Source) buildLayout(id uint32, withValues bool, vals []uint64) ([]bmd.Field, bool) {
	s.lay = s.lay[:0]
	out := s.rec.Values[:0]
	i, size := 0, 0
	ok := s.r.Chain(id, func(c *bmd.V1Class) bool {
		for _, f := range c.Fields {
			s.lay = append(s.lay, bmd.Field{Name: f.Name, Type: f.Type, Kept: true})
			if withValues && i < len(vals) {
				out = append(out, vals[i])
			}
			i++
			size += typeSize(f.Type, s.meta.IDSize)
		}
		for _, f := range fillers(c) {
			s.lay = append(s.lay, f)
			if withValues {
				out = append(out, 0)
			}
		}
		size += int(c.Discarded)
		return size <= maxV1Instance
	})
	if withValues {
		s.rec.Values = out
		ok = ok && len(out) == len(s.lay)
	}
	return s.lay, ok && size <= maxV1Instance
}

func typeSize(t bmd.Type, idSize int) int {
	if t == bmd.Object {
		return idSize
	}
	return t.Size()
}

// fillers returns the fields that stand for the discarded fields of c:
// ints, then bytes for the rest, as the original decruncher made them;
// or, where those and c's own fields would be more than the 65535 a
// CLASS DUMP holds, the fewest fields the bytes can be (bmd.MinFields):
// longs, then an int, a short and a byte as the rest needs. The reader
// refuses a class for which even those are too many.
func fillers(c *bmd.V1Class) []bmd.Field {
	n := c.Discarded
	if len(c.Fields)+fillerCount(n) <= 0xFFFF {
		fs := make([]bmd.Field, 0, fillerCount(n))
		for ; n >= 4; n -= 4 {
			fs = append(fs, bmd.Field{Name: fillerSID, Type: bmd.Int})
		}
		for ; n > 0; n-- {
			fs = append(fs, bmd.Field{Name: fillerSID, Type: bmd.Byte})
		}
		return fs
	}
	fs := make([]bmd.Field, 0, bmd.MinFields(n))
	for ; n >= 8; n -= 8 {
		fs = append(fs, bmd.Field{Name: fillerSID, Type: bmd.Long})
	}
	for _, f := range [...]struct {
		size uint32
		t    bmd.Type
	}{{4, bmd.Int}, {2, bmd.Short}, {1, bmd.Byte}} {
		if n >= f.size {
			fs = append(fs, bmd.Field{Name: fillerSID, Type: f.t})
			n -= f.size
		}
	}
	return fs
}

// A class of a version 1 file stores the size of its discarded fields in a
// varint of up to 3 bytes, and gets a filler field per 4 or 8 bytes of it
// (fillers): up to 65535 fields, held with its CLASS record and its CLASS
// DUMP, from 10 bytes. A fixed allowance plus an amount per byte read
// bounds the filler fields of a file's classes (counted by fillerCount,
// 131,070 at most a class): the corpus dialer dump's version 1 file has
// 3,894 in 930 KB (0.01 per byte); 10,000 crafted classes of 10 bytes
// would have 1.3 G.
const (
	maxV1Fillers     = 1 << 20
	v1FillersPerByte = 1
)

// fillerCount returns how many filler fields the original decruncher made
// for n bytes: as many as fillers returns, or more.
func fillerCount(n uint32) int { return int(n/4 + n%4) }

func (s *V1Source) push(r bmd.Record) { s.queue = append(s.queue, &r) }

// Next returns the next record, in the order Decrunch needs: LOAD CLASS
// records and strings outside the heap dump, one heap dump for classes,
// objects and roots.
func (s *V1Source) Next() (*bmd.Record, error) {
	for {
		if len(s.queue) > 0 {
			r := s.queue[0]
			s.queue = s.queue[1:]
			if len(s.queue) == 0 {
				s.queue = nil
			}
			s.rec = *r
			return &s.rec, nil
		}
		if s.rootAt < len(s.roots) {
			s.rec = bmd.Record{Kind: bmd.KindRoot, Tag: 0xFF, Object: uint64(s.roots[s.rootAt]), Values: s.rec.Values[:0]}
			s.rootAt++
			return &s.rec, nil
		}
		if s.failed != nil {
			return nil, s.failed
		}
		if s.eof {
			return nil, io.EOF
		}
		var v *bmd.V1Record
		if s.held != nil {
			v, s.held = s.held, nil
		} else {
			var err error
			v, err = s.r.Next()
			if err == io.EOF {
				s.eof = true
				s.flushClasses()
				s.place()
				if s.inHeap {
					s.push(bmd.Record{Kind: bmd.KindHeapDumpEnd})
				}
				continue
			}
			if err != nil {
				if len(s.pending) > 0 {
					s.flushClasses()
					s.failed = err
					continue
				}
				return nil, err
			}
		}
		if v.Tag == bmd.V1ClassDefinition {
			s.fillers += int64(fillerCount(v.Class.Discarded))
			if s.fillers > maxV1Fillers+v1FillersPerByte*v.Offset {
				err := &bmd.FormatError{Offset: v.Offset, Record: v.Tag.String(),
					Msg: fmt.Sprintf("class %d: the discarded fields of the classes (%d filler fields) are implausibly many for the size of the file", v.Class.ID, s.fillers)}
				if len(s.pending) > 0 {
					s.flushClasses()
					s.failed = err
					continue
				}
				return nil, err
			}
			s.pending = append(s.pending, v.Class.Clone())
			continue
		}
		s.flushClasses()
		if len(s.queue) > 0 {
			// What flushClasses queued goes first; come back for v.
			s.requeue(v)
			continue
		}
		if rec, err := s.convert(v); err != nil {
			return nil, err
		} else if rec != nil {
			switch rec.Kind {
			case bmd.KindInstance, bmd.KindObjectArray, bmd.KindPrimitiveArray:
				s.place() // given out after rec
			}
			return rec, nil
		}
	}
}

// flushClasses queues the class definitions read so far: LOAD CLASS
// records for those without one, the filler name, a HEAP DUMP if none is
// open, then the CLASS records.
func (s *V1Source) flushClasses() {
	if len(s.pending) == 0 {
		return
	}
	for _, c := range s.pending {
		if !s.loaded[c.ID] {
			s.loaded[c.ID], s.synth[c.ID] = true, true
			s.nSynth++
			s.push(bmd.Record{Kind: bmd.KindLoadClass, Serial: s.nextSerial, Class: uint64(c.ID), Name: uint64(c.Name)})
			s.nextSerial++
		}
	}
	if !s.fillerOut {
		for _, c := range s.pending {
			if c.Discarded > 0 {
				s.push(bmd.Record{Kind: bmd.KindString, ID: fillerSID, Text: []byte(FillerName), Length: uint64(len(FillerName))})
				s.fillerOut = true
				break
			}
		}
	}
	s.openHeap()
	for _, c := range s.pending {
		d := bmd.Class{Index: uint64(c.ID), Super: uint64(c.Super), Constants: c.Constants, Statics: c.Statics}
		for _, f := range c.Fields {
			d.Fields = append(d.Fields, bmd.Field{Name: f.Name, Type: f.Type, Kept: true})
		}
		if c.Discarded > 0 {
			s.nFiller++
			d.Fields = append(d.Fields, fillers(c)...)
		}
		// The instance size is the size of an INSTANCE DUMP's data: the
		// fields of the class and of its super classes, as HotSpot counts.
		d.InstanceSize = uint32(min(s.instanceSize(c.ID), maxV1Instance))
		s.push(bmd.Record{Kind: bmd.KindClass, ID: uint64(c.ID), Def: d})
		if s.placeAmong {
			s.toPlace = append(s.toPlace, uint64(c.ID))
		}
	}
	s.pending = s.pending[:0]
}

// place queues the PLACE CLASSES records of the classes defined since the
// last object (Android files only).
func (s *V1Source) place() {
	for _, id := range s.toPlace {
		s.push(bmd.Record{Kind: bmd.KindPlaceClasses, ID: id, Length: 1})
	}
	s.toPlace = s.toPlace[:0]
}

// v1Size is what instanceSize remembers of a class: the size of the data
// of its fields and of its super classes' up to top, the first super class
// that was not defined when it was computed (0 if none). Once top is
// defined, the size goes on from top's.
type v1Size struct {
	size    int
	top     uint32
	walking bool // on the path of the instanceSize running: a cycle
}

// v1Step is a class on instanceSize's path and the bytes it adds: its own
// fields', or those up to the top of a size remembered before top was
// defined.
type v1Step struct {
	id  uint32
	add int
}

// instanceSize returns the size of the data of an instance of class id:
// its kept and discarded fields and those of its super classes, up to the
// first super class not defined or, in a cycle, to a class already
// counted. Sizes are remembered per class, each with the super class not
// defined where it stopped: a size whose top has since been defined is
// continued from top's, and the sizes on the way are updated to the new
// top (as a union-find's paths are compressed). So every class's own
// fields are added once, and a class defined late under a long line of
// classes costs a step or two, not the line again.
func (s *V1Source) instanceSize(id uint32) int {
	if s.sizes == nil {
		s.sizes = map[uint32]v1Size{}
	}
	path := s.sizePath[:0]
	base, top := 0, uint32(0)
	for cur := id; cur != 0; {
		s.sizeSteps++
		if e, ok := s.sizes[cur]; ok {
			if e.walking {
				base, path = s.cycleSize(path, cur)
				break
			}
			if e.top == 0 || !s.defined(e.top) {
				base, top = e.size, e.top
				break
			}
			path = append(path, v1Step{cur, e.size})
			s.sizes[cur] = v1Size{walking: true}
			cur = e.top
			continue
		}
		k, ok := s.r.Class(cur)
		if !ok {
			top = cur
			break
		}
		own := int(k.Discarded)
		for _, f := range k.Fields {
			own += typeSize(f.Type, s.meta.IDSize)
		}
		path = append(path, v1Step{cur, own})
		s.sizes[cur] = v1Size{walking: true}
		cur = k.Super
	}
	for i := len(path) - 1; i >= 0; i-- {
		base = min(base+path[i].add, maxV1Instance+1)
		s.sizes[path[i].id] = v1Size{size: base, top: top}
	}
	s.sizePath = path[:0]
	return base
}

// defined reports whether class id is defined in the file read so far.
func (s *V1Source) defined(id uint32) bool {
	_, ok := s.r.Class(id)
	return ok
}

// cycleSize returns the size of a cycle of classes, the end of path from
// class cur, each class counted once, and gives it to each of them: the
// size of each class of a cycle. It returns path without them: the
// classes before the cycle, which add their own sizes to it.
func (s *V1Source) cycleSize(path []v1Step, cur uint32) (int, []v1Step) {
	j := len(path) - 1
	for j > 0 && path[j].id != cur {
		j--
	}
	size := 0
	for _, st := range path[j:] {
		size = min(size+st.add, maxV1Instance+1)
	}
	for _, st := range path[j:] {
		s.sizes[st.id] = v1Size{size: size}
	}
	return size, path[:j]
}

func (s *V1Source) openHeap() {
	if !s.inHeap {
		s.inHeap = true
		s.push(bmd.Record{Kind: bmd.KindHeapDump, Segment: true})
	}
}

func (s *V1Source) checkID(v uint32, what string, off int64) error {
	if s.meta.IDSize == 4 && v >= fillerSID {
		return &bmd.FormatError{Offset: off, Record: what, Msg: fmt.Sprintf("ID %d is too large for an HPROF file with 4-byte identifiers", v)}
	}
	return nil
}

// convert turns one version 1 record (not a class) into the record to
// return, or queues records and returns nil.
func (s *V1Source) convert(v *bmd.V1Record) (*bmd.Record, error) {
	rec := &s.rec
	*rec = bmd.Record{Offset: v.Offset, Values: rec.Values[:0], Elements: rec.Elements[:0], Frames: rec.Frames[:0]}
	switch v.Tag {
	case bmd.V1String, bmd.V1HashedString:
		if err := s.checkID(v.ID, v.Tag.String(), v.Offset); err != nil {
			return nil, err
		}
		rec.ID = uint64(v.ID)
		if v.Tag == bmd.V1String {
			rec.Kind, rec.Text, rec.Length = bmd.KindString, v.Text, uint64(len(v.Text))
		} else {
			rec.Kind, rec.Length, rec.Hash = bmd.KindHashedString, uint64(v.Length), uint64(uint32(v.Hash))
		}
	case bmd.V1InstanceDump:
		if err := s.checkID(v.ID, v.Tag.String(), v.Offset); err != nil {
			return nil, err
		}
		if !s.inHeap {
			// The heap dump opens first; come back for this record.
			s.openHeap()
			return nil, s.requeue(v)
		}
		rec.Kind, rec.ID, rec.Class = bmd.KindInstance, uint64(v.ID), uint64(v.Of)
		if _, ok := s.buildLayout(v.Of, true, v.Values); !ok {
			return nil, &bmd.FormatError{Offset: v.Offset, Record: v.Tag.String(), Msg: fmt.Sprintf("instance of class %d larger than %d bytes", v.Of, maxV1Instance)}
		}
	case bmd.V1ObjectArray:
		if err := s.checkID(v.ID, v.Tag.String(), v.Offset); err != nil {
			return nil, err
		}
		if !s.inHeap {
			s.openHeap()
			return nil, s.requeue(v)
		}
		rec.Kind, rec.ID, rec.Class, rec.Count = bmd.KindObjectArray, uint64(v.ID), uint64(v.Of), uint32(len(v.IDs))
		for _, e := range v.IDs {
			rec.Elements = append(rec.Elements, uint64(e))
		}
	case bmd.V1PrimitiveArray:
		if err := s.checkID(v.ID, v.Tag.String(), v.Offset); err != nil {
			return nil, err
		}
		if !s.inHeap {
			s.openHeap()
			return nil, s.requeue(v)
		}
		rec.Kind, rec.ID, rec.Type, rec.Count = bmd.KindPrimitiveArray, uint64(v.ID), v.Type, v.Count
	case bmd.V1RootObjects:
		if !s.inHeap {
			s.openHeap()
			return nil, s.requeue(v)
		}
		s.sawRoots = true
		s.roots = append(s.roots[:0], v.IDs...)
		s.rootAt = 0
		return nil, nil
	case bmd.V1Legacy:
		return s.legacy(v)
	}
	return rec, nil
}

// requeue keeps a record for after the queued records; its data is copied
// out of the reader's buffers.
func (s *V1Source) requeue(v *bmd.V1Record) error {
	c := *v
	c.Values = append([]uint64(nil), v.Values...)
	c.IDs = append([]uint32(nil), v.IDs...)
	c.Text = append([]byte(nil), v.Text...)
	s.held = &c
	return nil
}

// legacy converts a LEGACY record. In a file with this project's marker the
// bodies use the file's IDs at 4 bytes and are converted to records; in
// other files only records without IDs or serials are kept.
func (s *V1Source) legacy(v *bmd.V1Record) (*bmd.Record, error) {
	rec := &s.rec
	tag := hprof.Tag(v.HTag)
	hr := hprof.Record{Tag: tag, Offset: v.Offset, Length: uint32(len(v.Text))}
	if !s.trusted {
		switch tag {
		case hprof.TagHeapSummary, hprof.TagControlSettings:
			rec.Kind, rec.Tag, rec.Text = bmd.KindRawRecord, v.HTag, v.Text
			return rec, nil
		}
		s.dropped[tag.String()]++
		return nil, nil
	}
	bad := func(err error) (*bmd.Record, error) {
		s.badLegacy[tag.String()]++
		return nil, nil
	}
	switch tag {
	case hprof.TagLoadClass:
		lc, err := s.dec.ParseLoadClass(hr, v.Text)
		if err != nil || len(v.Text) != 16 {
			return bad(err)
		}
		if s.synth[uint32(lc.ClassID)] {
			// a LOAD CLASS was made up for it already
			s.nLegacyLate++
			return nil, nil
		}
		s.loaded[uint32(lc.ClassID)] = true
		if lc.Serial >= s.nextSerial {
			s.nextSerial = lc.Serial + 1
		}
		rec.Kind, rec.Serial, rec.Class, rec.Trace, rec.Name = bmd.KindLoadClass, lc.Serial, lc.ClassID, lc.StackTrace, lc.Name
	case hprof.TagUnloadClass, hprof.TagEndThread:
		serial, err := s.dec.ParseSerial(hr, v.Text)
		if err != nil || len(v.Text) != 4 {
			return bad(err)
		}
		rec.Kind, rec.Serial = bmd.KindUnloadClass, serial
		if tag == hprof.TagEndThread {
			rec.Kind = bmd.KindEndThread
		}
	case hprof.TagStackFrame:
		f, err := s.dec.ParseStackFrame(hr, v.Text)
		if err != nil || len(v.Text) != 24 {
			return bad(err)
		}
		rec.Kind, rec.ID, rec.Method, rec.Signature, rec.Source, rec.ClassSerial, rec.Line = bmd.KindStackFrame, f.ID, f.Method, f.Signature, f.SourceFile, f.Class, f.Line
	case hprof.TagStackTrace:
		t, err := s.dec.ParseStackTrace(hr, v.Text, rec.Frames)
		if err != nil || len(v.Text) != 12+4*len(t.Frames) {
			return bad(err)
		}
		rec.Kind, rec.Serial, rec.Thread, rec.Frames = bmd.KindStackTrace, t.Serial, t.Thread, t.Frames
	case hprof.TagStartThread:
		t, err := s.dec.ParseStartThread(hr, v.Text)
		if err != nil || len(v.Text) != 24 {
			return bad(err)
		}
		rec.Kind, rec.Serial, rec.Object, rec.Trace, rec.Name, rec.Group, rec.Parent = bmd.KindStartThread, t.Serial, t.Object, t.StackTrace, t.Name, t.Group, t.ParentGroup
	case hprof.TagString, hprof.TagHeapDump, hprof.TagHeapDumpSegment, hprof.TagHeapDumpEnd:
		// never written by this project: an HPROF heap dump inside would
		// need its IDs mapped
		return bad(nil)
	default:
		rec.Kind, rec.Tag, rec.Text = bmd.KindRawRecord, v.HTag, v.Text
	}
	return rec, nil
}

// Warnings lists what decrunching a version 1 file filled in or dropped,
// one line per kind, once the file has been read; roots is how many roots
// were written (all ROOT UNKNOWN: the file's, unless damage or an error
// cut the output short).
func (s *V1Source) Warnings(roots uint64) []string {
	var out []string
	if roots > 0 {
		out = append(out, fmt.Sprintf("%d GC roots written as ROOT UNKNOWN: BMD v1 does not record root kinds", roots))
	}
	if !s.sawRoots && s.eof {
		out = append(out, "no ROOT OBJECTS record: the file may be truncated (the original cruncher writes it last)")
	}
	if s.nSynth > 0 {
		out = append(out, fmt.Sprintf("%d classes given a LOAD CLASS record with a new serial: BMD v1 did not keep theirs", s.nSynth))
	}
	if s.nFiller > 0 {
		out = append(out, fmt.Sprintf("%d classes have int and byte fields named %s standing for the primitive fields BMD v1 dropped (values 0)", s.nFiller, FillerName))
	}
	if s.nLegacyLate > 0 {
		out = append(out, fmt.Sprintf("%d LOAD CLASS records dropped: they came after their class", s.nLegacyLate))
	}
	if len(s.dropped) > 0 {
		out = append(out, "legacy records dropped, their IDs and serials are the original dump's, which the file does not map: "+countList(s.dropped))
	}
	if len(s.badLegacy) > 0 {
		out = append(out, "malformed legacy records dropped: "+countList(s.badLegacy))
	}
	if s.badVersion {
		out = append(out, fmt.Sprintf("the header's metadata %q is not an HPROF version: wrote %s", s.r.Metadata(), hprof.Version102))
	}
	return out
}

func countList(m map[string]uint64) string {
	var l []string
	for k, n := range m {
		l = append(l, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(l)
	return strings.Join(l, ", ")
}

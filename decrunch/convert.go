package decrunch

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
	"google.golang.org/protobuf/encoding/protowire"
)

// Decrunch reads the BMD file in src (version 2, or version 1 of the
// original tools, told apart by the header) and writes the HPROF dump to
// out. It reads src twice from its start. In the first pass it writes the
// names (STRING records) and LOAD CLASS records: a BMD file has them just
// before the objects that need them, so that a truncated file keeps what
// precedes the cut, while an HPROF reader needs them before the heap dump
// (Eclipse MAT names classes and fields as it reads their class dumps;
// VisualVM's library takes everything from the first heap dump segment to
// HEAP DUMP END for sub-records). In the second pass it writes everything
// else.
func Decrunch(src io.ReadSeeker, out io.Writer, opt Options) (*Stats, error) {
	c := &converter{opt: opt, src: src, unplaced: map[uint64]*hprof.ClassDump{}, texts: []string{""}}
	first, err := c.open()
	if err != nil {
		return nil, err
	}
	c.meta = first.Metadata()
	c.st = &Stats{Metadata: c.meta}
	version := c.meta.HPROFVersion
	if version == "" {
		version = hprof.Version102
	}
	c.out = &countWriter{w: out, max: opt.MaxOutput}
	if c.w, err = hprof.NewWriter(c.out, hprof.Header{Version: version, IDSize: c.meta.IDSize, Timestamp: c.meta.Timestamp}); err != nil {
		return nil, err
	}
	c.w.SegmentSize = opt.SegmentSize
	c.enc = c.w.Encoder()
	c.ids = newObjectIDs(&c.meta)
	c.nameMax = ^uint64(0) >> 3
	if c.meta.IDSize == 4 {
		c.nameMax = math.MaxUint32 >> 3
	}
	if opt.Mapping != nil {
		c.rn = newRenamer()
	}
	if r, ok := first.(*bmd.Reader); ok {
		r.SkipValues = true  // the first pass needs no values,
		r.SkipObjects = true // nor the objects of OBJECTS runs,
		c.enums = newEnumNames(r, slices.Concat(c.meta.Labels, opt.Labels))
		c.enums.start(r) // but those of enum constants and their names, and the main thread's (enumnames.go)
	}
	errA := c.firstPass(first)
	if errA != nil && !salvageable(errA, opt) {
		return nil, errA
	}
	var oe *IDOverflowError
	if errors.As(errA, &oe) {
		// In a LOAD CLASS record: the second pass would write records
		// whose names and LOAD CLASS records the first did not reach.
		return c.finish(errA, first)
	}
	if opt.MaxOutput > 0 && c.estimate > opt.MaxOutput {
		// What the heap records ask for, counted by the first pass:
		// refused before any of it is written.
		return nil, &OutputLimitError{Limit: opt.MaxOutput}
	}
	if c.enums != nil && errA == nil {
		c.findEnumNames()
	} else if c.enums != nil {
		c.enums.fixes = nil // the first pass met damage: none
	}
	if c.enums != nil && len(c.enums.fixes) == 0 {
		c.enums = nil // nothing for the writing pass to look for
	}
	second, err := c.open()
	if err != nil {
		return nil, err
	}
	if r, ok := second.(*bmd.Reader); ok {
		r.MaxElements = maxArrayWhole // longer object arrays in pieces
	}
	errB := c.locate(secondPass(c, second))
	return c.finish(cmpErr(errA, errB), first)
}

// cmpErr returns the error that ended the reading: the second pass meets
// the damage the first met, unless the first pass failed on its own.
func cmpErr(a, b error) error {
	if b != nil {
		return b
	}
	return a
}

// converter writes the HPROF of one BMD file.
type converter struct {
	opt  Options
	src  io.ReadSeeker
	meta bmd.Metadata
	st   *Stats
	out  *countWriter
	w    *hprof.Writer
	enc  hprof.BodyEncoder
	ids  objectIDs
	rn   *renamer

	enums *enumNames // the enum constants' names and the main thread's to write (enumnames.go), or nil

	source     Source // the one being read
	idOverflow bool
	overWhat   string // IDOverflowError.What of the first ID too large
	nameMax    uint64 // the largest string or frame ID that gives a valid HPROF ID
	time       uint32
	texts      []string // string ID -> name as written
	textBytes  int64    // bytes of the texts that the converter made (see name)
	body       []byte
	s          hprof.SubRecord
	inHeap     bool
	heapSeg    bool
	unplaced   map[uint64]*hprof.ClassDump // class dumps waiting for PLACE CLASSES, by class index
	nameBuf    []byte                      // the text of the last array name or hashed name
	inst       []byte                      // the field data of an instance whose shape is not remembered (instance)
	estimate   int64                       // bytes of instance data and array elements (first pass)
	shapes     []*classShape               // class index -> its shape, if remembered
	shapeLen   int                         // fields of the shapes remembered
	scratch    classShape                  // a shape not remembered
	arrayLeft  uint32                      // elements still to come of an object array written in pieces (beginArray)
	arrayID    uint64                      // that array's dense ID
	objRecords uint64                      // the object records the second pass has begun to write, for locate
	piecesOf   *bmd.Record                 // the array whose pieces the reader of runAhead reads next (aheadPiece)
	// The objects the reader of runAhead may still read, and whether it
	// stopped at that (see fill).
	aheadLeft    uint64
	aheadStopped bool
	spareBatches []*aheadBatch // runAhead's, kept for its next call
}

// open returns a Source reading src from its start.
func (c *converter) open() (Source, error) {
	if _, err := c.src.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	var head [64]byte
	n, _ := io.ReadFull(c.src, head[:])
	if _, err := c.src.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	r, v1, err := OpenSource(c.src, head[:n])
	if err != nil {
		return nil, err
	}
	if t, ok := c.opt.Names.(*NameTable); ok && v1 {
		c.opt.Names = t.ForHash(bmd.HashJava)
	}
	return r, nil
}

// OpenSource returns a Source reading a BMD file of either version from
// r, whose first bytes are prefix (its first 64 bytes, or all of a
// shorter file; r must still yield them), and whether it is version 1.
// The version is the one bmd.Sniff recognises; a file whose version
// number is 1 but whose header is not (the number written in any number
// of bytes, as a varint may be) goes to the version 1 reader too, which
// says what is wrong and where.
func OpenSource(r io.Reader, prefix []byte) (src Source, v1 bool, err error) {
	version, k := protowire.ConsumeVarint(prefix)
	if bmd.Sniff(prefix) == bmd.Version1 || bmd.Sniff(prefix) == 0 && k > 0 && int32(version) == bmd.Version1 {
		v, err := NewV1Source(r)
		if err != nil {
			return nil, true, err
		}
		return v, true, nil
	}
	v, err := bmd.NewReader(r)
	if err != nil {
		return nil, false, err
	}
	return v, false, nil
}

// overflowed returns an *IDOverflowError once an object ID made so far
// was too large for the file's ID size, else nil.
func (c *converter) overflowed() error {
	if c.idOverflow {
		return &IDOverflowError{IDSize: c.meta.IDSize, What: c.overWhat}
	}
	return nil
}

// placeOverflow gives an *IDOverflowError that err holds, and that has
// no place yet, the place of the record rec that held it; it returns err.
func placeOverflow(err error, rec *bmd.Record) error {
	return placeOverflowAt(err, rec.Kind, rec.Offset)
}

// placeOverflowAt is placeOverflow for a record of kind kind at offset
// off.
func placeOverflowAt(err error, kind bmd.Kind, off int64) error {
	var oe *IDOverflowError
	if err != nil && errors.As(err, &oe) && oe.Record == "" {
		oe.Record, oe.Offset = kind.String(), off
	}
	return err
}

// overflowIn is placeOverflow for an object record that the second pass
// met in a batch, without its offset: the object's kind and dense ID, and
// how many object records the pass had begun with it (c.objRecords), for
// locate to find it by. The ID alone would not do: a damaged or forged
// file may give two objects one ID, and the first of them need not be
// the one that failed (FuzzSecondPassWays).
func (c *converter) overflowIn(err error, kind bmd.Kind, id uint64) error {
	var oe *IDOverflowError
	if err != nil && errors.As(err, &oe) && oe.Record == "" {
		oe.Record, oe.Offset, oe.kind, oe.object, oe.nth = kind.String(), -1, kind, id, c.objRecords
	}
	return err
}

// begun counts an object record that the second pass begins to write
// (see overflowIn).
func (c *converter) begun() { c.objRecords++ }

// locate finds the offset of the object record of an *IDOverflowError in
// err that overflowIn placed, reading the file again (an error path: the
// batches of the second pass carry no offsets): the pass's nth object
// record, if it is of the kind and ID the error names. Where it cannot,
// the error says no place.
func (c *converter) locate(err error) error {
	var oe *IDOverflowError
	if !errors.As(err, &oe) || oe.Offset >= 0 || oe.Record == "" {
		return err
	}
	kind, id, nth := oe.kind, oe.object, oe.nth
	oe.Record, oe.kind, oe.object, oe.nth = "", 0, 0, 0 // as the error of one goroutine
	src, oerr := c.open()
	if oerr != nil {
		return err
	}
	for n := uint64(0); n < nth; {
		rec, rerr := src.Next()
		if rerr != nil {
			return err
		}
		if !isObject(rec.Kind) {
			continue
		}
		if n++; n == nth && rec.Kind == kind && rec.ID == id {
			oe.Record, oe.Offset = rec.Kind.String(), rec.Offset
		}
	}
	return err
}

// isObject reports whether records of kind k are objects of the heap,
// those the second pass counts (converter.begun).
func isObject(k bmd.Kind) bool {
	switch k {
	case bmd.KindInstance, bmd.KindObjectArray, bmd.KindPrimitiveArray, bmd.KindPrimitiveNoData:
		return true
	}
	return false
}

// firstPass reads the records of r, giving each to names, until the end or
// the first error. The names it writes, first in the file, have time 0:
// with their own times (a LOAD CLASS's) or the time of where they were
// (a STRING's), moved, the times would go back before the first heap dump,
// which Eclipse MAT takes for the wrap of a 32-bit clock, 71.6 minutes
// added to the dump's date each time (TestRecordTimes). It leaves the
// time at 0 for the second pass, which reads the TIME records.
func (c *converter) firstPass(r Source) error {
	c.source = r
	for {
		if c.enums != nil {
			c.enums.before()
		}
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if c.enums != nil && isObject(rec.Kind) {
			c.enums.object(rec, c.texts)
		}
		if rec.Kind == bmd.KindInstance && rec.Class < uint64(len(c.shapes)) && c.shapes[rec.Class] != nil {
			// An instance outside OBJECTS runs (most records of a file
			// written before them) whose shape is known: what names
			// would do, without its two calls (decrunch of the 134 MB
			// dump's BMD before OBJECTS records: the first pass 67-70
			// ms against 90-100).
			c.estimate += c.shapes[rec.Class].bytes
			continue
		}
		if err := c.names(rec); err != nil {
			return placeOverflow(err, rec)
		}
	}
}

// names handles a record of the first pass: names, LOAD CLASS records,
// the names a mapping gives class members, and what the heap records ask
// for (instance data and array elements, for Options.MaxOutput), also
// those of the OBJECTS runs the reader skips.
func (c *converter) names(rec *bmd.Record) error {
	switch rec.Kind {
	case bmd.KindString, bmd.KindHashedString, bmd.KindArrayName:
		return c.name(rec)
	case bmd.KindLoadClass:
		if c.enums != nil {
			c.enums.loadClass(rec, c.texts)
		}
		return c.loadClass(rec)
	case bmd.KindClass:
		if c.enums != nil {
			c.enums.class(rec, func(i int) string { return c.staticName(rec, i) })
		}
		if c.rn != nil {
			return c.renameMembers(rec, nil)
		}
	case bmd.KindInstance:
		sh, _ := c.shape(rec.Class)
		c.estimate += sh.bytes
	case bmd.KindObjectArray:
		c.estimate += int64(rec.Count) * int64(c.meta.IDSize)
	case bmd.KindPrimitiveArray:
		c.estimate += int64(rec.Count) * int64(rec.Type.Size())
	case bmd.KindObjects:
		// A run the reader skipped: what its record says the objects
		// take, which the second pass's reader holds them to.
		c.estimate += int64(min(rec.Length, uint64(math.MaxInt64-c.estimate))) // at most MaxInt64
	}
	return nil
}

// classShape is what converting an instance needs of its class's
// flattened layout: the types of its fields, in the order of the HPROF
// instance data, and the bytes they take there.
type classShape struct {
	types []bmd.Type
	bytes int64

	// For a remembered shape (shape's kept), where its values go in the
	// instance data: references, and the primitives the file kept; the
	// other primitives, dropped, are zeros.
	refs, prims []fieldAt
}

// fieldAt is a field's value (its index among the values), its offset in
// the HPROF instance data and its size there.
type fieldAt struct {
	i, off uint32
	size   uint8
}

// maxShapes bounds the class indexes whose shapes are remembered, and
// maxShapeFields the fields of the shapes remembered: the classes of a
// long line of subclasses each have the fields of all those above them
// (n classes, n²/2 fields), which dropped primitive fields let a file
// define and use in a few bytes each. Real dumps remember a few thousand
// fields (the corpus dumps 866 to 2,716); the shapes not remembered are
// built each time, at the speed of a version 1 file's.
const (
	maxShapes      = 1 << 20
	maxShapeFields = 1 << 20
)

// shape returns the shape of the instances of class in the source being
// read. In a version 2 file (class indexes dense from 1, each class's
// layout fixed once its chain is defined) it is remembered, for the
// first million classes while their fields stay within maxShapeFields,
// and kept is true: it is never changed and may be held. Otherwise it is
// the converter's scratch shape, which the next call reuses. A heap has millions of instances of a few hundred classes.
func (c *converter) shape(class uint64) (sh *classShape, kept bool) {
	if class < uint64(len(c.shapes)) && c.shapes[class] != nil {
		return c.shapes[class], true
	}
	lay, ok := c.source.Layout(class)
	_, v2 := c.source.(*bmd.Reader)
	keep := v2 && ok && class < maxShapes && c.shapeLen+len(lay) <= maxShapeFields // a layout not known yet may be later
	sh = &c.scratch
	if keep {
		sh = &classShape{types: make([]bmd.Type, 0, len(lay))}
		c.shapeLen += len(lay)
	}
	sh.types, sh.bytes = sh.types[:0], 0
	for i, f := range lay {
		size := hprof.BasicType(f.Type).Size(c.meta.IDSize)
		if keep && (f.Type == bmd.Object || f.Kept) {
			at := fieldAt{i: uint32(i), off: uint32(sh.bytes), size: uint8(size)}
			if f.Type == bmd.Object {
				sh.refs = append(sh.refs, at)
			} else {
				sh.prims = append(sh.prims, at)
			}
		}
		sh.types = append(sh.types, f.Type)
		sh.bytes += int64(size)
	}
	if !keep {
		return sh, false
	}
	if class >= uint64(len(c.shapes)) {
		c.shapes = slices.Grow(c.shapes, int(class)+1-len(c.shapes))[:class+1]
	}
	c.shapes[class] = sh
	return sh, true
}

// rest handles a record of the second pass.
func (c *converter) rest(rec *bmd.Record) error {
	switch rec.Kind {
	case bmd.KindString, bmd.KindHashedString, bmd.KindArrayName, bmd.KindLoadClass:
		return nil // written by the first pass
	case bmd.KindUnloadClass:
		return c.w.WriteRecord(hprof.TagUnloadClass, c.time, c.enc.AppendSerial(c.body[:0], rec.Serial))
	case bmd.KindEndThread:
		return c.w.WriteRecord(hprof.TagEndThread, c.time, c.enc.AppendSerial(c.body[:0], rec.Serial))
	case bmd.KindStackFrame:
		return c.stackFrame(rec)
	case bmd.KindStackTrace:
		for i, f := range rec.Frames {
			rec.Frames[i] = c.frame(f)
		}
		c.body = c.enc.AppendStackTrace(c.body[:0], hprof.StackTrace{Serial: rec.Serial, Thread: rec.Thread, Frames: rec.Frames})
		return c.record(hprof.TagStackTrace, c.body)
	case bmd.KindStartThread:
		c.body = c.enc.AppendStartThread(c.body[:0], hprof.StartThread{Serial: rec.Serial, Object: c.obj(rec.Object), StackTrace: rec.Trace,
			Name: c.str(rec.Name), Group: c.str(rec.Group), ParentGroup: c.str(rec.Parent)})
		return c.record(hprof.TagStartThread, c.body)
	case bmd.KindRawRecord:
		return c.w.WriteRecord(hprof.Tag(rec.Tag), c.time, rec.Text)
	case bmd.KindHeapDump:
		return c.heapDump(rec)
	case bmd.KindHeapDumpEnd:
		c.inHeap = false
		if err := c.w.EndHeapDump(); err != nil {
			return err
		}
		return c.w.WriteRecord(hprof.TagHeapDumpEnd, c.time, nil)
	case bmd.KindTrace, bmd.KindEnd, bmd.KindObjectID:
		return nil // state the reader applies
	case bmd.KindHeapInfo:
		c.s = hprof.SubRecord{Tag: hprof.SubHeapDumpInfo, HeapType: rec.HeapType, HeapName: c.str(rec.Name),
			Elements: c.s.Elements, Data: c.s.Data[:0], Class: c.s.Class}
		return c.sub(&c.s)
	case bmd.KindRoot:
		return c.root(rec)
	case bmd.KindClass:
		return c.class(rec)
	case bmd.KindPlaceClasses:
		return c.placeClasses(rec)
	}
	return fmt.Errorf("decrunch: unexpected %s record", rec.Kind) // objects: see ahead.go
}

// obj returns the HPROF ID of a dense object ID.
func (c *converter) obj(d uint64) uint64 {
	v, ok := c.ids.id(d)
	if !ok {
		c.idOverflow = true
	}
	return v
}

// str returns the HPROF ID of string d (0 for none), as obj does for
// objects: an ID too large for the file's IDs, which would wrap onto
// another string's, makes the record that holds it an IDOverflowError.
func (c *converter) str(d uint64) uint64 {
	if d == 0 {
		return 0
	}
	c.checkName(d, "string")
	return strID(d)
}

// frame returns the HPROF ID of stack frame f (0 for none), as str does.
func (c *converter) frame(f uint64) uint64 {
	c.checkName(f, "stack frame")
	return frameID(f)
}

// checkName notes a string or frame ID too large for the file's IDs.
func (c *converter) checkName(d uint64, what string) {
	if d > c.nameMax {
		if !c.idOverflow {
			c.overWhat = what
		}
		c.idOverflow = true
	}
}

// sub writes a heap sub-record, unless an object ID in it was too large.
func (c *converter) sub(s *hprof.SubRecord) error {
	if err := c.canWrite(s.Tag); err != nil {
		return err
	}
	return c.w.WriteSub(s)
}

// canWrite returns the error that stops a heap sub-record of tag from
// being written: outside a heap dump, or with an object ID too large.
func (c *converter) canWrite(tag hprof.SubTag) error {
	if !c.inHeap {
		return fmt.Errorf("decrunch: %s outside a heap dump", tag)
	}
	return c.overflowed()
}

// record writes a top-level record, unless an object ID in it was too
// large.
func (c *converter) record(tag hprof.Tag, body []byte) error {
	if err := c.overflowed(); err != nil {
		return err
	}
	return c.w.WriteRecord(tag, c.time, body)
}

// maxKeptArrayName is the longest array name kept in memory after its
// STRING record is written (for a mapping's class lookups).
const maxKeptArrayName = 4096

// The bytes of names the converter holds (converter.texts) that are not in
// the file as such: a STRING shares up to 255 bytes with the previous one,
// an ARRAY NAME of 5 bytes stands for up to 4 KiB, a placeholder for 9
// bytes of hashed name is 24. A fixed allowance plus an amount per byte
// read bounds them: the corpus dumps hold at most 1.4 bytes of names per
// byte of BMD read (under 0.5 MiB in all), a crafted file of repeated long
// names hundreds.
const (
	maxNameBytes     = 64 << 20
	nameBytesPerByte = 16
)

// name writes the STRING record of a clear name, a hashed name (recovered
// or as its placeholder) or an array name. It keeps the text for the names
// made of it (array names, a mapping's lookups): a recovered name as the
// candidate's own string, shared with the name table however often the
// file uses it; other texts as copies, which a *NamesLimitError bounds.
func (c *converter) name(rec *bmd.Record) error {
	st := c.st
	st.Strings++
	var text []byte
	var kept string // the text to keep, if shared with the name table
	switch rec.Kind {
	case bmd.KindString:
		st.Clear++
		text = rec.Text
	case bmd.KindArrayName:
		st.ArrayNames++
		c.nameBuf = bmd.AppendArrayName(c.nameBuf[:0], c.texts[rec.Name], int(rec.Dims), rec.Descriptor)
		text = c.nameBuf
	default:
		if name, ok := lookup(c.opt.Names, rec.Hash, rec.Length); ok {
			st.Recovered++
			kept = name
			c.nameBuf = append(c.nameBuf[:0], name...)
		} else {
			st.Missing++
			c.nameBuf = append(c.nameBuf[:0], Placeholder(rec.Hash)...)
		}
		text = c.nameBuf
	}
	if c.opt.Rename != nil && rec.Kind != bmd.KindArrayName {
		text, kept = []byte(c.opt.Rename(string(text))), ""
	}
	switch {
	case rec.Kind == bmd.KindArrayName && len(text) > maxKeptArrayName:
		// A few bytes of ARRAY NAME can stand for a long text: keep it
		// only while it is short (an array name is never an element name).
		c.texts = append(c.texts, "")
	case kept != "":
		c.texts = append(c.texts, kept)
	default:
		if err := c.keepText(len(text), rec); err != nil {
			return err
		}
		c.texts = append(c.texts, string(text))
	}
	if c.rn != nil {
		c.rn.texts[rec.ID] = c.texts[len(c.texts)-1]
	}
	c.body = c.enc.AppendString(c.body[:0], c.str(rec.ID), text)
	return c.record(hprof.TagString, c.body)
}

// keepText counts n bytes more of the texts the converter keeps, for
// record rec: a *NamesLimitError once they pass the bound that the bytes
// read to rec allow.
func (c *converter) keepText(n int, rec *bmd.Record) error {
	c.textBytes += int64(n)
	if c.textBytes > maxNameBytes+nameBytesPerByte*rec.Offset {
		return &NamesLimitError{Offset: rec.Offset, Record: rec.Kind.String(), Bytes: c.textBytes}
	}
	return nil
}

func (c *converter) loadClass(rec *bmd.Record) error {
	name := c.str(rec.Name)
	if c.rn != nil {
		cls := c.rn.texts[rec.Name]
		c.rn.classBy[rec.Class], c.rn.serials[rec.Serial] = cls, cls
		orig, ok := c.opt.Mapping.Class(cls)
		var err error
		if name, err = c.rename(rec, rec.Name, orig, ok, &c.st.RenamedClasses); err != nil {
			return err
		}
	}
	c.body = c.enc.AppendLoadClass(c.body[:0], hprof.LoadClass{Serial: rec.Serial, ClassID: c.obj(rec.Class), StackTrace: rec.Trace, Name: name})
	return c.record(hprof.TagLoadClass, c.body)
}

func (c *converter) stackFrame(rec *bmd.Record) error {
	method := c.str(rec.Method)
	if c.rn != nil {
		orig, ok := c.opt.Mapping.Method(c.rn.serials[rec.ClassSerial], c.rn.texts[rec.Method])
		var err error
		if method, err = c.rename(rec, rec.Method, orig, ok, &c.st.RenamedMethods); err != nil {
			return err
		}
	}
	c.body = c.enc.AppendStackFrame(c.body[:0], hprof.StackFrame{ID: c.frame(rec.ID), Method: method, Signature: c.str(rec.Signature),
		SourceFile: c.str(rec.Source), Class: rec.ClassSerial, Line: rec.Line})
	return c.record(hprof.TagStackFrame, c.body)
}

// rename returns the HPROF string ID to write for a use of string sid
// in record rec whose original name is orig (ok: mapped), writing its
// STRING record first when it needs one of its own, and keeping the name
// (keepText); count, when not nil, counts the renamed use.
func (c *converter) rename(rec *bmd.Record, sid uint64, orig string, ok bool, count *uint64) (uint64, error) {
	if sid == 0 {
		return 0, nil
	}
	id, write, changed := c.rn.use(sid, orig, ok)
	if !changed {
		return c.str(sid), nil
	}
	if write {
		// The names kept in the renamer count as the texts do: a
		// mapping's long class name, once per array of it, was kept
		// apart for each number of dimensions (a 1 MB mapping and a
		// 20 KB BMD, 2.4 GB).
		if err := c.keepText(len(orig), rec); err != nil {
			return 0, err
		}
		b := c.enc.AppendString(nil, id, []byte(orig))
		if err := c.w.WriteRecord(hprof.TagString, c.time, b); err != nil {
			return 0, err
		}
	}
	if count != nil {
		*count++
	}
	return id, nil
}

// staticName returns the name of static i of CLASS record rec as the
// dump is written: the mapping's, if it renames it.
func (c *converter) staticName(rec *bmd.Record, i int) string {
	n := rec.Def.Statics[i].Name
	if n >= uint64(len(c.texts)) {
		return ""
	}
	if c.rn != nil {
		if orig, ok := c.mappedMember(&rec.Def, n); ok {
			return orig
		}
	}
	return c.texts[n]
}

// mappedMember returns the mapping's name of the static or field named
// name in class definition d, if the mapping renames it.
func (c *converter) mappedMember(d *bmd.Class, name uint64) (string, bool) {
	return c.opt.Mapping.Field(c.rn.classBy[d.Index], c.rn.texts[name])
}

// renameMembers renames the statics and fields of the class definition
// of CLASS record rec by the mapping, in the context of its class: in the
// first pass (cd nil)
// it writes the STRING records the renamed names need; in the second it
// sets their IDs in cd and counts them.
func (c *converter) renameMembers(rec *bmd.Record, cd *hprof.ClassDump) error {
	d := &rec.Def
	var count *uint64
	if cd != nil {
		count = &c.st.RenamedFields
	} else {
		// A name ID too large is the CLASS record's, which the second
		// pass reports.
		over, what := c.idOverflow, c.overWhat
		defer func() { c.idOverflow, c.overWhat = over, what }()
	}
	for i, f := range d.Statics {
		orig, ok := c.mappedMember(d, f.Name)
		id, err := c.rename(rec, f.Name, orig, ok, count)
		if err != nil {
			return err
		}
		if cd != nil {
			cd.Statics[i].Name = id
		}
	}
	for i, f := range d.Fields {
		orig, ok := c.mappedMember(d, f.Name)
		id, err := c.rename(rec, f.Name, orig, ok, count)
		if err != nil {
			return err
		}
		if cd != nil {
			cd.Fields[i].Name = id
		}
	}
	return nil
}

func (c *converter) heapDump(rec *bmd.Record) error {
	tag := hprof.TagHeapDump
	if rec.Segment {
		tag = hprof.TagHeapDumpSegment
	}
	c.inHeap, c.heapSeg = true, rec.Segment
	return c.w.BeginHeapDump(tag, c.time)
}

func (c *converter) root(rec *bmd.Record) error {
	return c.writeRoot(rec.Tag, rec.Object, rec.Thread, rec.Frame, rec.JNIRef, rec.Trace)
}

// writeRoot converts a GC root of HPROF kind kind and dense object ID
// object.
func (c *converter) writeRoot(kind uint8, object uint64, thread, frame uint32, jniRef uint64, trace uint32) error {
	c.s = hprof.SubRecord{Tag: hprof.SubTag(kind), ID: c.obj(object), Thread: thread, Frame: frame,
		JNIRef: jniRef, StackTrace: trace, Elements: c.s.Elements, Data: c.s.Data[:0], Class: c.s.Class}
	if err := c.sub(&c.s); err != nil {
		return err
	}
	c.st.Roots++
	return nil
}

// class converts a class definition. In a file whose classes are placed,
// its CLASS DUMP is held until a PLACE CLASSES record says where it was,
// but for another dump of a class (several heap dumps), which goes here.
func (c *converter) class(rec *bmd.Record) error {
	d := &rec.Def
	cd := &c.s.Class
	c.s.Tag = hprof.SubClassDump
	cd.ID, cd.StackTrace = c.obj(rec.ID), d.StackTrace
	cd.Super, cd.Loader, cd.Signers, cd.ProtectionDomain = c.obj(d.Super), c.obj(d.Loader), c.obj(d.Signers), c.obj(d.ProtectionDomain)
	cd.Reserved1, cd.Reserved2, cd.InstanceSize = c.obj(d.Reserved1), c.obj(d.Reserved2), d.InstanceSize
	cd.Constants = cd.Constants[:0]
	for _, k := range d.Constants {
		cd.Constants = append(cd.Constants, hprof.Constant{Index: k.Index, Type: hprof.BasicType(k.Type), Value: c.value(k.Type, k.Value)})
	}
	cd.Statics = cd.Statics[:0]
	for _, f := range d.Statics {
		cd.Statics = append(cd.Statics, hprof.StaticField{Name: c.str(f.Name), Type: hprof.BasicType(f.Type), Value: c.value(f.Type, f.Value)})
	}
	cd.Fields = cd.Fields[:0]
	for _, f := range d.Fields {
		cd.Fields = append(cd.Fields, hprof.Field{Name: c.str(f.Name), Type: hprof.BasicType(f.Type)})
	}
	if err := c.overflowed(); err != nil {
		return err // neither renamed nor held: salvage writes what is held
	}
	if c.rn != nil {
		if err := c.renameMembers(rec, cd); err != nil {
			return err
		}
	}
	if c.meta.ClassesPlaced && !d.Redump {
		c.st.Objects++
		c.unplaced[rec.ID] = cd.Clone()
		return nil
	}
	if err := c.sub(&c.s); err != nil {
		return err
	}
	c.st.Objects++
	return nil
}

// value converts a constant or static value: an object ID, or the value.
func (c *converter) value(t bmd.Type, v uint64) uint64 {
	if t == bmd.Object {
		return c.obj(v)
	}
	return v
}

// placeClasses writes the held CLASS DUMPs of the classes a PLACE CLASSES
// record places.
func (c *converter) placeClasses(rec *bmd.Record) error {
	held := c.s.Class
	defer func() { c.s.Class = held }()
	c.s.Tag = hprof.SubClassDump
	for i := rec.ID; i < rec.ID+rec.Length; i++ {
		cd, ok := c.unplaced[i]
		if !ok {
			return fmt.Errorf("decrunch: PLACE CLASSES at offset %d places class %d, which no CLASS record defined before", rec.Offset, i)
		}
		c.s.Class = *cd
		if err := c.sub(&c.s); err != nil {
			return err // still held: salvage writes it
		}
		delete(c.unplaced, i)
	}
	return nil
}

// finish ends the HPROF: with Salvage, what the damage cut off is closed
// so that readers accept the file; without, a damaged file is an error.
// A version 1 file's warnings come from first, the source of the first
// pass, which read it in order up to the damage, whichever way the second
// pass ran.
func (c *converter) finish(loopErr error, first Source) (*Stats, error) {
	c.endArray()
	if loopErr == nil && len(c.unplaced) > 0 {
		loopErr = fmt.Errorf("decrunch: %d class definitions never placed in the heap dump", len(c.unplaced))
	}
	if loopErr != nil {
		if !salvageable(loopErr, c.opt) {
			return nil, loopErr
		}
		c.st.Salvaged = loopErr
		c.salvage()
	}
	if err := c.w.Flush(); err != nil {
		return nil, err
	}
	c.st.OutBytes = c.out.n
	if v1, ok := first.(*V1Source); ok {
		c.st.Warnings = append(c.st.Warnings, v1.Warnings(c.st.Roots)...)
	}
	return c.st, nil
}

// salvageable reports whether err, which ended the reading, leaves an
// HPROF to salvage: with Options.Salvage, unless the output limit or the
// bound on names ended it.
func salvageable(err error, opt Options) bool {
	var le *OutputLimitError
	var ne *NamesLimitError
	return opt.Salvage && !errors.As(err, &le) && !errors.As(err, &ne)
}

// salvage closes a heap dump cut off by damage: objects written may be
// instances of classes not yet placed, so every class definition read goes
// in, and an open run of segments gets its HEAP DUMP END.
func (c *converter) salvage() {
	if len(c.unplaced) > 0 && !c.inHeap {
		if c.w.BeginHeapDump(hprof.TagHeapDumpSegment, c.time) == nil {
			c.inHeap, c.heapSeg = true, true
		}
	}
	c.s.Tag = hprof.SubClassDump
	for _, i := range slices.Sorted(maps.Keys(c.unplaced)) {
		c.s.Class = *c.unplaced[i]
		if !c.inHeap || c.w.WriteSub(&c.s) != nil {
			break
		}
	}
	if c.inHeap {
		c.w.EndHeapDump()
		if c.heapSeg {
			c.w.WriteRecord(hprof.TagHeapDumpEnd, c.time, nil)
		}
	}
}

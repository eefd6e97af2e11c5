package crunch

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/names"
)

// CrunchV1 writes BMD version 1, the format of the original 2014 tools,
// which their Java decruncher reads (spec/bmd.md §11). It crunches as Crunch
// does, with the same options and the same names kept in the clear, but
// hashes names with Java's String.hashCode(), and converts the version 2
// records as they are produced (through a pipe, in a second goroutine) to
// version 1 records: what version 1 cannot carry is dropped, and each kind
// of loss is reported as one line on warn (nil: not reported).
//
// IDs are the dense IDs of version 2, which fit in 4 bytes whatever the
// dump's identifier size; the LEGACY records (LOAD CLASS, STACK FRAME,
// STACK TRACE, START THREAD, …) are rewritten with those IDs at 4 bytes,
// so that the original decruncher's output stays consistent.
func CrunchV1(src io.ReadSeeker, out io.Writer, opt Options, warn io.Writer) (*Stats, error) {
	opt.hashName = javaHashName
	pr, pw := io.Pipe()
	type result struct {
		t   *transcoder
		err error
	}
	done := make(chan result, 1)
	go func() {
		t, err := transcodeV1(pr, out)
		if err != nil {
			pr.CloseWithError(err)
		} else {
			io.Copy(io.Discard, pr) // nothing follows END; never block the writer
		}
		done <- result{t, err}
	}()
	st, err := Crunch(src, pw, opt)
	pw.CloseWithError(err)
	res := <-done
	if err != nil {
		if res.err != nil && errors.Is(err, io.ErrClosedPipe) {
			return nil, res.err
		}
		return nil, err
	}
	if res.err != nil {
		return nil, res.err
	}
	t := res.t
	st.OutRecords, st.OutBytesBy, st.OutBytes = map[string]uint64{}, map[string]uint64{}, int64(t.w.Header)
	for k := range t.w.Count {
		if t.w.Count[k] > 0 {
			st.OutRecords[bmd.V1Tag(k).String()] = t.w.Count[k]
			st.OutBytesBy[bmd.V1Tag(k).String()] = t.w.Bytes[k]
			st.OutBytes += int64(t.w.Bytes[k])
		}
	}
	if warn != nil {
		for _, s := range t.warnings() {
			fmt.Fprintf(warn, "crunch: BMD v1: %s\n", s)
		}
	}
	return st, nil
}

// javaHashName is the version 1 hash of a name: Java's hash of its
// standard UTF-8 form (the name as a Java String), and that form's length.
func javaHashName(text []byte) (int, uint64) {
	return names.Len(text), uint64(uint32(names.JavaHash(text)))
}

// v1SafeRaw are the top-level HPROF records with no IDs inside, which a
// LEGACY record can carry unchanged: ALLOC SITES, HEAP SUMMARY, CPU
// SAMPLES, CONTROL SETTINGS.
var v1SafeRaw = map[uint8]bool{0x06: true, 0x07: true, 0x0D: true, 0x0E: true}

// transcoder converts the version 2 records of a crunch to version 1.
type transcoder struct {
	w     *bmd.V1Writer
	meta  bmd.Metadata
	names map[uint64]uint64 // class object ID -> name string ID (LOAD CLASS)
	roots []uint32
	enc   hprof.BodyEncoder
	body  []byte
	vals  []uint64
	elems []uint32

	// what was lost, for the warnings
	rootKinds   map[uint8]uint64
	rawDropped  map[uint8]uint64
	heapInfos   uint64
	noData      uint64
	traced      uint64 // objects with a stack trace serial
	redumps     uint64 // class and object records of a later heap dump, left out
	maxID       uint64 // the largest object ID written
	timed       bool   // records with a non-zero time
	noName      uint64 // classes without LOAD CLASS
	superless   uint64 // classes whose super class has no CLASS record
	classLinks  uint64 // classes with a loader, signers, protection domain or reserved link
	classTraces uint64
}

func (t *transcoder) id(v uint64) (uint32, error) {
	if v > math.MaxInt32 {
		return 0, fmt.Errorf("crunch: ID %d does not fit the int32 IDs of BMD version 1", v)
	}
	return uint32(v), nil
}

func (t *transcoder) legacy(tag hprof.Tag, body []byte) error {
	t.body = body
	return t.w.Legacy(uint8(tag), body)
}

// transcodeV1 reads the version 2 stream in (written by Crunch with Java
// hashes) and writes its version 1 form to out.
func transcodeV1(in io.Reader, out io.Writer) (*transcoder, error) {
	r, err := bmd.NewReader(in)
	if err != nil {
		return nil, err
	}
	r.MaxElements = maxArrayWhole // longer object arrays in pieces, as pass 2 reads them
	t := &transcoder{meta: r.Metadata(), names: map[uint64]uint64{}, enc: hprof.BodyEncoder{IDSize: 4},
		rootKinds: map[uint8]uint64{}, rawDropped: map[uint8]uint64{}}
	meta := t.meta
	meta.Hash = bmd.HashJava
	if meta.Strings >= math.MaxInt32 {
		return nil, fmt.Errorf("crunch: %d strings do not fit the int32 IDs of BMD version 1", meta.Strings)
	}
	if t.w, err = bmd.NewV1Writer(out, []byte(meta.HPROFVersion)); err != nil {
		return nil, err
	}
	if err := t.w.ClearString(uint32(meta.Strings+1), bmd.AppendV1Marker(nil, &meta)); err != nil {
		return nil, err
	}
	var trace uint32
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := t.record(r, rec, &trace); err != nil {
			return nil, err
		}
	}
	if err := t.w.RootObjects(t.roots); err != nil {
		return nil, err
	}
	return t, t.w.Flush()
}

func (t *transcoder) record(r *bmd.Reader, rec *bmd.Record, trace *uint32) error {
	w := t.w
	b := t.body[:0]
	switch rec.Kind {
	case bmd.KindString:
		return w.ClearString(uint32(rec.ID), rec.Text)
	case bmd.KindHashedString:
		return w.HashedString(uint32(rec.ID), uint32(rec.Length), int32(uint32(rec.Hash)))
	case bmd.KindLoadClass:
		t.names[rec.Class] = rec.Name
		if _, err := t.id(rec.Class); err != nil {
			return err
		}
		return t.legacy(hprof.TagLoadClass, t.enc.AppendLoadClass(b, hprof.LoadClass{Serial: rec.Serial, ClassID: rec.Class, StackTrace: rec.Trace, Name: rec.Name}))
	case bmd.KindUnloadClass:
		return t.legacy(hprof.TagUnloadClass, t.enc.AppendSerial(b, rec.Serial))
	case bmd.KindEndThread:
		return t.legacy(hprof.TagEndThread, t.enc.AppendSerial(b, rec.Serial))
	case bmd.KindStackFrame:
		return t.legacy(hprof.TagStackFrame, t.enc.AppendStackFrame(b, hprof.StackFrame{ID: rec.ID, Method: rec.Method,
			Signature: rec.Signature, SourceFile: rec.Source, Class: rec.ClassSerial, Line: rec.Line}))
	case bmd.KindStackTrace:
		return t.legacy(hprof.TagStackTrace, t.enc.AppendStackTrace(b, hprof.StackTrace{Serial: rec.Serial, Thread: rec.Thread, Frames: rec.Frames}))
	case bmd.KindStartThread:
		if _, err := t.id(rec.Object); err != nil {
			return err
		}
		return t.legacy(hprof.TagStartThread, t.enc.AppendStartThread(b, hprof.StartThread{Serial: rec.Serial, Object: rec.Object,
			StackTrace: rec.Trace, Name: rec.Name, Group: rec.Group, ParentGroup: rec.Parent}))
	case bmd.KindRawRecord:
		if !v1SafeRaw[rec.Tag] {
			t.rawDropped[rec.Tag]++
			return nil
		}
		return w.Legacy(rec.Tag, rec.Text)
	case bmd.KindTime:
		t.timed = t.timed || rec.Time != 0
	case bmd.KindTrace:
		*trace = rec.Trace
	case bmd.KindHeapInfo:
		t.heapInfos++
	case bmd.KindHeapDump, bmd.KindHeapDumpEnd, bmd.KindEnd, bmd.KindPlaceClasses:
		// heap dump records, their segmentation and the place of class
		// dumps among the objects: the original decruncher writes one
		// HEAP DUMP, classes first
	case bmd.KindClass:
		if rec.Def.Redump {
			t.redumps++
			return nil
		}
		return t.class(rec)
	case bmd.KindObjectID:
	case bmd.KindInstance, bmd.KindObjectArray, bmd.KindPrimitiveArray, bmd.KindPrimitiveNoData:
		if rec.ID <= t.maxID {
			t.redumps++ // another dump of an object: version 1 keeps one
			return nil
		}
		t.maxID = rec.ID
		return t.object(r, rec, *trace)
	case bmd.KindRoot:
		t.rootKinds[rec.Tag]++
		id, err := t.id(rec.Object)
		if err != nil {
			return err
		}
		t.roots = append(t.roots, id)
	default:
		return fmt.Errorf("crunch: BMD v1: no conversion for %s records", rec.Kind)
	}
	return nil
}

func (t *transcoder) countTrace(trace uint32) {
	if trace != 0 {
		t.traced++
	}
}

// object converts an INSTANCE, OBJECT ARRAY or PRIMITIVE ARRAY.
func (t *transcoder) object(r *bmd.Reader, rec *bmd.Record, trace uint32) error {
	w := t.w
	switch rec.Kind {
	case bmd.KindInstance:
		lay, _ := r.Layout(rec.Class)
		t.vals = t.vals[:0]
		for i, f := range lay {
			if f.Kept || f.Type == bmd.Object {
				v := rec.Values[i]
				if f.Type == bmd.Object {
					if _, err := t.id(v); err != nil {
						return err
					}
				}
				t.vals = append(t.vals, v)
			}
		}
		id, err := t.id(rec.ID)
		if err != nil {
			return err
		}
		t.countTrace(trace)
		return w.Instance(id, uint32(rec.Class), t.vals)
	case bmd.KindObjectArray:
		if rec.Pending > 0 {
			return t.arrayPieces(r, rec, trace)
		}
		if err := t.elemIDs(rec.Elements); err != nil {
			return err
		}
		id, err := t.id(rec.ID)
		if err != nil {
			return err
		}
		class, err := t.id(rec.Class)
		if err != nil {
			return err
		}
		t.countTrace(trace)
		return w.ObjectArray(id, class, t.elems)
	}
	if rec.Kind == bmd.KindPrimitiveNoData {
		t.noData++
	}
	id, err := t.id(rec.ID)
	if err != nil {
		return err
	}
	t.countTrace(trace)
	return w.PrimitiveArray(id, rec.Type, rec.Count)
}

// elemIDs makes t.elems the version 1 IDs of an object array's elements.
func (t *transcoder) elemIDs(elems []uint64) error {
	t.elems = t.elems[:0]
	for _, e := range elems {
		v, err := t.id(e)
		if err != nil {
			return err
		}
		t.elems = append(t.elems, v)
	}
	return nil
}

// arrayPieces converts an OBJECT ARRAY whose elements r gives in pieces.
func (t *transcoder) arrayPieces(r *bmd.Reader, rec *bmd.Record, trace uint32) error {
	id, err := t.id(rec.ID)
	if err != nil {
		return err
	}
	class, err := t.id(rec.Class)
	if err != nil {
		return err
	}
	t.countTrace(trace)
	if err := t.w.BeginObjectArray(id, class, int(rec.Count)); err != nil {
		return err
	}
	for rec.Pending > 0 {
		if err := r.NextElements(rec, arrayPiece); err != nil {
			return err
		}
		if err := t.elemIDs(rec.Elements); err != nil {
			return err
		}
		if err := t.w.ObjectArrayElements(t.elems); err != nil {
			return err
		}
	}
	return nil
}

func (t *transcoder) class(rec *bmd.Record) error {
	d := &rec.Def
	id, err := t.id(rec.ID)
	if err != nil {
		return err
	}
	c := bmd.V1Class{ID: id, Constants: d.Constants, Statics: d.Statics}
	if n, ok := t.names[rec.ID]; ok {
		c.Name = uint32(n)
	} else {
		t.noName++
	}
	// The original decruncher follows super links to class definitions of
	// the file and fails on any other: a super class without a CLASS
	// record becomes none, which ends the chain where version 2 ends it.
	if d.Super != 0 && d.Super <= t.meta.Classes {
		c.Super = uint32(d.Super)
	} else if d.Super != 0 {
		t.superless++
	}
	for i := range c.Statics {
		if c.Statics[i].Type == bmd.Object {
			if _, err := t.id(c.Statics[i].Value); err != nil {
				return err
			}
		}
	}
	for i := range c.Constants {
		if c.Constants[i].Type == bmd.Object {
			if _, err := t.id(c.Constants[i].Value); err != nil {
				return err
			}
		}
	}
	for _, f := range d.Fields {
		if f.Kept || f.Type == bmd.Object {
			c.Fields = append(c.Fields, bmd.Field{Name: f.Name, Type: f.Type, Kept: true})
		} else {
			c.Discarded += uint32(f.Type.Size())
		}
	}
	if d.Loader != 0 || d.Signers != 0 || d.ProtectionDomain != 0 || d.Reserved1 != 0 || d.Reserved2 != 0 {
		t.classLinks++
	}
	if d.StackTrace != 0 {
		t.classTraces++
	}
	return t.w.Class(&c)
}

// warnings lists what the conversion lost, one line per kind of loss, in
// addition to what version 1 never carries (spec/bmd.md §11.6).
func (t *transcoder) warnings() []string {
	var out []string
	var n uint64
	var kinds []string
	for k, c := range t.rootKinds {
		n += c
		if k != 0xFF {
			kinds = append(kinds, fmt.Sprintf("%s %d", hprof.SubTag(k), c))
		}
	}
	sort.Strings(kinds)
	if len(kinds) > 0 {
		out = append(out, fmt.Sprintf("%d GC roots written without their kinds (%s): version 1 keeps only the objects", n, strings.Join(kinds, ", ")))
	}
	if t.heapInfos > 0 {
		out = append(out, fmt.Sprintf("%d HEAP DUMP INFO records dropped: version 1 has no Android heap regions", t.heapInfos))
	}
	if t.noData > 0 {
		out = append(out, fmt.Sprintf("%d PRIMITIVE ARRAY NODATA records written as ordinary primitive arrays", t.noData))
	}
	if len(t.rawDropped) > 0 {
		var tags []string
		for k, c := range t.rawDropped {
			tags = append(tags, fmt.Sprintf("%s ×%d", hprof.Tag(k), c))
		}
		sort.Strings(tags)
		out = append(out, fmt.Sprintf("top-level records that may hold IDs of the dump dropped: %s", strings.Join(tags, ", ")))
	}
	if t.redumps > 0 {
		out = append(out, fmt.Sprintf("%d records of classes and objects dumped again in a later heap dump left out: version 1 keeps one dump of each", t.redumps))
	}
	if t.traced > 0 {
		out = append(out, fmt.Sprintf("stack trace serials of %d objects dropped", t.traced))
	}
	if t.classTraces > 0 {
		out = append(out, fmt.Sprintf("stack trace serials of %d classes dropped", t.classTraces))
	}
	if t.classLinks > 0 {
		out = append(out, fmt.Sprintf("class loader, signers and protection domain of %d classes dropped", t.classLinks))
	}
	if t.superless > 0 {
		out = append(out, fmt.Sprintf("%d classes whose super class has no class dump written without a super class", t.superless))
	}
	if t.noName > 0 {
		out = append(out, fmt.Sprintf("%d classes without LOAD CLASS written without a name", t.noName))
	}
	if t.timed {
		out = append(out, "record times dropped")
	}
	return out
}

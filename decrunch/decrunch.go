// Package decrunch turns a BMD file back into an HPROF heap dump, streaming
// record by record, recovering hashed names from candidate strings.
package decrunch

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// Names recovers hashed names: it returns the text whose hash and UTF-8 byte
// length are those given.
type Names interface {
	Lookup(hash, length uint64) (string, bool)
}

// Placeholder is the name written for a hashed name that was not
// recovered: "unknown$" and the 16 hex digits of its hash. It is unique per
// hash and visible in any analyzer.
func Placeholder(hash uint64) string { return fmt.Sprintf("unknown$%016x", hash) }

// Options shape the HPROF written.
type Options struct {
	Names Names // nil: every hashed name becomes its placeholder
	// Rename, when set, is applied to every name after recovery, with the
	// kind of use ("class" for LOAD CLASS names, "" otherwise).
	Rename func(name string) string
	// Mapping, when set, renames obfuscated class names (LOAD CLASS),
	// field and static names (CLASS) and method names (STACK FRAME) to
	// their original names, each in the context of its class.
	Mapping Mapping
	// SegmentSize bounds heap dump segments (0: hprof.DefaultSegmentSize).
	SegmentSize int
	// Salvage makes a damaged BMD give a valid HPROF of the records before
	// the damage instead of an error; Stats.Salvaged then says what was lost.
	Salvage bool
}

// Stats counts what a decrunch did.
type Stats struct {
	Strings   uint64 // string records
	Clear     uint64 // names that were in the clear
	Recovered uint64 // hashed names recovered
	Missing   uint64 // hashed names left as placeholders
	// ArrayNames counts array class names made of their element's name
	// (ARRAY NAME records): recovered whenever the element name is.
	ArrayNames uint64
	Objects    uint64
	Roots      uint64
	OutBytes   int64
	Salvaged   error // with Options.Salvage: the damage that ended the input, or nil
	Metadata   bmd.Metadata
	Warnings   []string // what the input's format could not carry and was filled in (version 1)

	// Uses of names renamed by Options.Mapping, and uses that could not be
	// renamed (a class definition read inside a heap dump).
	RenamedClasses, RenamedFields, RenamedMethods, RenameMissed uint64
}

// HPROF IDs written: objects at multiples of the dump's alignment (8 or
// more, see objectIDs), strings and frames in their own residue classes
// (4 and 2 modulo 8) so that no two kinds of ID share a value.
func strID(s uint64) uint64 { return s<<3 | 4 }
func frameID(f uint64) uint64 {
	if f == 0 {
		return 0
	}
	return f<<3 | 2
}

// Decrunch reads the BMD stream r (version 2, or version 1 through
// NewV1Source) and writes the HPROF to out.
func Decrunch(r Source, out io.Writer, opt Options) (*Stats, error) {
	meta := r.Metadata()
	st := &Stats{Metadata: meta}
	version := meta.HPROFVersion
	if version == "" {
		version = hprof.Version102
	}
	cw := &countWriter{w: out}
	w, err := hprof.NewWriter(cw, hprof.Header{Version: version, IDSize: meta.IDSize, Timestamp: meta.Timestamp})
	if err != nil {
		return nil, err
	}
	w.SegmentSize = opt.SegmentSize
	enc := w.Encoder()
	var body []byte
	var time uint32
	var s hprof.SubRecord
	inHeap, heapSeg := false, false
	idOverflow := false
	ids := newObjectIDs(&meta)
	obj := func(d uint64) uint64 {
		if d == 0 {
			return 0
		}
		v, ok := ids.id(d)
		if !ok {
			idOverflow = true
		}
		return v
	}
	str := func(d uint64) uint64 {
		if d == 0 {
			return 0
		}
		return strID(d)
	}
	sub := func(s *hprof.SubRecord) error {
		if !inHeap {
			return fmt.Errorf("decrunch: %s outside a heap dump", s.Tag)
		}
		return w.WriteSub(s)
	}
	var rn *renamer
	if opt.Mapping != nil {
		rn = newRenamer()
	}
	var sbody []byte
	// rename returns the HPROF string ID to write for a use of string sid
	// whose original name is orig (ok: mapped), writing its STRING record
	// first when it needs one of its own.
	rename := func(sid uint64, orig string, ok bool, count *uint64) (uint64, error) {
		if rn == nil || sid == 0 {
			return str(sid), nil
		}
		id, write, changed := rn.use(sid, orig, ok)
		if !changed {
			return str(sid), nil
		}
		if write {
			if inHeap {
				st.RenameMissed++
				return str(sid), nil
			}
			sbody = enc.String(sbody[:0], id, []byte(orig))
			if err := w.WriteRecord(hprof.TagString, time, sbody); err != nil {
				return 0, err
			}
		}
		*count++
		return id, nil
	}
	var loopErr error
	var unplaced []*hprof.ClassDump // class dumps waiting for PLACE CLASSES
	texts := []string{""}           // string ID -> name as written, for ARRAY NAME
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			loopErr = err
			break
		}
		if idOverflow {
			loopErr = fmt.Errorf("decrunch: too many objects for a dump with %d-byte identifiers", meta.IDSize)
			break
		}
		body = body[:0]
		switch rec.Kind {
		case bmd.KindTime:
			time = rec.Time
		case bmd.KindString, bmd.KindHashedString, bmd.KindArrayName:
			st.Strings++
			var text []byte
			switch {
			case rec.Kind == bmd.KindString:
				st.Clear++
				text = rec.Text
			case rec.Kind == bmd.KindArrayName:
				st.ArrayNames++
				text = bmd.ArrayName([]byte(texts[rec.Name]), int(rec.Dims), rec.Descriptor)
			default:
				if name, ok := lookup(opt.Names, rec.Hash, rec.Length); ok {
					st.Recovered++
					text = []byte(name)
				} else {
					st.Missing++
					text = []byte(Placeholder(rec.Hash))
				}
			}
			if opt.Rename != nil && rec.Kind != bmd.KindArrayName {
				text = []byte(opt.Rename(string(text)))
			}
			texts = append(texts, string(text))
			if rn != nil {
				rn.texts[rec.ID] = string(text)
			}
			body = enc.String(body, strID(rec.ID), text)
			loopErr = w.WriteRecord(hprof.TagString, time, body)
		case bmd.KindLoadClass:
			name := str(rec.Name)
			if rn != nil {
				cls := rn.texts[rec.Name]
				rn.classBy[rec.Class], rn.serials[rec.Serial] = cls, cls
				orig, ok := opt.Mapping.Class(cls)
				if name, loopErr = rename(rec.Name, orig, ok, &st.RenamedClasses); loopErr != nil {
					break
				}
			}
			body = enc.LoadClass(body, hprof.LoadClass{Serial: rec.Serial, ClassID: obj(rec.Class), StackTrace: rec.Trace, Name: name})
			loopErr = w.WriteRecord(hprof.TagLoadClass, time, body)
		case bmd.KindUnloadClass:
			loopErr = w.WriteRecord(hprof.TagUnloadClass, time, enc.Serial(body, rec.Serial))
		case bmd.KindEndThread:
			loopErr = w.WriteRecord(hprof.TagEndThread, time, enc.Serial(body, rec.Serial))
		case bmd.KindStackFrame:
			method := str(rec.Method)
			if rn != nil {
				orig, ok := opt.Mapping.Method(rn.serials[rec.ClassSerial], rn.texts[rec.Method])
				if method, loopErr = rename(rec.Method, orig, ok, &st.RenamedMethods); loopErr != nil {
					break
				}
			}
			body = enc.StackFrame(body, hprof.StackFrame{ID: frameID(rec.ID), Method: method, Signature: str(rec.Signature),
				SourceFile: str(rec.Source), Class: rec.ClassSerial, Line: rec.Line})
			loopErr = w.WriteRecord(hprof.TagStackFrame, time, body)
		case bmd.KindStackTrace:
			for i, f := range rec.Frames {
				rec.Frames[i] = frameID(f)
			}
			body = enc.StackTrace(body, hprof.StackTrace{Serial: rec.Serial, Thread: rec.Thread, Frames: rec.Frames})
			loopErr = w.WriteRecord(hprof.TagStackTrace, time, body)
		case bmd.KindStartThread:
			body = enc.StartThread(body, hprof.StartThread{Serial: rec.Serial, Object: obj(rec.Object), StackTrace: rec.Trace,
				Name: str(rec.Name), Group: str(rec.Group), ParentGroup: str(rec.Parent)})
			loopErr = w.WriteRecord(hprof.TagStartThread, time, body)
		case bmd.KindRawRecord:
			loopErr = w.WriteRecord(hprof.Tag(rec.Tag), time, rec.Text)
		case bmd.KindHeapDump:
			tag := hprof.TagHeapDump
			if rec.Segment {
				tag = hprof.TagHeapDumpSegment
			}
			loopErr = w.BeginHeapDump(tag, time)
			inHeap, heapSeg = true, rec.Segment
		case bmd.KindHeapDumpEnd:
			if loopErr = w.EndHeapDump(); loopErr == nil {
				loopErr = w.WriteRecord(hprof.TagHeapDumpEnd, time, nil)
			}
			inHeap = false
		case bmd.KindTrace, bmd.KindEnd:
		case bmd.KindHeapInfo:
			s.Tag, s.HeapType, s.HeapName = hprof.HeapDumpInfoTag, rec.HeapType, str(rec.Name)
			loopErr = sub(&s)
		case bmd.KindRoot:
			st.Roots++
			s = hprof.SubRecord{Tag: hprof.SubTag(rec.Tag), ID: obj(rec.Object), Thread: rec.Thread, Frame: rec.Frame,
				JNIRef: rec.JNIRef, StackTrace: rec.Trace, Elements: s.Elements, Data: s.Data[:0], Class: s.Class}
			loopErr = sub(&s)
		case bmd.KindClass:
			st.Objects++
			c := &s.Class
			d := &rec.Def
			s.Tag = hprof.ClassDumpTag
			c.ID, c.StackTrace = obj(rec.ID), d.StackTrace
			c.Super, c.Loader, c.Signers, c.ProtectionDomain = obj(d.Super), obj(d.Loader), obj(d.Signers), obj(d.ProtectionDomain)
			c.Reserved1, c.Reserved2, c.InstanceSize = obj(d.Reserved1), obj(d.Reserved2), d.InstanceSize
			c.Constants = c.Constants[:0]
			for _, k := range d.Constants {
				v := k.Value
				if k.Type == bmd.Object {
					v = obj(v)
				}
				c.Constants = append(c.Constants, hprof.Constant{Index: k.Index, Type: hprof.BasicType(k.Type), Value: v})
			}
			c.Statics = c.Statics[:0]
			for _, f := range d.Statics {
				v := f.Value
				if f.Type == bmd.Object {
					v = obj(v)
				}
				c.Statics = append(c.Statics, hprof.StaticField{Name: str(f.Name), Type: hprof.BasicType(f.Type), Value: v})
			}
			c.Fields = c.Fields[:0]
			for _, f := range d.Fields {
				c.Fields = append(c.Fields, hprof.Field{Name: str(f.Name), Type: hprof.BasicType(f.Type)})
			}
			if rn != nil {
				cls := rn.classBy[rec.ID]
				for i, f := range d.Statics {
					orig, ok := opt.Mapping.Field(cls, rn.texts[f.Name])
					if c.Statics[i].Name, loopErr = rename(f.Name, orig, ok, &st.RenamedFields); loopErr != nil {
						break
					}
				}
				for i, f := range d.Fields {
					orig, ok := opt.Mapping.Field(cls, rn.texts[f.Name])
					if loopErr == nil {
						c.Fields[i].Name, loopErr = rename(f.Name, orig, ok, &st.RenamedFields)
					}
				}
				if loopErr != nil {
					break
				}
			}
			if meta.ClassesPlaced {
				// Held until a PLACE CLASSES record says where it was.
				unplaced = append(unplaced, c.Clone())
				break
			}
			loopErr = sub(&s)
		case bmd.KindPlaceClasses:
			if uint64(len(unplaced)) < rec.Length {
				loopErr = fmt.Errorf("decrunch: PLACE CLASSES of %d classes at offset %d, %d held", rec.Length, rec.Offset, len(unplaced))
				break
			}
			cs := s.Class
			s.Tag = hprof.ClassDumpTag
			for _, c := range unplaced[:rec.Length] {
				s.Class = *c
				if loopErr = sub(&s); loopErr != nil {
					break
				}
			}
			s.Class = cs
			unplaced = unplaced[rec.Length:]
		case bmd.KindInstance:
			st.Objects++
			lay, _ := r.Layout(rec.Class)
			data := s.Data[:0]
			for i, f := range lay {
				v := rec.Values[i]
				if f.Type == bmd.Object {
					data = enc.AppendID(data, obj(v))
					continue
				}
				switch f.Type.Size() {
				case 1:
					data = append(data, byte(v))
				case 2:
					data = binary.BigEndian.AppendUint16(data, uint16(v))
				case 4:
					data = binary.BigEndian.AppendUint32(data, uint32(v))
				case 8:
					data = binary.BigEndian.AppendUint64(data, v)
				}
			}
			s.Tag, s.ID, s.StackTrace, s.ClassID, s.Data = hprof.InstanceDumpTag, obj(rec.ID), rec.Trace, obj(rec.Class), data
			loopErr = sub(&s)
		case bmd.KindObjectArray:
			st.Objects++
			for i, e := range rec.Elements {
				rec.Elements[i] = obj(e)
			}
			s.Tag, s.ID, s.StackTrace, s.ClassID, s.Elements = hprof.ObjectArrayDumpTag, obj(rec.ID), rec.Trace, obj(rec.Class), rec.Elements
			loopErr = sub(&s)
		case bmd.KindPrimitiveArray, bmd.KindPrimitiveNoData:
			st.Objects++
			s.Tag = hprof.PrimitiveArrayTag
			if rec.Kind == bmd.KindPrimitiveNoData {
				s.Tag = hprof.PrimitiveArrayNoData
			}
			data := s.Data
			s.ID, s.StackTrace, s.Length, s.ElemType, s.Data = obj(rec.ID), rec.Trace, rec.Count, hprof.BasicType(rec.Type), nil
			loopErr = sub(&s)
			s.Data = data[:0]
		default:
			loopErr = fmt.Errorf("decrunch: unexpected %s record", rec.Kind)
		}
		if loopErr != nil {
			break
		}
	}
	if loopErr == nil && len(unplaced) > 0 {
		loopErr = fmt.Errorf("decrunch: %d class definitions never placed in the heap dump", len(unplaced))
	}
	if loopErr != nil {
		if !opt.Salvage {
			return nil, loopErr
		}
		st.Salvaged = loopErr
	}
	if opt.Salvage && len(unplaced) > 0 {
		// Objects written may be instances of classes not yet placed:
		// every class definition read goes in.
		if !inHeap {
			if w.BeginHeapDump(hprof.TagHeapDumpSegment, time) == nil {
				inHeap, heapSeg = true, true
			}
		}
		s.Tag = hprof.ClassDumpTag
		for _, c := range unplaced {
			s.Class = *c
			if inHeap && w.WriteSub(&s) != nil {
				break
			}
		}
	}
	if inHeap && opt.Salvage {
		// Close a cut-off run of segments so that readers accept the file.
		w.EndHeapDump()
		if heapSeg {
			w.WriteRecord(hprof.TagHeapDumpEnd, time, nil)
		}
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	st.OutBytes = cw.n
	return st, nil
}

func lookup(n Names, hash, length uint64) (string, bool) {
	if n == nil {
		return "", false
	}
	return n.Lookup(hash, length)
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

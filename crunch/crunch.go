// Package crunch converts an HPROF heap dump into a BMD file: two streaming
// passes over the dump, object IDs remapped densely, names hashed, primitive
// contents dropped unless options keep them.
package crunch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// Options shape what a crunch keeps.
type Options struct {
	KeepStrings     bool     // all names in the clear
	KeepPrimitives  bool     // all primitive field values (instance, static, constant pool)
	PreserveClasses []string // these classes keep their name and all their field values
	Profile         string   // "" or "leak": keep the fields of LeakProfile
	// HashPlatformNames hashes the names of the platform too (classes of
	// the boot class loader, their fields, their stack frames' methods,
	// heap names), which are otherwise in the clear.
	HashPlatformNames bool
	DropHeaps         []string // Android heaps to leave out: "zygote", "image", "app", "default"
	Tool              string   // written to the metadata
	// Progress, when set, is called now and then with the pass (1 or 2)
	// and the input bytes read so far in that pass.
	Progress func(pass int, done int64)
	// hashName, when set, hashes a name that is not kept in the clear
	// (CrunchV1 sets Java's hash); nil is xxhash64 of NormalizeName.
	hashName func(text []byte) (length int, hash uint64)
}

// Canonical returns the options as the command-line flags that produce
// them, for the file's metadata.
func (o *Options) Canonical() string {
	var f []string
	if o.KeepStrings {
		f = append(f, "--keep-strings")
	}
	if o.KeepPrimitives {
		f = append(f, "--keep-primitives")
	}
	if o.HashPlatformNames {
		f = append(f, "--hash-platform-names")
	}
	for _, c := range o.PreserveClasses {
		f = append(f, "--preserve-class="+c)
	}
	if o.Profile != "" {
		f = append(f, "--profile="+o.Profile)
	}
	if len(o.DropHeaps) > 0 {
		f = append(f, "--drop-heap="+strings.Join(o.DropHeaps, ","))
	}
	return strings.Join(f, " ")
}

var heapTypes = map[string]uint32{"default": 0, "zygote": 'Z', "image": 'I', "app": 'A'}

// ParseHeapName returns the HEAP DUMP INFO type of an Android heap name.
func ParseHeapName(s string) (uint32, error) {
	t, ok := heapTypes[s]
	if !ok {
		return 0, fmt.Errorf("unknown heap %q (use zygote, image, app or default)", s)
	}
	return t, nil
}

// Stats counts what went in and what came out.
type Stats struct {
	InBytes      int64
	OutBytes     int64
	InRecords    map[string]int64 // by HPROF record or sub-record name
	InBytesBy    map[string]int64
	OutRecords   map[string]uint64 // by BMD record kind
	OutBytesBy   map[string]uint64
	Objects      uint64
	Classes      uint64
	Strings      uint64
	Hashed       uint64
	ArrayNames   uint64 // array class names written as ARRAY NAME of a hashed element name
	Unreferenced uint64 // STRING records nothing refers to, left out
	Dropped      uint64 // objects left out by DropHeaps
	Dangling     uint64 // distinct referenced IDs not in the dump
	IndexBytes   int64
	HPROFHeader  hprof.Header
	// Warnings say which options had nothing to act on: a --drop-heap heap
	// or a --preserve-class class that is not in the dump.
	Warnings []string
}

// loadInfo is a LOAD CLASS record.
type loadInfo struct {
	serial, trace, time uint32
	class, name         uint64 // HPROF IDs
	dense               uint64 // the class's object ID in the BMD, for sorting
}

// frameNames are the string IDs of a STACK FRAME and its class serial.
type frameNames struct {
	method, signature, source uint64
	class                     uint32
}

type classInfo struct {
	dump        *hprof.ClassDump
	keepAll     bool            // preserve-class or keep-primitives
	keepFields  map[uint64]bool // HPROF field-name string IDs kept by a profile
	keepStatics map[uint64]bool // HPROF static-name string IDs kept as platform facts
	chain       []hprof.BasicType
	chainSize   int
}

// state is what pass 1 learns and pass 2 uses.
type state struct {
	opt    *Options
	idSize int

	strings     map[uint64]uint64 // HPROF string ID -> index in strs (pass 1), then dense ID
	strs        []stringInfo      // one per distinct HPROF string ID, in dump order
	arena       []byte            // texts of the strings (pass 1), then of those that stay clear
	nStrings    uint64
	classNames  map[uint64]uint64 // class object ID -> name string ID (LOAD CLASS)
	loads       []loadInfo        // LOAD CLASS records, written sorted by class
	frames      map[uint64]uint64 // HPROF frame ID -> dense
	nFrames     uint64
	frameNames  []frameNames    // the string IDs of the STACK FRAME records
	threadNames []uint64        // the string IDs of the START THREAD records
	heapNames   map[uint64]bool // the string IDs of heap names (HEAP DUMP INFO)

	classes  []*classInfo
	classIdx map[uint64]int // class object ID -> index in classes
	up       []int32        // class index -> nearest class at or above it with fields, or -1

	objs        idList // non-class object IDs in order (pass 1)
	index       *idIndex
	dropped     *idIndex
	nObj        uint64 // classes + objects written
	danglingIDs map[uint64]uint64

	preserveNames map[string]bool // class name spellings to preserve
	profileClass  map[string][]string
	profileFields map[string]bool
	factClass     map[string][]string // class name spellings -> platform fact statics
	factFields    map[string]bool
	drop          map[uint32]bool
	addrs         addressLayout
	heapsSeen     map[uint32]bool // heap types of the dump's HEAP DUMP INFO records

	stats *Stats
}

// Crunch reads the HPROF dump in src twice and writes its BMD version 2
// form to out. On error, what was written to out is incomplete.
func Crunch(src io.ReadSeeker, out io.Writer, opt Options) (*Stats, error) {
	st := &state{opt: &opt, strings: map[uint64]uint64{}, classNames: map[uint64]uint64{},
		frames: map[uint64]uint64{}, classIdx: map[uint64]int{}, danglingIDs: map[uint64]uint64{},
		preserveNames: map[string]bool{}, profileClass: map[string][]string{}, profileFields: map[string]bool{},
		factClass: map[string][]string{}, factFields: map[string]bool{}, heapNames: map[uint64]bool{}, heapsSeen: map[uint32]bool{},
		drop:  map[uint32]bool{},
		stats: &Stats{InRecords: map[string]int64{}, InBytesBy: map[string]int64{}, OutRecords: map[string]uint64{}, OutBytesBy: map[string]uint64{}}}
	for _, c := range opt.PreserveClasses {
		for _, s := range classNameSpellings(c) {
			st.preserveNames[s] = true
		}
	}
	for _, p := range PlatformFacts {
		for _, s := range classNameSpellings(p.Class) {
			st.factClass[s] = append(st.factClass[s], p.Field)
		}
		st.factFields[p.Field] = true
	}
	switch opt.Profile {
	case "":
	case "leak":
		for _, p := range LeakProfile {
			for _, s := range classNameSpellings(p.Class) {
				st.profileClass[s] = append(st.profileClass[s], p.Field)
			}
			st.profileFields[p.Field] = true
		}
	default:
		return nil, fmt.Errorf("unknown profile %q (the only profile is leak)", opt.Profile)
	}
	for _, h := range opt.DropHeaps {
		t, err := ParseHeapName(h)
		if err != nil {
			return nil, err
		}
		st.drop[t] = true
	}
	if err := st.pass1(src); err != nil {
		return nil, err
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if err := st.pass2(src, out); err != nil {
		return nil, err
	}
	return st.stats, nil
}

type progressReader struct {
	r    io.Reader
	n    int64
	next int64
	pass int
	f    func(int, int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if p.f != nil && p.n >= p.next {
		p.f(p.pass, p.n)
		p.next = p.n + 16<<20
	}
	return n, err
}

func (st *state) pass1(src io.Reader) error {
	pr := &progressReader{r: src, pass: 1, f: st.opt.Progress}
	r, err := hprof.NewReader(pr)
	if err != nil {
		return err
	}
	r.SkipElements = true // pass 1 needs object IDs, not references
	st.idSize = r.IDSize()
	st.stats.HPROFHeader = r.Header()
	dec := hprof.BodyDecoder{IDSize: st.idSize}
	var dropped idList
	var s hprof.SubRecord
	var curHeap uint32
	var hasHeap bool
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch rec.Tag {
		case hprof.TagString:
			body, err := r.Body()
			if err != nil {
				return err
			}
			id, text, err := dec.String(rec, body)
			if err != nil {
				return err
			}
			st.addString(id, text)
		case hprof.TagLoadClass:
			body, err := r.Body()
			if err != nil {
				return err
			}
			lc, err := dec.LoadClass(rec, body)
			if err != nil {
				return err
			}
			st.classNames[lc.ClassID] = lc.Name
			st.loads = append(st.loads, loadInfo{serial: lc.Serial, trace: lc.StackTrace, time: rec.Time, class: lc.ClassID, name: lc.Name})
		case hprof.TagStackFrame:
			body, err := r.Body()
			if err != nil {
				return err
			}
			f, err := dec.StackFrame(rec, body)
			if err != nil {
				return err
			}
			st.nFrames++
			if _, dup := st.frames[f.ID]; !dup {
				st.frames[f.ID] = st.nFrames
			}
			st.frameNames = append(st.frameNames, frameNames{f.Method, f.Signature, f.SourceFile, f.Class})
		case hprof.TagStartThread:
			body, err := r.Body()
			if err != nil {
				return err
			}
			t, err := dec.StartThread(rec, body)
			if err != nil {
				return err
			}
			st.threadNames = append(st.threadNames, t.Name, t.Group, t.ParentGroup)
		case hprof.TagHeapDump, hprof.TagHeapDumpSegment:
			for {
				err := r.NextSub(&s)
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				switch s.Tag {
				case hprof.HeapDumpInfoTag:
					curHeap, hasHeap = s.HeapType, true
					st.heapsSeen[curHeap] = true
					st.heapNames[s.HeapName] = true
				case hprof.ClassDumpTag:
					st.addrs.object(s.ID)
					if _, dup := st.classIdx[s.ID]; dup {
						return &hprof.FormatError{Offset: s.Offset, Record: s.Tag.String(), Tag: int(s.Tag), Msg: fmt.Sprintf("second CLASS DUMP of class 0x%x", s.ID)}
					}
					st.classIdx[s.ID] = len(st.classes)
					st.classes = append(st.classes, &classInfo{dump: s.Class.Clone()})
				case hprof.InstanceDumpTag, hprof.ObjectArrayDumpTag, hprof.PrimitiveArrayTag, hprof.PrimitiveArrayNoData:
					st.addrs.object(s.ID)
					if s.Tag == hprof.ObjectArrayDumpTag {
						st.addrs.objectArray(s.ID, s.Length)
					}
					if hasHeap && st.drop[curHeap] {
						dropped.add(s.ID)
					} else {
						st.objs.add(s.ID)
					}
				}
			}
		}
	}
	// Build the ID index: classes first, then the other objects in order.
	nc := len(st.classes)
	all := make([]uint64, 0, nc+st.objs.n)
	for _, c := range st.classes {
		all = append(all, c.dump.ID)
	}
	all = st.objs.appendTo(all)
	st.nObj = uint64(len(all))
	st.index = newIDIndex(all)
	st.stats.Dropped = uint64(dropped.n)
	st.dropped = newIDIndex(dropped.appendTo(make([]uint64, 0, dropped.n)))
	st.stats.IndexBytes = st.index.bytes() + st.dropped.bytes()

	st.keptValues()
	st.optionWarnings()
	st.classifyStrings()
	st.numberStrings()
	// Instance sizes: the field bytes of each class and of its
	// superclasses, and for each class the nearest class at or above it
	// that has fields (up), so that building a layout visits only those.
	// A class met twice on the way up is a superclass loop, which no VM
	// writes: an error, not a walk that never ends. Layouts themselves are
	// built at a class's first instance (layout), whose data bounds them.
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]uint8, nc)
	st.up = make([]int32, nc)
	var path []int
	for i := range st.classes {
		path = path[:0]
		k := i
		for k >= 0 && state[k] == unseen {
			state[k] = onPath
			path = append(path, k)
			c := st.classes[k].dump
			next, ok := st.classIdx[c.Super]
			if !ok || c.Super == 0 {
				next = -1
			} else if state[next] == onPath {
				return fmt.Errorf("crunch: class 0x%x: its superclass chain loops back to class 0x%x", st.classes[i].dump.ID, c.Super)
			}
			k = next
		}
		// Resolve the path from the top down: k is -1 or a done class.
		size, up := 0, int32(-1)
		if k >= 0 {
			size, up = st.classes[k].chainSize, st.up[k]
		}
		for j := len(path) - 1; j >= 0; j-- {
			ci := st.classes[path[j]]
			for _, f := range ci.dump.Fields {
				size += f.Type.Size(st.idSize)
			}
			if len(ci.dump.Fields) > 0 {
				up = int32(path[j])
			}
			ci.chainSize, st.up[path[j]] = size, up
			state[path[j]] = done
		}
	}
	return nil
}

// writeLoads writes every LOAD CLASS record, sorted by class.
func (st *state) writeLoads(w *bmd.Writer) error {
	for _, l := range st.loads {
		if err := w.Time(l.time); err != nil {
			return err
		}
		if err := w.LoadClass(l.serial, l.dense, l.trace, st.sid(l.name)); err != nil {
			return err
		}
	}
	st.loads = nil
	return nil
}

// optionWarnings lists the options that have nothing to act on in this
// dump.
func (st *state) optionWarnings() {
	w := &st.stats.Warnings
	for _, h := range st.opt.DropHeaps {
		if t, _ := ParseHeapName(h); !st.heapsSeen[t] {
			*w = append(*w, fmt.Sprintf("--drop-heap %s: the dump has no %s heap (no HEAP DUMP INFO names it): nothing dropped", h, h))
		}
	}
	names := map[string]bool{}
	for _, l := range st.loads {
		names[st.textOf(l.name)] = true
	}
	for _, c := range st.opt.PreserveClasses {
		found := false
		for _, s := range classNameSpellings(c) {
			found = found || names[s]
		}
		if !found {
			*w = append(*w, fmt.Sprintf("--preserve-class %s: no class of that name in the dump: nothing preserved", c))
		}
	}
}

// keptValues decides which primitive values each class keeps: all with
// --keep-primitives or --preserve-class, the fields of the profile, and
// the platform facts of boot classes.
func (st *state) keptValues() {
	for _, ci := range st.classes {
		name := st.textOf(st.classNames[ci.dump.ID])
		if name == "" {
			continue
		}
		ci.keepAll = st.opt.KeepPrimitives || st.preserveNames[name]
		if fields := st.profileClass[name]; fields != nil {
			ci.keepFields = map[uint64]bool{}
			for _, f := range ci.dump.Fields {
				if slices.Contains(fields, st.textOf(f.Name)) {
					ci.keepFields[f.Name] = true
				}
			}
			for _, f := range ci.dump.Statics {
				if slices.Contains(fields, st.textOf(f.Name)) {
					ci.keepFields[f.Name] = true
				}
			}
		}
		if fields := st.factClass[name]; fields != nil && ci.dump.Loader == 0 {
			ci.keepStatics = map[uint64]bool{}
			for _, f := range ci.dump.Statics {
				if slices.Contains(fields, st.textOf(f.Name)) {
					ci.keepStatics[f.Name] = true
				}
			}
		}
	}
	if st.opt.KeepPrimitives {
		for _, ci := range st.classes {
			ci.keepAll = true
		}
	}
}

// layout returns the field types of an instance of class k, its own fields
// first, then each superclass's. It is built once, at the first instance,
// after the instance's data length has been checked against chainSize, so
// its size is bounded by bytes of the dump; only classes with fields are
// visited.
func (st *state) layout(k int) []hprof.BasicType {
	ci := st.classes[k]
	if ci.chain == nil && ci.chainSize > 0 {
		for j := st.up[k]; j >= 0; {
			c := st.classes[j].dump
			for _, f := range c.Fields {
				ci.chain = append(ci.chain, f.Type)
			}
			next, ok := st.classIdx[c.Super]
			if !ok || c.Super == 0 {
				break
			}
			j = st.up[next]
		}
	}
	return ci.chain
}

func (ci *classInfo) fieldKept(f hprof.Field) bool {
	return f.Type == hprof.Object || ci.keepAll || ci.keepFields[f.Name]
}

// obj maps an HPROF object ID to its dense ID: classes and objects of the
// dump get 1…N in BMD order, objects of dropped heaps N+1…, and IDs that are
// not in the dump get the next free IDs, the same one each time.
func (st *state) obj(id uint64) uint64 {
	if id == 0 {
		return 0
	}
	if o, ok := st.index.lookup(id); ok {
		return uint64(o) + 1
	}
	if o, ok := st.dropped.lookup(id); ok {
		return st.nObj + uint64(o) + 1
	}
	d, ok := st.danglingIDs[id]
	if !ok {
		d = st.nObj + uint64(st.dropped.len()) + uint64(len(st.danglingIDs)) + 1
		st.danglingIDs[id] = d
	}
	return d
}

func (st *state) sid(id uint64) uint64 { return st.strings[id] }

func (st *state) frameID(id uint64) uint64 { return st.frames[id] }

func (st *state) writeClasses(w *bmd.Writer) error {
	for _, ci := range st.classes {
		d := ci.dump
		c := bmd.Class{StackTrace: d.StackTrace, Super: st.obj(d.Super), Loader: st.obj(d.Loader),
			Signers: st.obj(d.Signers), ProtectionDomain: st.obj(d.ProtectionDomain),
			Reserved1: st.obj(d.Reserved1), Reserved2: st.obj(d.Reserved2), InstanceSize: d.InstanceSize}
		keepStatic := st.opt.KeepPrimitives || ci.keepAll
		for _, k := range d.Constants {
			v := k.Value
			if k.Type == hprof.Object {
				v = st.obj(v)
			}
			c.Constants = append(c.Constants, bmd.Constant{Index: k.Index, Type: bmd.Type(k.Type), Kept: keepStatic, Value: v})
		}
		for _, f := range d.Statics {
			v := f.Value
			if f.Type == hprof.Object {
				v = st.obj(v)
			}
			kept := keepStatic || ci.keepFields[f.Name] || ci.keepStatics[f.Name]
			if !kept && f.Type != hprof.Object {
				v = 0
			}
			c.Statics = append(c.Statics, bmd.Static{Name: st.sid(f.Name), Type: bmd.Type(f.Type), Kept: kept, Value: v})
		}
		for _, f := range d.Fields {
			c.Fields = append(c.Fields, bmd.Field{Name: st.sid(f.Name), Type: bmd.Type(f.Type), Kept: ci.fieldKept(f)})
		}
		if _, err := w.Class(&c); err != nil {
			return err
		}
	}
	return nil
}

func (st *state) readValue(b []byte, t hprof.BasicType) uint64 {
	switch t.Size(st.idSize) {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.BigEndian.Uint16(b))
	case 4:
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

func (st *state) pass2(src io.Reader, out io.Writer) error {
	pr := &progressReader{r: src, pass: 2, f: st.opt.Progress}
	r, err := hprof.NewReader(pr)
	if err != nil {
		return err
	}
	h := r.Header()
	meta := &bmd.Metadata{HPROFVersion: h.Version, IDSize: h.IDSize, Timestamp: h.Timestamp, Hash: bmd.HashXX64,
		Options: st.opt.Canonical(), Tool: st.opt.Tool, Objects: st.nObj, Classes: uint64(len(st.classes)), Strings: st.nStrings,
		ClassesPlaced: true, Alignment: st.addrs.alignment(), UncompressedRefs: h.IDSize == 8 && st.addrs.seen && !st.addrs.overlap}
	w, err := bmd.NewWriter(out, meta)
	if err != nil {
		return err
	}
	dec := hprof.BodyDecoder{IDSize: st.idSize}
	if err := st.writeStrings(w); err != nil {
		return err
	}
	var s hprof.SubRecord
	var values, elems, frames []uint64
	classesWritten := false
	var curHeap uint32
	var curHeapName uint64
	var hasHeap, heapInfoOut bool
	var place uint64                            // class dumps met since the last other heap record
	var topCount, topBytes, subCount [256]int64 // by tag, for Stats
	var lastClassID uint64                      // a one-entry cache of classIdx
	var lastClassIdx int
	in := st.stats
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		topCount[rec.Tag]++
		topBytes[rec.Tag] += int64(rec.Length) + 9
		if err := w.Time(rec.Time); err != nil {
			return err
		}
		var body []byte
		// STRING and LOAD CLASS were kept from pass 1; Next skips an
		// unread body.
		if !rec.Tag.IsHeapDump() && rec.Tag != hprof.TagString && rec.Tag != hprof.TagLoadClass {
			if body, err = r.Body(); err != nil {
				return err
			}
		}
		switch rec.Tag {
		case hprof.TagString:
			// written up front, in the order of numberStrings
		case hprof.TagLoadClass:
			// all written at the first one, sorted by class
			if st.loads != nil {
				if err := st.writeLoads(w); err != nil {
					return err
				}
			}
		case hprof.TagUnloadClass, hprof.TagEndThread:
			serial, err := dec.Serial(rec, body)
			if err != nil {
				return err
			}
			if rec.Tag == hprof.TagUnloadClass {
				err = w.UnloadClass(serial)
			} else {
				err = w.EndThread(serial)
			}
			if err != nil {
				return err
			}
		case hprof.TagStackFrame:
			f, err := dec.StackFrame(rec, body)
			if err != nil {
				return err
			}
			if _, err := w.StackFrame(st.sid(f.Method), st.sid(f.Signature), st.sid(f.SourceFile), f.Class, f.Line); err != nil {
				return err
			}
		case hprof.TagStackTrace:
			t, err := dec.StackTrace(rec, body, frames)
			if err != nil {
				return err
			}
			frames = t.Frames
			for i, f := range frames {
				frames[i] = st.frameID(f)
			}
			if err := w.StackTrace(t.Serial, t.Thread, frames); err != nil {
				return err
			}
		case hprof.TagStartThread:
			t, err := dec.StartThread(rec, body)
			if err != nil {
				return err
			}
			if err := w.StartThread(t.Serial, st.obj(t.Object), t.StackTrace, st.sid(t.Name), st.sid(t.Group), st.sid(t.ParentGroup)); err != nil {
				return err
			}
		case hprof.TagHeapDumpEnd:
			if err := w.HeapDumpEnd(); err != nil {
				return err
			}
		case hprof.TagHeapDump, hprof.TagHeapDumpSegment:
			if !classesWritten {
				// Class definitions go before the first heap dump record
				// (PLACE CLASSES says where each was dumped), so that
				// decrunch reads them while it can still write top-level
				// records, such as renamed field names.
				if err := st.writeClasses(w); err != nil {
					return err
				}
				classesWritten = true
			}
			if err := w.HeapDump(rec.Tag == hprof.TagHeapDumpSegment); err != nil {
				return err
			}
			for {
				err := r.NextSub(&s)
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				subCount[s.Tag]++
				dropped := hasHeap && st.drop[curHeap]
				if s.Tag == hprof.ClassDumpTag {
					// Class definitions were written first; this is where
					// the dump had them, which decrunch restores.
					if dropped && !heapInfoOut {
						// A class is never dropped: name its heap.
						err = w.HeapInfo(curHeap, st.sid(curHeapName))
						heapInfoOut = true
					}
					place++
					if err != nil {
						return err
					}
					continue
				}
				if place > 0 {
					if err := w.PlaceClasses(place); err != nil {
						return err
					}
					place = 0
				}
				switch {
				case s.Tag == hprof.HeapDumpInfoTag:
					curHeap, curHeapName, hasHeap = s.HeapType, s.HeapName, true
					heapInfoOut = !st.drop[curHeap]
					if heapInfoOut {
						err = w.HeapInfo(s.HeapType, st.sid(s.HeapName))
					}
				case s.Tag.IsRoot():
					if !dropped {
						o := st.obj(s.ID)
						if o > st.nObj && o <= st.nObj+uint64(st.dropped.len()) {
							break // a root of an object left out with its heap
						}
						err = w.Root(uint8(s.Tag), o, s.Thread, s.Frame, s.JNIRef, s.StackTrace)
					}
				case dropped:
				case s.Tag == hprof.InstanceDumpTag:
					k, ok := lastClassIdx, s.ClassID == lastClassID && lastClassID != 0
					if !ok {
						if k, ok = st.classIdx[s.ClassID]; ok {
							lastClassID, lastClassIdx = s.ClassID, k
						}
					}
					if !ok {
						return &hprof.FormatError{Offset: s.Offset, Record: s.Tag.String(), Tag: int(s.Tag), Msg: fmt.Sprintf("instance of class 0x%x, which has no CLASS DUMP", s.ClassID)}
					}
					ci := st.classes[k]
					if ci.chainSize != len(s.Data) {
						return &hprof.FormatError{Offset: s.Offset, Record: s.Tag.String(), Tag: int(s.Tag), Msg: fmt.Sprintf("instance has %d bytes of fields, its class layout %d", len(s.Data), ci.chainSize)}
					}
					values = values[:0]
					p := 0
					for _, t := range st.layout(k) {
						v := st.readValue(s.Data[p:], t)
						if t == hprof.Object {
							v = st.obj(v)
						}
						values = append(values, v)
						p += t.Size(st.idSize)
					}
					if err = w.Trace(s.StackTrace); err == nil {
						_, err = w.Instance(uint64(k)+1, values)
					}
				case s.Tag == hprof.ObjectArrayDumpTag:
					elems = elems[:0]
					for _, e := range s.Elements {
						elems = append(elems, st.obj(e))
					}
					if err = w.Trace(s.StackTrace); err == nil {
						_, err = w.ObjectArray(st.obj(s.ClassID), elems)
					}
				case s.Tag == hprof.PrimitiveArrayTag, s.Tag == hprof.PrimitiveArrayNoData:
					if err = w.Trace(s.StackTrace); err == nil {
						_, err = w.PrimitiveArray(bmd.Type(s.ElemType), s.Length, s.Tag == hprof.PrimitiveArrayNoData)
					}
				}
				if err != nil {
					return err
				}
			}
			if err := w.PlaceClasses(place); err != nil {
				return err
			}
			place = 0
		default:
			if err := w.RawRecord(uint8(rec.Tag), body); err != nil {
				return err
			}
		}
	}
	if !classesWritten && len(st.classes) > 0 {
		return errors.New("crunch: class dumps outside any heap dump")
	}
	if err := w.Close(); err != nil {
		return err
	}
	for t := range 256 {
		if topCount[t] > 0 {
			in.InRecords[hprof.Tag(t).String()] += topCount[t]
			in.InBytesBy[hprof.Tag(t).String()] += topBytes[t]
		}
		if subCount[t] > 0 {
			in.InRecords[hprof.SubTag(t).String()] += subCount[t]
		}
	}
	in.InBytes = pr.n
	in.Objects = w.Objects()
	in.Classes = uint64(len(st.classes))
	in.Strings = st.nStrings
	in.Dangling = uint64(len(st.danglingIDs))
	for k := range w.Count {
		if w.Count[k] > 0 {
			in.OutRecords[bmd.Kind(k).String()] = w.Count[k]
			in.OutBytesBy[bmd.Kind(k).String()] = w.Bytes[k]
			in.OutBytes += int64(w.Bytes[k])
		}
	}
	return nil
}

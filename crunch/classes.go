package crunch

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// classInfo is what crunch knows of a class with a CLASS DUMP. Its index
// in state.classes is its dense object ID minus one.
type classInfo struct {
	dump       *hprof.ClassDump // its first dump
	offset     int64            // where its first dump's CLASS DUMP sub-record is
	keepAll    bool             // preserve-class or keep-primitives
	keepFields map[uint64]bool  // HPROF name IDs of the fields and statics it declares that keep their values (keptValues)
	picks      []fieldPick      // what its instances keep (picks)
	picked     bool             // picks is built
	refsOnly   bool             // all its picks are references
	chainSize  int              // the field bytes of an instance
	chunk      uint32           // the chunk before which pass 2 defines it
	defined    bool             // pass 2: its CLASS record is written
	placed     bool             // pass 2: its first dump is placed
	loads      []int            // its LOAD CLASS records (indexes in state.loads)
}

// noChunk marks a class no chunk needs yet.
const noChunk = math.MaxUint32

func (ci *classInfo) fieldKept(f hprof.Field) bool {
	return f.Type == hprof.Object || ci.keepAll || ci.keepFields[f.Name]
}

// super returns the index of class k's super class among the classes, or
// -1 (none, or a class without CLASS DUMP).
func (st *state) super(k int) int {
	c := st.classes[k].dump
	if c.Super == 0 {
		return -1
	}
	j, ok := st.classIdx[c.Super]
	if !ok {
		return -1
	}
	return j
}

// hierarchy computes instance sizes: the field bytes of each class and of
// its superclasses, and for each class the nearest class at or above it
// that has fields (up), so that building a layout visits only those. A
// class met twice on the way up is a superclass loop, which no VM writes:
// an error, not a walk that never ends. Layouts themselves are built at a
// class's first instance (layout), whose data bounds them.
func (st *state) hierarchy() error {
	const (
		unseen = iota
		onPath
		done
	)
	nc := len(st.classes)
	state := make([]uint8, nc)
	st.up = make([]int32, nc)
	var path []int
	for i := range st.classes {
		path = path[:0]
		k := i
		for k >= 0 && state[k] == unseen {
			state[k] = onPath
			path = append(path, k)
			next := st.super(k)
			if next >= 0 && state[next] == onPath {
				c := st.classes[k]
				return &hprof.FormatError{Offset: c.offset, Record: hprof.SubClassDump.String(), Tag: int(hprof.SubClassDump),
					Msg: fmt.Sprintf("class 0x%x: its superclass chain loops back to class 0x%x", c.dump.ID, c.dump.Super)}
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

// planDefinitions decides where pass 2 defines each class: before the
// chunk of its first need (its place, or an instance of it or of a
// subclass, which needs the whole chain), and lists the LOAD CLASS records
// it writes with it: those of its class ID unless a STACK FRAME names one
// of them.
func (st *state) planDefinitions() {
	for id, c := range st.firstNeed {
		if k, ok := st.classIdx[id]; ok {
			st.classes[k].chunk = min(st.classes[k].chunk, c)
		}
	}
	st.firstNeed = nil
	// A super class is needed wherever a subclass is: classes in the
	// order of their chunks, each walk up stops at a super already as
	// early, so each class is lowered once.
	order := make([]int, len(st.classes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(st.classes[a].chunk, st.classes[b].chunk) })
	for _, k := range order {
		c := st.classes[k].chunk
		for j := st.super(k); j >= 0 && st.classes[j].chunk > c; j = st.super(j) {
			st.classes[j].chunk = c
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(st.classes[a].chunk, st.classes[b].chunk) })
	st.defOrder = order
	// A class whose loads a frame names keeps all its loads in place: a
	// class loaded more than once (a serial unloaded, the ID loaded again
	// under another name) must keep the order of its loads, the last
	// naming it.
	framed := map[uint32]bool{}
	for _, f := range st.frameNames {
		framed[f.class] = true
	}
	inPlace := map[uint64]bool{}
	for _, l := range st.loads {
		if framed[l.serial] {
			inPlace[l.class] = true
		}
	}
	for i := range st.loads {
		l := &st.loads[i]
		if k, ok := st.classIdx[l.class]; ok && !inPlace[l.class] {
			l.deferred = true
			st.classes[k].loads = append(st.classes[k].loads, i)
		}
	}
}

// fieldPick is a value of an instance that its BMD record keeps (an
// object field, or a kept primitive): where it is in the instance's data,
// its size, and whether it is a reference.
type fieldPick struct {
	off  uint32
	size uint8
	ref  bool
}

// picksOf is picks of class k, ci, which has them once they are picked.
func (st *state) picksOf(k int, ci *classInfo) []fieldPick {
	if ci.picked {
		return ci.picks
	}
	return st.picks(k)
}

// picks returns the values an instance of class k keeps, in the order of
// its layout (its own fields first, then each superclass's): the values
// bmd.Writer.InstanceKept takes. They are listed once, at the first
// instance, after the instance's data length has been checked against
// chainSize, so their number is bounded by bytes of the dump; only classes
// with fields are visited.
func (st *state) picks(k int) []fieldPick {
	ci := st.classes[k]
	if ci.picked {
		return ci.picks
	}
	ci.picked = true
	ci.picks, ci.refsOnly = st.pickFields(k, ci.picks)
	return ci.picks
}

// pickFields appends to picks the values an instance of class k keeps
// (picks), and reports whether all are references. It changes nothing:
// pass 2's other goroutines call it (spanWorker.picksOf).
func (st *state) pickFields(k int, picks []fieldPick) ([]fieldPick, bool) {
	off := 0
	for j := int(st.up[k]); j >= 0; {
		cj := st.classes[j]
		for _, f := range cj.dump.Fields {
			size := f.Type.Size(st.idSize)
			if cj.fieldKept(f) {
				picks = append(picks, fieldPick{off: uint32(off), size: uint8(size), ref: f.Type == hprof.Object})
			}
			off += size
		}
		next := st.super(j)
		if next < 0 {
			break
		}
		j = int(st.up[next])
	}
	refsOnly := true
	for _, f := range picks {
		refsOnly = refsOnly && f.ref
	}
	return picks, refsOnly
}

// keptValues decides which primitive values each class keeps: all with
// --keep-primitives or --preserve-class; the fields of the profile and the
// libraries' leak flags in a class of that name, whatever its loader; the
// platform facts, lifecycle flags and platform sizes in a boot class of that
// name.
func (st *state) keptValues() {
	for _, ci := range st.classes {
		ci.keepAll = st.opt.KeepPrimitives
		// string(name) in each index expression: no string is made.
		name := st.rawTextOf(st.classNames[ci.dump.ID])
		if len(name) == 0 {
			continue
		}
		ci.keepAll = ci.keepAll || st.preserveNames[string(name)]
		st.keepNamed(ci, st.profileClass[string(name)])
		st.keepNamed(ci, st.libraryClass[string(name)])
		if ci.dump.Loader == 0 {
			st.keepNamed(ci, st.factClass[string(name)])
		}
	}
}

// keepNamed keeps the values of the statics and instance fields that
// class ci declares whose names are among names.
func (st *state) keepNamed(ci *classInfo, names []string) {
	if len(names) == 0 {
		return
	}
	keep := func(name uint64) {
		if slices.Contains(names, st.textOf(name)) {
			if ci.keepFields == nil {
				ci.keepFields = map[uint64]bool{}
			}
			ci.keepFields[name] = true
		}
	}
	for _, f := range ci.dump.Statics {
		keep(f.Name)
	}
	for _, f := range ci.dump.Fields {
		keep(f.Name)
	}
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
	if len(st.opt.PreserveClasses) == 0 {
		return // else 24,000 strings made for nothing in a large JVM's dump
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

// bmdClass converts a class dump of class k (its first dump, or another
// one) to a BMD class definition, writing the names it uses first, or,
// where names is not nil, taking their BMD IDs from it: those of d's
// statics then of its fields, in order (defineGroup, which has written
// them).
func (p *pass2) bmdClass(k int, d *hprof.ClassDump, names []uint64) (*bmd.Class, error) {
	ci := p.classes[k]
	c := &p.class
	*c = bmd.Class{Index: uint64(k) + 1, StackTrace: d.StackTrace, Super: p.obj(d.Super), Loader: p.obj(d.Loader),
		Signers: p.obj(d.Signers), ProtectionDomain: p.obj(d.ProtectionDomain),
		Reserved1: p.obj(d.Reserved1), Reserved2: p.obj(d.Reserved2), InstanceSize: d.InstanceSize,
		Constants: c.Constants[:0], Statics: c.Statics[:0], Fields: c.Fields[:0]}
	for _, k := range d.Constants {
		v := k.Value
		if k.Type == hprof.Object {
			v = p.obj(v)
		}
		c.Constants = append(c.Constants, bmd.Constant{Index: k.Index, Type: bmd.Type(k.Type), Kept: ci.keepAll, Value: v})
	}
	nameOf := func(i int, hid uint64) (uint64, error) {
		if names != nil {
			return names[i], nil
		}
		return p.sid(hid)
	}
	for i, f := range d.Statics {
		name, err := nameOf(i, f.Name)
		if err != nil {
			return nil, err
		}
		v := f.Value
		if f.Type == hprof.Object {
			v = p.obj(v)
		}
		kept := ci.keepAll || ci.keepFields[f.Name]
		if !kept && f.Type != hprof.Object {
			v = 0
		}
		c.Statics = append(c.Statics, bmd.Static{Name: name, Type: bmd.Type(f.Type), Kept: kept, Value: v})
	}
	for i, f := range d.Fields {
		name, err := nameOf(len(d.Statics)+i, f.Name)
		if err != nil {
			return nil, err
		}
		c.Fields = append(c.Fields, bmd.Field{Name: name, Type: bmd.Type(f.Type), Kept: ci.fieldKept(f)})
	}
	return c, nil
}

// define writes the definition of class k: its LOAD CLASS records, the
// names they and its fields use, and its CLASS record.
func (p *pass2) define(k int) error {
	return p.defineGroup([]int{k})
}

// defineGroup defines the classes ks that are not defined yet, as runs of
// records of one kind, which compress best: the names of the classes,
// then the names of their statics and fields (each name written where it
// is first used, so that names used one after the other share prefixes
// and have consecutive IDs), then their LOAD CLASS records, then their
// CLASS records.
func (p *pass2) defineGroup(ks []int) error {
	todo := p.group[:0]
	for _, k := range ks {
		if !p.classes[k].defined {
			p.classes[k].defined = true
			todo = append(todo, k)
		}
	}
	p.group = todo
	for _, k := range todo {
		for _, i := range p.classes[k].loads {
			if _, err := p.sid(p.loads[i].name); err != nil {
				return err
			}
		}
	}
	names := p.groupNames[:0] // their BMD IDs, for bmdClass
	for _, k := range todo {
		d := p.classes[k].dump
		for _, f := range d.Statics {
			id, err := p.sid(f.Name)
			if err != nil {
				return err
			}
			names = append(names, id)
		}
		for _, f := range d.Fields {
			id, err := p.sid(f.Name)
			if err != nil {
				return err
			}
			names = append(names, id)
		}
	}
	p.groupNames = names
	for _, k := range todo {
		for _, i := range p.classes[k].loads {
			if err := p.writeLoad(&p.loads[i]); err != nil {
				return err
			}
		}
	}
	for _, k := range todo {
		d := p.classes[k].dump
		n := len(d.Statics) + len(d.Fields)
		c, err := p.bmdClass(k, d, names[:n:n])
		names = names[n:]
		if err != nil {
			return err
		}
		if _, err := p.w.Class(c); err != nil {
			return err
		}
	}
	return nil
}

// defineChunk defines the classes first needed in chunk c (and every
// earlier chunk, for a chunk pass 2 skipped).
func (p *pass2) defineChunk(c uint32) error {
	start := p.nextDef
	for p.nextDef < len(p.defOrder) && p.classes[p.defOrder[p.nextDef]].chunk <= c {
		p.nextDef++
	}
	return p.defineGroup(p.defOrder[start:p.nextDef])
}

// recentClasses remembers, for recently met class IDs, a value of each
// (a class index): the instances of a few hundred classes make most of a
// heap, so a small table indexed by the ID spares most lookups in a map or
// an index. ID 0 is never remembered.
type recentClasses [1024]recentClass

// recentClass is a slot of recentClasses.
type recentClass struct {
	id uint64
	k  int32
}

// get returns the value remembered for id, if it is.
func (c *recentClasses) get(id uint64) (int32, bool) {
	e := &c[(id>>3)%uint64(len(c))]
	if e.id != id || id == 0 {
		return 0, false
	}
	return e.k, true
}

// put remembers k for id, in place of the ID that shares its slot.
func (c *recentClasses) put(id uint64, k int32) {
	c[(id>>3)%uint64(len(c))] = recentClass{id, k}
}

package bmd

import (
	"slices"

	"github.com/heapcrunch/heapcrunch/internal/javatype"
)

// layouts holds, per class index, the instance fields of the class and of
// its superclasses in the order an instance stores them: the class's own
// fields first, then its superclass's, up the chain. Classes may be
// defined in any order and any index (a file defines them as they are
// first needed), so they are kept in a map.
//
// Memory stays proportional to the class records read, whatever the super
// links say: a chain stops at a class it has already visited (a cycle),
// and flattened chains are cached only while their total stays within a
// budget; beyond it a chain is rebuilt in a scratch slice at each use.
type layouts struct {
	// dense holds the classes of index below denseClasses (every real
	// dump's), found without hashing; classes holds the others.
	dense   []*layoutClass
	n       int // classes defined
	classes map[uint64]*layoutClass
	fields  int // fields of all classes
	cached  int // fields held in chains
	scratch []Field
	typeBuf []Type // written's scratch, for a chain not kept
	path    []*layoutClass
	walk    uint32
	// work counts classes visited and fields produced for instances, so
	// the reader can refuse a file whose chains cost far more time than
	// its size explains (see Reader.readInstance).
	work int64
	// idSize is the file's identifier size, for dataSize.
	idSize int
}

type layoutClass struct {
	super  uint64
	fields []Field
	chain  []Field // flattened, computed on first use
	// written is, with chain, the types of the fields an instance writes:
	// its object fields and kept primitive fields, in order.
	written []Type
	// varints is, with chain, how many of its fields an instance encodes
	// as varints, or -1 if some are fixed-size (kept floating point).
	varints int32
	// refs is, with chain, whether every value an instance writes is a
	// reference (and there is one at least).
	refs bool
	// size is, with chain, the bytes of an instance's data in the HPROF
	// (dataSize of chain).
	size   int64
	seen   uint32 // the walk that last visited it
	cyclic bool   // its chain ends by coming back to a class in it
}

// denseClasses bounds the slice of classes: at most 8 MB of pointers,
// however large an index a file gives.
const denseClasses = 1 << 20

// get returns class idx, or nil.
func (l *layouts) get(idx uint64) *layoutClass {
	if idx < uint64(len(l.dense)) {
		return l.dense[idx]
	}
	if idx < denseClasses {
		return nil
	}
	return l.classes[idx]
}

// defined reports whether class idx is defined.
func (l *layouts) defined(idx uint64) bool { return l.get(idx) != nil }

// add defines class c.Index.
func (l *layouts) add(c *Class) {
	k := &layoutClass{super: c.Super, fields: append([]Field(nil), c.Fields...)}
	if l.get(c.Index) == nil {
		l.n++
	}
	switch {
	case c.Index < denseClasses:
		if c.Index >= uint64(len(l.dense)) {
			l.dense = slices.Grow(l.dense, int(c.Index)+1-len(l.dense))[:c.Index+1]
		}
		l.dense[c.Index] = k
	default:
		if l.classes == nil {
			l.classes = map[uint64]*layoutClass{}
		}
		l.classes[c.Index] = k
	}
	l.fields += len(c.Fields)
}

// each calls f with every class defined.
func (l *layouts) each(f func(*layoutClass)) {
	for _, k := range l.dense {
		if k != nil {
			f(k)
		}
	}
	for _, k := range l.classes {
		f(k)
	}
}

// same reports whether c has the super class and the instance fields of
// its earlier definition: another dump of a class (a file with several
// heap dumps) may change its statics, never its layout.
func (l *layouts) same(c *Class) bool {
	old := l.get(c.Index)
	return old != nil && old.super == c.Super && slices.Equal(old.fields, c.Fields)
}

// chain returns the flattened fields of class idx, or ok=false if there is
// no such class. The slice may be reused by the next call. A super class
// index up to classes that is not yet defined ends the chain and is
// returned as missing (0 if none): its fields would belong to the layout,
// so an instance cannot be decoded yet. A super class above classes is a
// class without a class record, which ends the chain.
//
// The walk up from idx stops at the first class whose chain is already
// flattened, and the chains of the classes on the way are flattened from
// the end, so a line of n classes costs n steps however its instances are
// ordered. A chain that comes back to a class in it (a loop, which only a
// damaged file has) takes each class once and is not reused by others.
func (l *layouts) chain(idx, classes uint64) (fields []Field, ok bool, missing uint64) {
	c := l.get(idx)
	if c == nil {
		return nil, false, 0
	}
	if c.chain != nil {
		return c.chain, true, 0
	}
	path, tail, cyclic, missing := l.walkUp(c, classes)
	if missing != 0 {
		return nil, false, missing
	}
	rest := tail
	if !cyclic {
		for i := len(path) - 1; i >= 0; i-- {
			k := path[i]
			n := len(k.fields) + len(tail)
			if l.cached+n > 1<<20+4*l.fields {
				break
			}
			k.chain = append(append(make([]Field, 0, n), k.fields...), tail...)
			k.written = writtenTypes(nil, k.chain)
			k.varints = varintFields(k.written)
			k.refs = allObjects(k.written)
			k.size = dataSize(k.chain, l.idSize)
			l.cached += n + len(k.written)
			tail = k.chain
		}
		if c.chain != nil {
			return c.chain, true, 0
		}
	}
	// Over the budget, or a loop: build it in the scratch slice.
	ch := l.scratch[:0]
	for _, k := range path {
		ch = append(ch, k.fields...)
	}
	ch = append(ch, rest...)
	l.scratch = ch
	c.cyclic = cyclic
	return ch, true, 0
}

// written returns the types of the fields an instance of class idx writes
// (writtenTypes of its chain), the size of its data in the HPROF
// (dataSize), whether those types are all Object (layoutClass.refs; false
// may be returned for a chain not kept), with chain's ok and missing. The
// slice may be reused by the next call.
func (l *layouts) written(idx, classes uint64) (types []Type, size int64, refs, ok bool, missing uint64) {
	if c := l.get(idx); c != nil && c.chain != nil { // most instances: the chain is flattened
		return c.written, c.size, c.refs, true, 0
	}
	ch, ok, missing := l.chain(idx, classes)
	if !ok {
		return nil, 0, false, false, missing
	}
	if c := l.get(idx); c.chain != nil {
		return c.written, c.size, c.refs, true, 0
	}
	l.typeBuf = writtenTypes(l.typeBuf[:0], ch)
	return l.typeBuf, dataSize(ch, l.idSize), false, true, 0
}

// allObjects reports whether ts holds types and all are Object.
func allObjects(ts []Type) bool {
	for _, t := range ts {
		if t != Object {
			return false
		}
	}
	return len(ts) > 0
}

// writtenTypes appends to ts the types of the fields of layout ch that an
// instance writes: its object fields and its kept primitive fields.
func writtenTypes(ts []Type, ch []Field) []Type {
	for _, f := range ch {
		if f.Type == Object || f.Kept {
			ts = append(ts, f.Type)
		}
	}
	return ts
}

// varintFields returns how many of the values an instance writes (ts,
// from writtenTypes) are varints, all of them, or -1 if some are
// fixed-size (kept floating point values).
func varintFields(ts []Type) int32 {
	for _, t := range ts {
		if t == Float || t == Double {
			return -1
		}
	}
	return int32(len(ts))
}

// dataSize returns the bytes of the data of an instance of layout ch in
// an HPROF dump with idSize-byte identifiers.
func dataSize(ch []Field, idSize int) int64 {
	var n int64
	for _, f := range ch {
		n += int64(javatype.Size(uint8(f.Type), idSize))
	}
	return n
}

// elementBytes returns the bytes of n array elements of type t in an
// HPROF dump with idSize-byte identifiers.
func elementBytes(t Type, n uint64, idSize int) uint64 {
	return n * uint64(javatype.Size(uint8(t), idSize))
}

// varints returns layoutClass.varints of class idx, or -1 if its chain is
// not kept (chain builds it in the scratch slice).
func (l *layouts) varints(idx uint64) int32 {
	if c := l.get(idx); c != nil && c.chain != nil {
		return c.varints
	}
	return -1
}

// walkUp lists the classes from c up its super classes, to the end of the
// chain, to a class already visited (cyclic), or to the first class whose
// chain is flattened (tail, its chain).
func (l *layouts) walkUp(c *layoutClass, classes uint64) (path []*layoutClass, tail []Field, cyclic bool, missing uint64) {
	l.walk++
	if l.walk == 0 {
		l.each(func(k *layoutClass) { k.seen = 0 })
		l.walk = 1
	}
	path = l.path[:0]
	defer func() { l.path = path[:0] }()
	for cur := c; ; {
		if cur.seen == l.walk {
			return path, nil, true, 0
		}
		cur.seen = l.walk
		l.work++
		if cur.chain != nil && !cur.cyclic {
			return path, cur.chain, false, 0
		}
		path = append(path, cur)
		if cur.super == 0 || cur.super > classes {
			return path, nil, false, 0
		}
		next := l.get(cur.super)
		if next == nil {
			return path, nil, false, cur.super
		}
		cur = next
	}
}

package bmd

import "slices"

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
	classes map[uint64]*layoutClass
	fields  int // fields of all classes
	cached  int // fields held in chains
	scratch []Field
	walk    uint32
}

type layoutClass struct {
	super  uint64
	fields []Field
	chain  []Field // flattened, computed on first use
	seen   uint32  // the walk that last visited it
}

// defined reports whether class idx is defined.
func (l *layouts) defined(idx uint64) bool {
	_, ok := l.classes[idx]
	return ok
}

// add defines class c.Index.
func (l *layouts) add(c *Class) {
	if l.classes == nil {
		l.classes = map[uint64]*layoutClass{}
	}
	l.classes[c.Index] = &layoutClass{super: c.Super, fields: append([]Field(nil), c.Fields...)}
	l.fields += len(c.Fields)
}

// same reports whether c has the super class and the instance fields of
// its earlier definition: another dump of a class (a file with several
// heap dumps) may change its statics, never its layout.
func (l *layouts) same(c *Class) bool {
	old, ok := l.classes[c.Index]
	return ok && old.super == c.Super && slices.Equal(old.fields, c.Fields)
}

// chain returns the flattened fields of class idx, or ok=false if there is
// no such class. The slice may be reused by the next call. A super class
// index up to classes that is not yet defined ends the chain and is
// returned as missing (0 if none): its fields would belong to the layout,
// so an instance cannot be decoded yet. A super class above classes is a
// class without a class record, which ends the chain.
func (l *layouts) chain(idx, classes uint64) (fields []Field, ok bool, missing uint64) {
	c, ok := l.classes[idx]
	if !ok {
		return nil, false, 0
	}
	if c.chain != nil {
		return c.chain, true, 0
	}
	l.walk++
	if l.walk == 0 {
		for _, k := range l.classes {
			k.seen = 0
		}
		l.walk = 1
	}
	ch := l.scratch[:0]
	for cur := c; cur.seen != l.walk; {
		cur.seen = l.walk
		ch = append(ch, cur.fields...)
		if cur.super == 0 || cur.super > classes {
			break
		}
		next, ok := l.classes[cur.super]
		if !ok {
			l.scratch = ch
			return nil, false, cur.super
		}
		cur = next
	}
	l.scratch = ch
	if l.cached+len(ch) > 1<<20+4*l.fields {
		return ch, true, 0
	}
	c.chain = append(make([]Field, 0, len(ch)), ch...)
	l.cached += len(ch)
	return c.chain, true, 0
}

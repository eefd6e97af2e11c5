package bmd

// layouts holds, per class index, the instance fields of the class and of
// its superclasses in the order an instance stores them: the class's own
// fields first, then its superclass's, up the chain.
//
// Memory stays proportional to the class records read, whatever the super
// links say: a chain stops at a class it has already visited (a cycle),
// and flattened chains are cached only while their total stays within a
// budget; beyond it a chain is rebuilt in a scratch slice at each use.
type layouts struct {
	classes []Class   // index i holds class i+1 (fields only are kept)
	chains  [][]Field // flattened, computed on first use
	fields  int       // fields of all classes
	cached  int       // fields held in chains
	scratch []Field
	seen    []uint32 // per class: the walk that last visited it
	walk    uint32
}

func (l *layouts) add(c *Class) {
	l.classes = append(l.classes, Class{Super: c.Super, Fields: append([]Field(nil), c.Fields...)})
	l.chains = append(l.chains, nil)
	l.seen = append(l.seen, 0)
	l.fields += len(c.Fields)
}

// chain returns the flattened fields of class idx (1-based), or ok=false
// if there is no such class. The slice may be reused by the next call.
func (l *layouts) chain(idx uint64) ([]Field, bool) {
	if idx == 0 || idx > uint64(len(l.classes)) {
		return nil, false
	}
	if ch := l.chains[idx-1]; ch != nil {
		return ch, true
	}
	l.walk++
	if l.walk == 0 {
		clear(l.seen)
		l.walk = 1
	}
	ch := l.scratch[:0]
	for cur := idx; cur != 0 && cur <= uint64(len(l.classes)) && l.seen[cur-1] != l.walk; {
		l.seen[cur-1] = l.walk
		c := &l.classes[cur-1]
		ch = append(ch, c.Fields...)
		cur = c.Super
	}
	l.scratch = ch
	if l.cached+len(ch) > 1<<20+4*l.fields {
		return ch, true
	}
	keep := append(make([]Field, 0, len(ch)), ch...)
	l.chains[idx-1] = keep
	l.cached += len(keep)
	return keep, true
}

package bmd

// layouts holds, per class index, the instance fields of the class and of
// its superclasses in the order an instance stores them: the class's own
// fields first, then its superclass's, up the chain.
type layouts struct {
	classes []Class   // index i holds class i+1 (fields only are kept)
	chains  [][]Field // flattened, computed on first use
}

func (l *layouts) add(c *Class) {
	l.classes = append(l.classes, Class{Super: c.Super, Fields: append([]Field(nil), c.Fields...)})
	l.chains = append(l.chains, nil)
}

// chain returns the flattened fields of class idx (1-based), or ok=false
// if there is no such class.
func (l *layouts) chain(idx uint64) ([]Field, bool) {
	if idx == 0 || idx > uint64(len(l.classes)) {
		return nil, false
	}
	if ch := l.chains[idx-1]; ch != nil {
		return ch, true
	}
	ch := []Field{}
	cur := idx
	for steps := 0; cur != 0 && cur <= uint64(len(l.classes)) && steps <= len(l.classes); steps++ {
		c := &l.classes[cur-1]
		ch = append(ch, c.Fields...)
		cur = c.Super
	}
	l.chains[idx-1] = ch
	return ch, true
}

package heapstat

import (
	"sort"
)

// AppNames returns what an app's own files (APK, DEX, JAR) would give a
// name recovery for the dump in data: the names of the classes that the
// boot class loader did not load (CLASS DUMP with a non-zero class loader)
// and the names of the fields and statics they declare, sorted, each once.
func AppNames(data []byte) ([]string, error) {
	ix, err := newIndex(data)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	add := func(sid uint64) {
		if t, ok := ix.strs[sid]; ok {
			set[t] = true
		}
	}
	for id, c := range ix.classes {
		if c.Loader == 0 {
			continue
		}
		if n, ok := ix.names[id]; ok {
			add(n)
		}
		for _, f := range c.Statics {
			add(f.Name)
		}
		for _, f := range c.Fields {
			add(f.Name)
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}

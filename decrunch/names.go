package decrunch

import (
	"github.com/cespare/xxhash/v2"
)

// NameTable is a Names built from candidate strings, hashed the version 2
// way (xxhash64 of the UTF-8 bytes). It remembers which source each name came
// from and counts collisions between different candidates.
type NameTable struct {
	byHash     map[uint64]entry
	Sources    []string
	Collisions int
	used       map[int]uint64
}

type entry struct {
	text   string
	source int
}

// NewNameTable returns an empty table.
func NewNameTable() *NameTable {
	return &NameTable{byHash: map[uint64]entry{}, used: map[int]uint64{}}
}

// Source registers a source name and returns a function that adds its
// candidate strings.
func (t *NameTable) Source(name string) func(string) {
	idx := len(t.Sources)
	t.Sources = append(t.Sources, name)
	return func(s string) { t.Add(s, idx) }
}

// Add adds one candidate from source idx.
func (t *NameTable) Add(s string, idx int) {
	h := xxhash.Sum64String(s)
	if e, ok := t.byHash[h]; ok {
		if e.text != s {
			t.Collisions++
		}
		return
	}
	t.byHash[h] = entry{s, idx}
}

// Len returns the number of distinct candidates.
func (t *NameTable) Len() int { return len(t.byHash) }

// Lookup implements Names.
func (t *NameTable) Lookup(hash, length uint64) (string, bool) {
	e, ok := t.byHash[hash]
	if !ok || uint64(len(e.text)) != length {
		return "", false
	}
	t.used[e.source]++
	return e.text, true
}

// RecoveredFrom returns how many names were recovered from each source.
func (t *NameTable) RecoveredFrom() map[string]uint64 {
	m := map[string]uint64{}
	for i, n := range t.used {
		m[t.Sources[i]] += n
	}
	return m
}

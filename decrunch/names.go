package decrunch

import (
	"io"
	"strings"

	"github.com/heapcrunch/heapcrunch/bmd"
	// imported as canon: the package's tests have a helper called names
	canon "github.com/heapcrunch/heapcrunch/names"
)

// NameTable is a Names built from candidate strings. It indexes every
// candidate, in standard UTF-8 (names.NormalizeString), under both hashes
// a BMD file may use: the version 2 hash (names.Hash), which its own
// Lookup searches, and the version 1 hash (Java's String.hashCode(),
// names.JavaHash), which the Names returned by ForHash(bmd.HashJava)
// searches. Both are computed by package names, as crunch computes them,
// so a candidate matches a name of the dump whenever their standard UTF-8
// forms are equal. It remembers which source each
// name came from and counts collisions between different candidates.
type NameTable struct {
	byHash map[uint64]entry
	// byJava is keyed by the Java hash (low 32 bits) and the UTF-8 length
	// (high 32 bits): a version 1 file stores both, and the length tells
	// apart many of the candidates a 32-bit hash confuses.
	byJava  map[uint64]entry
	Sources []string
	// Collisions counts different candidates with the same xxhash64;
	// JavaCollisions those with the same Java hash and UTF-8 length, once
	// the Java-hash index is built (by ForHash(bmd.HashJava)).
	Collisions     int
	JavaCollisions int
	// Candidates counts the candidates added, kept or not (Want).
	Candidates int
	used       map[int]uint64
	want       map[uint64]bool // the only hashes kept, when set (Want)
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

func javaKey(hash uint32, length uint64) uint64 { return length<<32 | uint64(hash) }

// Want makes the table keep, of the candidates added from then on, only
// those whose hash (names.Hash) is among hashes: the names a version 2
// file holds hashed (FileNames.Hashed), all that decrunching it looks up. An
// app's DEX files give hundreds of thousands of candidates, of which a
// dump hashes a few thousand: the corpus's DEX of 32,768 classes gave
// 524,373, which a table that kept them all took 164 ms and 92 MB to
// build. Collisions then counts only those between kept candidates, and
// the Java-hash index (ForHash(bmd.HashJava)) holds only the kept ones:
// a table for a version 1 file wants no filter.
func (t *NameTable) Want(hashes map[uint64]bool) { t.want = hashes }

// Filtered reports whether the table keeps only the candidates it wants
// (Want).
func (t *NameTable) Filtered() bool { return t.want != nil }

// Add adds one candidate from source idx. A candidate that is not valid
// UTF-8 (modified UTF-8 from a strings file, say) is added in its standard
// UTF-8 form, the text that is hashed and recovered.
func (t *NameTable) Add(s string, idx int) {
	t.Candidates++
	s = canon.NormalizeString(s)
	h := canon.HashString(s)
	if t.want != nil && !t.want[h] {
		return
	}
	if e, ok := t.byHash[h]; ok {
		if e.text != s {
			t.Collisions++
		}
		return // a candidate seen before: its Java entry exists too
	}
	t.byHash[h] = entry{s, idx}
	t.byJava = nil // built again when needed
}

// javaIndex builds the Java-hash index from the candidates, once: version
// 2 files never need it. Of candidates with the same Java hash and length,
// the one from the first source wins, then the smallest.
func (t *NameTable) javaIndex() map[uint64]entry {
	if t.byJava != nil {
		return t.byJava
	}
	t.byJava = make(map[uint64]entry, len(t.byHash))
	t.JavaCollisions = 0
	for _, e := range t.byHash {
		if uint64(len(e.text)) > 0xFFFFFFFF {
			continue
		}
		k := javaKey(uint32(canon.JavaHashString(e.text)), uint64(len(e.text)))
		if o, ok := t.byJava[k]; ok {
			t.JavaCollisions++
			if o.source < e.source || o.source == e.source && o.text < e.text {
				continue
			}
		}
		t.byJava[k] = e
	}
	return t.byJava
}

// Len returns the number of distinct candidates.
func (t *NameTable) Len() int { return len(t.byHash) }

// Lookup implements Names for version 2 files (xxhash64). A length of 0
// means the length is not known (a name crunched from an unknown$<hash>
// placeholder, which kept its hash; no hashed name is empty): the hash
// alone must match.
func (t *NameTable) Lookup(hash, length uint64) (string, bool) {
	e, ok := t.byHash[hash]
	if !ok || (length != 0 && uint64(len(e.text)) != length) {
		return "", false
	}
	t.used[e.source]++
	return e.text, true
}

// ForHash returns the Names that searches the table by the hash a file's
// metadata names (bmd.Metadata.Hash): the table itself for xxhash64 (or an
// empty name), the Java-hash index for bmd.HashJava, and nil (nothing is
// recovered) for a hash it does not know.
func (t *NameTable) ForHash(hash string) Names {
	switch hash {
	case "", bmd.HashXX64:
		return t
	case bmd.HashJava:
		t.javaIndex()
		return javaNames{t}
	}
	return nil
}

type javaNames struct{ t *NameTable }

// Lookup finds the candidate whose Java hash is the low 32 bits of hash
// and whose UTF-8 length is length.
func (j javaNames) Lookup(hash, length uint64) (string, bool) {
	if length > 0xFFFFFFFF {
		return "", false
	}
	e, ok := j.t.javaIndex()[javaKey(uint32(hash), length)]
	if !ok {
		return "", false
	}
	j.t.used[e.source]++
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

// FileNames are the names a version 2 BMD file holds, by their hash
// (names.Hash): all that decrunching it looks up among the candidates of
// its name sources (NameTable.Want) and in a mapping (HoldsClass).
type FileNames struct {
	// Hashed holds the hashes of its HASHED STRING records.
	Hashed map[uint64]bool
	// Clear holds the hashes of the texts of its STRING records, the
	// names it holds in the clear.
	Clear map[uint64]bool
}

// ReadFileNames reads a version 2 BMD file from r to its end, its runs of
// objects skipped (bmd.Reader.SkipObjects), and returns the names it
// holds. The maps hold one entry a record read, as the file's bytes bound
// them. For a file whose metadata names another hash than xxhash64
// (ForHash), whose hashes no candidate's names.Hash can match, it returns
// nil, every name wanted, without reading further.
func ReadFileNames(r io.Reader) (*FileNames, error) {
	br, err := bmd.NewReader(r)
	if err != nil {
		return nil, err
	}
	if h := br.Metadata().Hash; h != "" && h != bmd.HashXX64 {
		return nil, nil
	}
	br.SkipObjects, br.SkipValues = true, true
	fn := &FileNames{Hashed: map[uint64]bool{}, Clear: map[uint64]bool{}}
	for {
		rec, err := br.Next()
		if err == io.EOF {
			return fn, nil
		}
		if err != nil {
			return nil, err
		}
		switch rec.Kind {
		case bmd.KindHashedString:
			fn.Hashed[rec.Hash] = true
		case bmd.KindString:
			fn.Clear[canon.Hash(rec.Text)] = true
		}
	}
}

// Holds reports whether the file holds name, hashed or in the clear.
func (fn *FileNames) Holds(name string) bool {
	h := canon.HashString(name)
	return fn.Hashed[h] || fn.Clear[h]
}

// HoldsClass reports whether the file holds the name of class obf, given
// dotted as a mapping names it ("a.b"), dotted (Android, HotSpot before 9)
// or slashed (HotSpot 9 and later): whether the conversion may ask a
// mapping about it (Mapping.Class, Field, Method). An array class is
// asked about as its element class (apkstrings.Mapping.Class), which a
// dump holds whenever it holds one of its arrays: a VM loads an array
// class's element class first (JVMS 5.3.3), and a heap dump names every
// loaded class.
func (fn *FileNames) HoldsClass(obf string) bool {
	if fn.Holds(obf) {
		return true
	}
	return strings.IndexByte(obf, '.') >= 0 && fn.Holds(strings.ReplaceAll(obf, ".", "/"))
}

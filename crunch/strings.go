package crunch

import (
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"

	"github.com/heapcrunch/heapcrunch/names"
)

// stringInfo is what crunch keeps of a STRING record the dump refers to,
// from the end of pass 1 (classifyStrings) on: whether it is written in
// the clear or hashed, and its clear text. In pass 1 every STRING record
// is only its text's place (pendingString), and those nothing refers
// to are dropped before any stringInfo is made: a HotSpot dump writes its
// whole symbol table, 552,871 STRING records for a JVM with 24,144
// classes loaded (testdata/gen/ManyClasses.java), of which 75,637 are
// names.
type stringInfo struct {
	hprofID uint64 // 0 for an element name made up for an array name
	off     int    // the text is arena[off:off+length] (clear strings)
	length  int    // the text's length; hashed: the length of its UTF-8 form
	hash    uint64 // hashed: the hash of the text
	dense   uint64 // string ID in the BMD (0: not written)

	className   bool // the name of a LOAD CLASS
	platform    bool // a name of the platform (§7.1 of the spec): clear by default
	clear       bool
	placeholder bool // decrunch's unknown$<hash> for a name it did not recover: its hash is kept

	// An array class name whose element name is hashed is written as an
	// ARRAY NAME of its element name: base is the element name's index in
	// strs (then its dense ID once numbered), -1 for other strings.
	base int64
	dims uint8
	desc bool // descriptor spelling "[[Lname;" (else "name[][]")
}

// addString records a STRING record of pass 1, of ID id and text text at
// file offset off: the text's place in pending, and where pass 1's end
// cannot read it back (state.textsAt nil) the text itself, in the chunks
// of texts. indexStrings indexes them at the end of the pass.
func (st *state) addString(id uint64, text []byte, off int64) {
	if st.textsAt != nil {
		st.pending.add(pendingString{id: id, place: uint64(off), length: uint32(len(text))})
		return
	}
	n := len(st.texts)
	if n == 0 || len(st.texts[n-1])+len(text) > cap(st.texts[n-1]) {
		st.texts = append(st.texts, make([]byte, 0, max(textChunk, len(text))))
		n++
	}
	c := &st.texts[n-1]
	st.pending.add(pendingString{id: id, place: uint64(n-1)<<32 | uint64(len(*c)), length: uint32(len(text))})
	*c = append(*c, text...)
}

// textChunk is the size of the chunks of pass 1's texts (state.texts),
// filled in turn and never copied: the texts of a HotSpot dump's symbol
// table, 19 MB for testdata/gen/ManyClasses.java, in one slice grown by
// doubling left about as much again in copies. 64 KiB, where it was 1 MiB
// until 2026-12-04: a chunk is zeroed whole when made, and the first touch
// of memory is what costs (the 134 MB dump's 1.4 MB of texts took two
// chunks of 1 MiB).
const textChunk = 64 << 10

// pendingString is a STRING record of pass 1: its ID and its text's place,
// the text's file offset where pass 1's end reads the texts back
// (state.textsAt), else chunk<<32 | pos, the text being
// texts[chunk][pos:pos+length].
type pendingString struct {
	id     uint64
	place  uint64
	length uint32
}

// stringRecords holds pass 1's STRING records (pendingString) in dump
// order, in blocks of stringBlock records, each made when the one before
// is full and never copied. One slice grown by doubling took twice the
// memory it kept, all of it touched for the first time: the 134 MB dump's
// 40,451 records were about 1 MB kept and 3 MB made, the ManyClasses
// dump's 552,871 about 13 MB kept and 26 MB made. A block keeps each
// field in an array of its own: 20 bytes a record, where a pendingString
// takes 24 with its padding (11 MB for ManyClasses' records, not 13).
type stringRecords struct {
	blocks []*stringBlockOf
	n      int
}

// stringBlockOf is a block of stringRecords, its records' fields apart.
type stringBlockOf struct {
	ids     [stringBlock]uint64
	places  [stringBlock]uint64
	lengths [stringBlock]uint32
}

// stringBlock is the records of a block of stringRecords (80 KiB).
const stringBlock = 4096

// add appends record p.
func (r *stringRecords) add(p pendingString) {
	if r.n%stringBlock == 0 {
		r.blocks = append(r.blocks, new(stringBlockOf))
	}
	b, k := r.blocks[len(r.blocks)-1], r.n%stringBlock
	b.ids[k], b.places[k], b.lengths[k] = p.id, p.place, p.length
	r.n++
}

// len returns the number of records.
func (r *stringRecords) len() int { return r.n }

// at returns record i (0 <= i < len).
func (r *stringRecords) at(i int) pendingString {
	b, k := r.blocks[i/stringBlock], i%stringBlock
	return pendingString{id: b.ids[k], place: b.places[k], length: b.lengths[k]}
}

// id returns the ID of record i (0 <= i < len): the one field indexStrings
// reads of every record.
func (r *stringRecords) id(i int) uint64 { return r.blocks[i/stringBlock].ids[i%stringBlock] }

// bytes returns the memory the records take.
func (r *stringRecords) bytes() int64 {
	return int64(len(r.blocks)) * int64(unsafe.Sizeof(stringBlockOf{}))
}

// rawText returns the text of STRING record p of pass 1, kept in the
// chunks of texts (state.textsAt nil).
func (st *state) rawText(p pendingString) []byte {
	c, pos := p.place>>32, uint32(p.place)
	return st.texts[c][pos : pos+p.length]
}

// stringMarks says what the dump uses a string ID for (markStrings).
type stringMarks uint8

const (
	markReferenced stringMarks = 1 << iota // a class, field, method, signature, source file, thread or heap name
	markClassName                          // the name of a LOAD CLASS
	markPlatform                           // a name of the platform, clear by default
)

// stringRef is what the end of pass 1 knows of an HPROF string ID the
// dump refers to (markStrings): what it is used for, and its first STRING
// record.
type stringRef struct {
	marks stringMarks
	first int // its first STRING record's index in pending; -1: it has none
}

// indexStrings finds the first STRING record of each string ID the dump
// refers to (markStrings), in one pass over pass 1's records in dump order:
// a repeated HPROF ID resolves to its first record, the others are left
// out (TestStringRepeated), and the records of IDs nothing refers to are
// counted (Stats.Unreferenced) and left out. Only the IDs referred to are
// mapped (a map of every record's ID, made first, took 9.8 % of crunch's
// samples on the ManyClasses dump: 552,871 records, 75,637 referred to, a
// map of about 11 MB, all of it touched for the first time), and a record
// costs a lookup in that map only where an idFilter of those IDs may have
// its ID.
func (st *state) indexStrings() {
	st.markStrings()
	st.kept = make([]int, 0, len(st.refs)) // at most one record an ID: made once
	referred := newIDFilter(len(st.refs))
	for id := range st.refs {
		referred.add(id)
	}
	for i := range st.pending.len() {
		id := st.pending.id(i)
		if !referred.mayHave(id) {
			st.stats.Unreferenced++
			continue
		}
		r, ok := st.refs[id]
		switch {
		case !ok:
			st.stats.Unreferenced++
		case r.first < 0:
			r.first = i
			st.refs[id] = r
			st.kept = append(st.kept, i)
		}
	}
}

// idFilter tells the IDs of a set from nearly all others in a bitmap of 8
// to 16 bits an ID, which stays in the processor's cache where a map of
// the set does not: a bit for each ID's hash, so that an ID whose bit is
// clear is not in the set, and one whose bit is set may be. Most STRING
// records of a HotSpot dump have an ID nothing refers to (477,234 of the
// ManyClasses dump's 552,871): indexStrings asks the map only for those
// the filter may have.
type idFilter struct {
	bits  []uint64
	shift uint // 64 less the bits of a hash
}

// newIDFilter returns a filter for up to n IDs.
func newIDFilter(n int) idFilter {
	b := max(bits.Len(uint(n))+3, 6) // 8 to 16 bits an ID, 64 at least
	return idFilter{bits: make([]uint64, 1<<(b-6)), shift: uint(64 - b)}
}

// hash returns the bit of id: the top bits of a multiplicative hash, as
// IDs are addresses whose low bits are alike.
func (f *idFilter) hash(id uint64) uint64 { return id * 0x9e3779b97f4a7c15 >> f.shift }

// add adds id to the set.
func (f *idFilter) add(id uint64) {
	h := f.hash(id)
	f.bits[h/64] |= 1 << (h % 64)
}

// mayHave reports false if id is not in the set, and true if it is or,
// now and then, if it is not.
func (f *idFilter) mayHave(id uint64) bool {
	h := f.hash(id)
	return f.bits[h/64]&(1<<(h%64)) != 0
}

// text returns the text of string i: of st.strs, from classifyStrings on.
func (st *state) text(i int) []byte {
	s := &st.strs[i]
	return st.arena[s.off : s.off+s.length]
}

// textOf returns the text of the HPROF string ID hid ("" if the dump
// does not refer to it, or it has no STRING record), from keepReferenced
// until classifyStrings.
func (st *state) textOf(hid uint64) string {
	return string(st.rawTextOf(hid))
}

// rawTextOf is textOf without a copy, not to be changed.
func (st *state) rawTextOf(hid uint64) []byte {
	i, ok := st.strings[hid]
	if !ok {
		return nil
	}
	return st.text(int(i))
}

// markStrings marks the strings the dump refers to, and which of them are
// platform names: the names of classes whose CLASS DUMP has class loader 0
// (the boot class loader), the names of the fields and statics they
// declare, the method, signature and source file names of stack frames in
// those classes, and heap names. Unless HashPlatformNames is set, platform
// names stay in the clear.
func (st *state) markStrings() {
	platform := !st.opt.HashPlatformNames
	st.refs = make(map[uint64]stringRef, st.maxRefs())
	mark := func(hid uint64, plat, class bool) {
		r, ok := st.refs[hid]
		if !ok {
			r.first = -1
		}
		r.marks |= markReferenced
		if plat && platform {
			r.marks |= markPlatform
		}
		if class {
			r.marks |= markClassName
		}
		st.refs[hid] = r
	}
	bootSerials := map[uint32]bool{}
	for _, l := range st.loads {
		boot := st.isBoot(l.class)
		mark(l.name, boot, true)
		if boot {
			bootSerials[l.serial] = true
		}
	}
	for _, ci := range st.classes {
		boot := ci.dump.Loader == 0
		for _, f := range ci.dump.Statics {
			mark(f.Name, boot, false)
		}
		for _, f := range ci.dump.Fields {
			mark(f.Name, boot, false)
		}
	}
	for _, f := range st.frameNames {
		boot := bootSerials[f.class]
		mark(f.method, boot, false)
		mark(f.signature, boot, false)
		mark(f.source, boot, false)
	}
	for _, t := range st.threadNames {
		mark(t, false, false)
	}
	for h := range st.heapNames {
		mark(h, true, false)
	}
}

// maxRefs returns how many string IDs markStrings marks at most: the map's
// size, made at once.
func (st *state) maxRefs() int {
	n := len(st.loads) + 3*len(st.frameNames) + len(st.threadNames) + len(st.heapNames)
	for _, ci := range st.classes {
		n += len(ci.dump.Statics) + len(ci.dump.Fields)
	}
	return n
}

// isBoot reports whether the class with HPROF ID id has a CLASS DUMP whose
// class loader is the boot class loader (ID 0).
func (st *state) isBoot(id uint64) bool {
	k, ok := st.classIdx[id]
	return ok && st.classes[k].dump.Loader == 0
}

// clearByText reports whether a name stays clear for its text alone: with
// --keep-strings, in the fixed clear list, or named by an option.
func (st *state) clearByText(t []byte) bool {
	if st.opt.KeepStrings || KeepInClear(t) {
		return true
	}
	// string(t) in each index expression: the compiler looks up without
	// converting (allocating) the key.
	return st.preserveNames[string(t)] || st.profileClass[string(t)] != nil || st.profileFields[string(t)] ||
		st.factClass[string(t)] != nil || st.factFields[string(t)]
}

// classifyStrings decides, for every string the dump refers to, whether it
// is written in the clear, hashed, or as an ARRAY NAME of its element name,
// computes the hashes, and keeps only the clear texts. The strings nothing
// refers to go: the strings are those referred to, in dump order, then
// the made-up element names.
func (st *state) classifyStrings() {
	n := len(st.strs)
	nClassNames := 0
	for i := range n {
		if st.strs[i].className {
			nClassNames++
		}
	}
	classNames := make(map[string]int, nClassNames)
	for i := range n {
		s := &st.strs[i]
		s.placeholder = isPlaceholder(st.text(i))
		s.clear = !s.placeholder && (s.platform || st.clearByText(st.text(i)))
		if s.className {
			classNames[string(st.text(i))] = i
		}
	}
	if st.opt.hashName == nil { // version 1 has no ARRAY NAME
		for i := range n {
			s := &st.strs[i]
			if !s.className {
				continue
			}
			start, length, dims, desc, ok := splitArrayName(st.text(i))
			if !ok {
				continue
			}
			elem := st.text(i)[start : start+length]
			if s.clear && !isPlaceholder(elem) {
				continue
			}
			s.clear = false
			base, found := classNames[string(elem)]
			if !found {
				base = len(st.strs)
				e := stringInfo{off: s.off + start, length: length, base: -1, placeholder: isPlaceholder(elem)}
				e.clear = !e.placeholder && st.clearByText(elem)
				st.strs = append(st.strs, e)
				s = &st.strs[i]
			}
			s.base, s.dims, s.desc = int64(base), dims, desc
		}
	}
	// The clear texts, made once at their size.
	size := 0
	for i := range st.strs {
		if s := &st.strs[i]; s.clear && !s.placeholder {
			size += s.length
		}
	}
	arena := make([]byte, 0, size)
	st.nStrings = uint64(len(st.strs))
	for i := range st.strs {
		s := &st.strs[i]
		switch {
		case s.placeholder:
			s.length, s.hash = 0, placeholderHash(st.text(i))
		case s.clear:
			t := st.text(i)
			s.off = len(arena)
			arena = append(arena, t...)
		case st.opt.hashName != nil:
			s.length, s.hash = st.opt.hashName(st.text(i))
		default:
			s.hash, s.length = names.Hash(st.text(i)), names.Len(st.text(i))
		}
	}
	// The texts read back, and the map of class names (about 40 bytes an
	// entry), dropped.
	st.pass1Dropped += int64(cap(st.arena)) + int64(len(classNames))*40
	st.arena = arena
}

// keepReferenced makes the strings the dump refers to, each ID's first
// STRING record (indexStrings), st.strs, in dump order, indexed anew by
// st.strings, with their texts in the arena, read back from the dump
// where pass 1 did not keep them (readTexts), and drops the STRING records
// of pass 1.
func (st *state) keepReferenced() error {
	size := 0
	for _, i := range st.kept {
		size += int(st.pending.at(i).length)
	}
	n := len(st.kept)
	st.strs = make([]stringInfo, 0, n)
	st.strings = make(map[uint64]uint64, n)
	st.arena = make([]byte, size)
	off := 0
	for _, i := range st.kept {
		p := st.pending.at(i)
		m := st.refs[p.id].marks
		st.strings[p.id] = uint64(len(st.strs))
		st.strs = append(st.strs, stringInfo{hprofID: p.id, off: off, length: int(p.length), base: -1,
			className: m&markClassName != 0, platform: m&markPlatform != 0})
		if st.textsAt == nil {
			copy(st.arena[off:], st.rawText(p))
		}
		off += int(p.length)
	}
	var err error
	if st.textsAt != nil {
		err = st.readTexts()
	}
	// The texts, the records, and the map of IDs referred to (about 40
	// bytes an entry) with its list.
	for _, c := range st.texts {
		st.pass1Dropped += int64(cap(c))
	}
	st.pass1Dropped += st.pending.bytes() + int64(len(st.refs))*40 + int64(cap(st.kept))*8
	st.pending, st.refs, st.kept, st.texts = stringRecords{}, nil, nil, nil
	// Collected now, where they are many, before the strings' own tables
	// (classifyStrings) and pass 2 take memory on top of them: ManyClasses
	// peaks at 65 to 66 MB, against 70 to 71 MB collected after pass 1's
	// end and 80 MB not collected before pass 2 (2026-12-04).
	st.collectPass1()
	return err
}

// readTexts reads the texts of the records kept (st.kept) back from the
// dump (st.textsAt) into the arena, whose strings (st.strs) they are, in
// file order: the records' offsets grow with their index in pending. It
// reads windows of up to textWindow bytes, each from the first text it
// holds, and a longer text alone, into the arena.
func (st *state) readTexts() error {
	var win []byte
	var winOff, winEnd int64 // the window's bytes are the file's [winOff, winEnd)
	for k, i := range st.kept {
		p := st.pending.at(i)
		off, end := int64(p.place), int64(p.place)+int64(p.length)
		s := &st.strs[k]
		dst := st.arena[s.off : s.off+s.length]
		if int(p.length) > textWindow {
			if err := readTextAt(st.textsAt, dst, off); err != nil {
				return err
			}
			continue
		}
		if off < winOff || end > winEnd {
			if win == nil {
				win = make([]byte, textWindow)
			}
			n, err := st.textsAt.ReadAt(win, off)
			if int64(n) < end-off {
				return textError(off, p.length, err)
			}
			winOff, winEnd = off, off+int64(n)
		}
		copy(dst, win[off-winOff:end-winOff])
	}
	return nil
}

// textWindow is how many bytes readTexts reads at a time: the texts
// referred to lie among those nothing refers to (the 134 MB dump keeps
// 3,726 of 40,451, ManyClasses 75,637 of 552,871).
const textWindow = 256 << 10

// readTextAt reads the text at file offset off into dst, whole.
func readTextAt(r io.ReaderAt, dst []byte, off int64) error {
	n, err := r.ReadAt(dst, off)
	if n < len(dst) {
		return textError(off, uint32(len(dst)), err)
	}
	return nil
}

// textError is the error for a STRING record's text that cannot be read
// back at the end of pass 1: the dump changed or was cut since.
func textError(off int64, length uint32, err error) error {
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("crunch: reading back the text of a STRING record (%d bytes at offset %d) after pass 1: %w", length, off, err)
}

// splitArrayName finds the element name of an array class name in either
// spelling: "name[]" (any number of "[]") or "[Lname;" (any number of
// "["). It returns where the element name is in t, the dimensions and the
// spelling; ok is false for other names and for primitive arrays.
func splitArrayName(t []byte) (start, length int, dims uint8, desc bool, ok bool) {
	s := string(t)
	if strings.HasPrefix(s, "[") {
		d := strings.TrimLeft(s, "[")
		k := len(s) - len(d)
		if k > 255 || len(d) < 3 || d[0] != 'L' || d[len(d)-1] != ';' {
			return 0, 0, 0, false, false
		}
		return k + 1, len(d) - 2, uint8(k), true, true
	}
	base := s
	for strings.HasSuffix(base, "[]") {
		base = base[:len(base)-2]
	}
	k := (len(s) - len(base)) / 2
	if k == 0 || k > 255 || base == "" {
		return 0, 0, 0, false, false
	}
	return 0, len(base), uint8(k), false, true
}

// sid returns the BMD string ID of the HPROF string ID hid, writing the
// string first if it is not written yet (and, for an ARRAY NAME, its
// element name before it): strings are written where they are first used,
// so they are numbered in the order of use. A reference to an HPROF string
// ID that has no STRING record is 0.
func (p *pass2) sid(hid uint64) (uint64, error) {
	i, ok := p.strings[hid]
	if !ok || hid == 0 {
		return 0, nil
	}
	return p.writeString(int(i))
}

// writeString writes string i if it is not written yet, and returns its ID.
func (p *pass2) writeString(i int) (uint64, error) {
	s := &p.strs[i]
	if s.dense != 0 {
		return s.dense, nil
	}
	var err error
	switch {
	case s.base >= 0:
		var elem uint64
		if elem, err = p.writeString(int(s.base)); err == nil {
			s.dense, err = p.w.ArrayName(elem, s.dims, s.desc)
			p.stats.ArrayNames++
		}
	case s.clear:
		s.dense, err = p.w.ClearString(p.arena[s.off : s.off+s.length])
	default:
		s.dense, err = p.w.HashedString(uint64(s.length), s.hash)
		p.stats.Hashed++
	}
	p.nStrings++
	return s.dense, err
}

// isPlaceholder reports whether t is the name decrunch writes for a hashed
// name it did not recover (decrunch.Placeholder): "unknown$" and 16
// lower-case hex digits of the name's hash.
func isPlaceholder(t []byte) bool {
	const prefix = "unknown$"
	if len(t) != len(prefix)+16 || string(t[:len(prefix)]) != prefix {
		return false
	}
	for _, c := range t[len(prefix):] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// placeholderHash returns the hash a placeholder carries.
func placeholderHash(t []byte) uint64 {
	h, _ := strconv.ParseUint(string(t[len("unknown$"):]), 16, 64)
	return h
}

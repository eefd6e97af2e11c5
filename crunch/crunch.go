// Package crunch converts an HPROF heap dump into a BMD file: two streaming
// passes over the dump, object IDs remapped densely, names hashed, primitive
// contents dropped unless options keep them.
package crunch

import (
	"fmt"
	"io"
	"runtime"
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
	Labels            []string // key=value pairs written to the metadata (bmd.CheckLabel)
	// Progress, when set, is called now and then with the pass (1 or 2)
	// and the input bytes read so far in that pass.
	Progress func(pass int, done int64)
	// Phase, when set, is called on the goroutine that runs the crunch
	// as each of its phases starts, in order, and with PhaseDone once the
	// BMD is written to its end (with CrunchV1, the version 2 records it
	// turns into version 1, whose last may still be on their way); not
	// after an error.
	Phase func(Phase)
	// hashName, when set, hashes a name that is not kept in the clear
	// (CrunchV1 sets Java's hash); nil is names.Hash and names.Len.
	hashName func(text []byte) (length int, hash uint64)
}

// A Phase is a stretch of a crunch (Options.Phase).
type Phase int

// The phases of a crunch, in the order they come.
const (
	// PhaseFirstPass: pass 1 reads the dump's records, collecting the
	// object IDs, the classes and the names.
	PhaseFirstPass Phase = iota + 1
	// PhaseNumbering: pass 1's end numbers the objects (the ID index) and
	// sorts out the names and the classes' definitions.
	PhaseNumbering
	// PhaseSecondPass: pass 2 reads the dump again and writes the BMD.
	PhaseSecondPass
	// PhaseDone: the BMD is written to its end.
	PhaseDone
)

// String names the phase as crunch --stats prints it.
func (p Phase) String() string {
	switch p {
	case PhaseFirstPass:
		return "pass 1"
	case PhaseNumbering:
		return "numbering"
	case PhaseSecondPass:
		return "pass 2"
	case PhaseDone:
		return "done"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
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
	Redumps      uint64 // class and object records that dump again an object dumped before (several heap dumps)
	Dangling     uint64 // distinct referenced IDs not in the dump
	IndexBytes   int64
	HPROFHeader  hprof.Header
	// Warnings say which options had nothing to act on (a --drop-heap heap
	// or a --preserve-class class that is not in the dump) and which
	// top-level records were left out for what they could hold (rawKept).
	Warnings []string
}

// loadInfo is a LOAD CLASS record.
type loadInfo struct {
	serial, trace, time uint32
	class, name         uint64 // HPROF IDs
	// deferred: written with the definition of its class, not where the
	// dump has it (a class with a CLASS DUMP none of whose loads' serials
	// a STACK FRAME names: a frame's class must be loaded before the
	// frame, and a class's loads keep their order).
	deferred bool
}

// frameNames are the string IDs of a STACK FRAME and its class serial.
type frameNames struct {
	method, signature, source uint64
	class                     uint32
}

// state is what pass 1 learns and pass 2 uses.
type state struct {
	opt    *Options
	idSize int

	pending     stringRecords        // pass 1: the STRING records (addString), until classifyStrings
	refs        map[uint64]stringRef // pass 1's end: the string IDs the dump refers to (markStrings), until classifyStrings
	kept        []int                // pass 1's end: the index in pending of each referred ID's first record, in dump order (indexStrings)
	strings     map[uint64]uint64    // from classifyStrings: HPROF string ID -> index in strs
	strs        []stringInfo         // from classifyStrings: one per HPROF string ID referred to, in dump order, then the made-up element names
	texts       [][]byte             // pass 1: the texts of the STRING records, in chunks (addString), unless textsAt
	textsAt     io.ReaderAt          // pass 1: where its end reads back the texts it keeps (input.texts), or nil
	arena       []byte               // from classifyStrings: the texts of the strings, then of those that stay clear
	nStrings    uint64               // strings the file will hold (pass 1), then strings written (pass 2)
	classNames  map[uint64]uint64    // class object ID -> name string ID (LOAD CLASS)
	loads       []loadInfo           // LOAD CLASS records, written sorted by class
	frames      map[uint64]uint64    // HPROF frame ID -> dense
	nFrames     uint64
	frameNames  []frameNames    // the string IDs of the STACK FRAME records
	threadNames []uint64        // the string IDs of the START THREAD records
	heapNames   map[uint64]bool // the string IDs of heap names (HEAP DUMP INFO)

	classes   []*classInfo
	classIdx  map[uint64]int    // class object ID -> index in classes
	up        []int32           // class index -> nearest class at or above it with fields, or -1
	firstNeed map[uint64]uint32 // pass 1: class object ID -> the first chunk that needs it
	defOrder  []int             // class indexes in the order pass 2 defines them
	spans     []span            // heap dump records pass 2 may write on other goroutines

	objs        idSeq      // non-class object IDs in order (pass 1)
	redumps     bool       // some objects are dumped more than once (several heap dumps)
	classIndex  *idIndex   // class object IDs -> class index
	index       *idIndex   // other object IDs -> their order after the classes
	rank        *rankIndex // index's bitmap, or emptyRank if it has none
	objBase     uint64     // the dense ID of the index's ordinal 0: classes + 1
	dropped     *idIndex
	nObj        uint64 // classes + objects written
	dumpBytes   int64  // the dump's bytes, as pass 1 read them
	danglingIDs map[uint64]uint64

	preserveNames map[string]bool // class name spellings to preserve
	profileClass  map[string][]string
	profileFields map[string]bool
	factClass     map[string][]string // class name spellings -> platform facts' statics, lifecycle flags and platform sizes
	factFields    map[string]bool
	libraryClass  map[string][]string // class name spellings -> LibraryLeakFlags' fields
	drop          map[uint32]bool
	addrs         addressLayout
	heapsSeen     map[uint32]bool // heap types of the dump's HEAP DUMP INFO records

	stats *Stats

	// pass1Dropped is about how many bytes pass 1 held and dropped at its
	// end (collectPass1).
	pass1Dropped int64
}

// Crunch reads the HPROF dump in src twice and writes its BMD version 2
// form to out. On error, what was written to out is incomplete.
func Crunch(src io.ReadSeeker, out io.Writer, opt Options) (*Stats, error) {
	st, err := newState(&opt)
	if err != nil {
		return nil, err
	}
	in := openInput(src)
	defer in.unmap()
	return st.run(in, out)
}

// newState returns the state of a crunch with options opt, before its
// passes.
func newState(opt *Options) (*state, error) {
	st := &state{opt: opt, strings: map[uint64]uint64{}, classNames: map[uint64]uint64{},
		frames: map[uint64]uint64{}, classIdx: map[uint64]int{}, danglingIDs: map[uint64]uint64{}, firstNeed: map[uint64]uint32{},
		preserveNames: map[string]bool{}, profileClass: map[string][]string{}, profileFields: map[string]bool{},
		factClass: map[string][]string{}, factFields: map[string]bool{}, libraryClass: map[string][]string{}, heapNames: map[uint64]bool{}, heapsSeen: map[uint32]bool{},
		drop:  map[uint32]bool{},
		stats: &Stats{InRecords: map[string]int64{}, InBytesBy: map[string]int64{}, OutRecords: map[string]uint64{}, OutBytesBy: map[string]uint64{}}}
	for _, c := range opt.PreserveClasses {
		for _, s := range classNameSpellings(c) {
			st.preserveNames[s] = true
		}
	}
	byClassName(st.factClass, st.factFields, slices.Concat(PlatformFacts, LifecycleFlags, PlatformSizes))
	byClassName(st.libraryClass, nil, LibraryLeakFlags)
	switch opt.Profile {
	case "":
	case "leak":
		byClassName(st.profileClass, st.profileFields, LeakProfile)
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
	if len(opt.Labels) > bmd.MaxLabels {
		return nil, fmt.Errorf("crunch: %d labels (at most %d)", len(opt.Labels), bmd.MaxLabels)
	}
	for _, l := range opt.Labels {
		if err := bmd.CheckLabel(l); err != nil {
			return nil, fmt.Errorf("crunch: %v", err)
		}
	}
	return st, nil
}

// byClassName adds the fields of list to classes, under each spelling of
// their class's name, and, where fields is not nil, their names to fields.
func byClassName(classes map[string][]string, fields map[string]bool, list []struct{ Class, Field string }) {
	for _, p := range list {
		for _, s := range classNameSpellings(p.Class) {
			classes[s] = append(classes[s], p.Field)
		}
		if fields != nil {
			fields[p.Field] = true
		}
	}
}

// collectPass1 collects the memory that pass 1 used and dropped since the
// last call that collected, when it is much (at least collectAbove bytes:
// pass1Dropped): the STRING records of a HotSpot dump's whole symbol
// table (keepReferenced calls it as it drops them), the IDs of tens of
// millions of objects (run calls it after pass 1). Pass 2's allocations
// then reuse it, where at crunch's GOGC of 800 (cmd/crunch) the
// collector would not run again before the end, and pass 2's peak would
// add to pass 1's. It costs a collection of what lives on, the index and
// the class definitions.
func (st *state) collectPass1() {
	if st.pass1Dropped >= collectAbove {
		runtime.GC()
		st.pass1Dropped = 0
	}
}

// collectAbove is the memory pass 1 drops (state.pass1Dropped) above which
// collectPass1 collects it: a HotSpot dump's STRING records count most.
// The ManyClasses dump of the README drops about 15 MB with its records,
// the 134 MB dump 2 MB in all, the 6.6 and 6.8 M-object genhprof dumps
// and the 1.3 GB JDK dump 1 to 2 MB (32 MiB until 2026-12-04).
const collectAbove = 8 << 20

// freeIndexes gives back the memory of the indexes and of the IDs they
// were built from, if pass 1 stopped before (bigmem), which nothing reads
// once the passes have ended.
func (st *state) freeIndexes() {
	st.objs.release()
	for _, x := range []*idIndex{st.index, st.dropped, st.classIndex} {
		x.free()
	}
	st.rank = emptyRank
}

// run runs the two passes on in, a fault reading the mapped file being an
// error.
func (st *state) run(in *input, out io.Writer) (stats *Stats, err error) {
	defer st.freeIndexes() // after the passes, whose goroutines have ended
	defer guard()()
	defer in.catchFault(&err)
	st.phase(PhaseFirstPass)
	if err := st.runPass1(in); err != nil {
		return nil, err
	}
	st.collectPass1()
	st.phase(PhaseSecondPass)
	if err := st.runPass2(in, out); err != nil {
		return nil, err
	}
	st.phase(PhaseDone)
	return st.stats, nil
}

// phase tells Options.Phase, if set, that phase p starts.
func (st *state) phase(p Phase) {
	if st.opt.Phase != nil {
		st.opt.Phase(p)
	}
}

// obj maps an HPROF object ID to its dense ID: classes and objects of the
// dump get 1…N in BMD order, objects of dropped heaps N+1…, and IDs that are
// not in the dump get the next free IDs, the same one each time. The
// bitmap index, when there is one, is asked first without a call through
// idIndex: it answers nearly every reference of a HotSpot dump.
// pass2.directInstance and directObjectArray repeat its two steps in their
// loops, where the compiler inlines lookup (with the PGO profile) but not
// obj: with one core, 4 % less time on the 134 MB dump.
func (st *state) obj(id uint64) uint64 {
	if o, ok := st.rank.lookup(id); ok {
		return st.objBase + uint64(o)
	}
	return st.objSlow(id)
}

// known returns the dense ID of an object of the dump (0 for null), from
// the indexes alone: it changes nothing, and pass 2's reading goroutine
// calls it.
func (st *state) known(id uint64) (uint64, bool) {
	if id == 0 {
		return 0, true
	}
	if o, ok := st.index.lookup(id); ok {
		return st.objBase + uint64(o), true
	}
	if o, ok := st.classIndex.lookup(id); ok {
		return uint64(o) + 1, true
	}
	if o, ok := st.dropped.lookup(id); ok {
		return st.nObj + uint64(o) + 1, true
	}
	return 0, false
}

// objSlow is obj for IDs the bitmap index does not hold.
func (st *state) objSlow(id uint64) uint64 {
	if d, ok := st.known(id); ok {
		return d
	}
	d, ok := st.danglingIDs[id]
	if !ok { // not in the dump: the next free ID
		d = st.nObj + uint64(st.dropped.len()) + uint64(len(st.danglingIDs)) + 1
		st.danglingIDs[id] = d
	}
	return d
}

package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// counts is what the generator wrote and what -verify read back: numbers of
// records and objects by kind, array element totals, roots by kind, and
// fingerprints of the object graph.
//
// A fingerprint is the sum (mod 2^64) of a hash per record, so it does not
// depend on record order. Object IDs enter it as ranks, not values: the rank
// of an object is its position among the class dumps in file order followed
// by the other objects in file order, which is the numbering crunch gives
// them and decrunch writes back. Names (hashed by crunch), primitive field
// values and array contents (dropped by crunch) are left out; everything
// else crunch keeps is in.
type counts struct {
	strings, loadClasses, stackFrames, stackTraces, startThreads uint64

	classes, instances, objArrays, primArrays, primNoData uint64
	primByType                                            [16]uint64
	objArrayElems, primArrayElems, primArrayBytes         uint64
	refs, nullRefs, dangling                              uint64
	roots                                                 uint64
	rootsBy                                               [256]uint64
	unknownClass                                          uint64 // instances of a class without CLASS DUMP

	fpClasses, fpObjects, fpRoots, fpTop uint64

	// file structure (informational: differs between a dump and its round trip)
	file fileInfo

	idSize int
	rank   func(id uint64) uint64
	layout map[uint64][]hprof.BasicType // class ID -> field types, class first, then supers
	defs   map[uint64]*hprof.ClassDump
}

type fileInfo struct {
	bytes, records, segments, heapDumps, heapDumpEnds, maxBody int64
	version                                                    string
}

func newCounts(idSize int, rank func(uint64) uint64) *counts {
	return &counts{idSize: idSize, rank: rank, layout: map[uint64][]hprof.BasicType{}, defs: map[uint64]*hprof.ClassDump{}}
}

const dangling = ^uint64(0)

// ref returns the rank of a referenced object: 0 for null, dangling for an
// ID that is no object of the dump.
func (c *counts) ref(id uint64) uint64 {
	if id == 0 {
		c.nullRefs++
		return 0
	}
	c.refs++
	r := c.rank(id)
	if r == dangling {
		c.dangling++
	}
	return r
}

// hash mixes a record's words (splitmix64's finalizer after each word).
func hash(words ...uint64) uint64 {
	h := uint64(0x9E3779B97F4A7C15)
	for _, w := range words {
		h ^= w
		h ^= h >> 30
		h *= 0xBF58476D1CE4E5B9
		h ^= h >> 27
		h *= 0x94D049BB133111EB
		h ^= h >> 31
	}
	return h
}

// addClass registers a class definition, so that instances can be parsed.
// It must be called for every class before instances are counted.
func (c *counts) addClass(d *hprof.ClassDump) {
	c.defs[d.ID] = d.Clone()
}

// buildLayouts resolves each class's full field list (own, then supers').
func (c *counts) buildLayouts() {
	for id := range c.defs {
		var l []hprof.BasicType
		seen := 0
		for d := c.defs[id]; d != nil && seen <= len(c.defs); seen++ {
			for _, f := range d.Fields {
				l = append(l, f.Type)
			}
			if d.Super == 0 {
				break
			}
			d = c.defs[d.Super]
		}
		c.layout[id] = l
	}
}

// sub counts one heap sub-record. The ranks of the IDs it names must be
// known (for the generator: objects already written).
func (c *counts) sub(s *hprof.SubRecord) {
	words := make([]uint64, 0, 16)
	switch {
	case s.Tag.IsRoot():
		c.roots++
		c.rootsBy[s.Tag]++
		words = append(words, uint64(s.Tag), c.ref(s.ID))
		switch s.Tag {
		case hprof.SubRootJNIGlobal:
			words = append(words, s.JNIRef)
		case hprof.SubRootJNILocal, hprof.SubRootJavaFrame, hprof.SubRootJNIMonitor:
			words = append(words, uint64(s.Thread), uint64(s.Frame))
		case hprof.SubRootNativeStack, hprof.SubRootThreadBlock:
			words = append(words, uint64(s.Thread))
		case hprof.SubRootThreadObject:
			words = append(words, uint64(s.Thread), uint64(s.StackTrace))
		}
		c.fpRoots += hash(words...)
	case s.Tag == hprof.SubClassDump:
		c.classes++
		d := &s.Class
		words = append(words, uint64(s.Tag), c.rank(d.ID), uint64(d.StackTrace), c.ref(d.Super), c.ref(d.Loader),
			c.ref(d.Signers), c.ref(d.ProtectionDomain), uint64(d.InstanceSize), uint64(len(d.Constants)))
		for _, k := range d.Constants {
			words = append(words, uint64(k.Index), uint64(k.Type))
			if k.Type == hprof.Object {
				words = append(words, c.ref(k.Value))
			}
		}
		words = append(words, uint64(len(d.Statics)))
		for _, f := range d.Statics {
			words = append(words, uint64(f.Type))
			if f.Type == hprof.Object {
				words = append(words, c.ref(f.Value))
			}
		}
		words = append(words, uint64(len(d.Fields)))
		for _, f := range d.Fields {
			words = append(words, uint64(f.Type))
		}
		c.fpClasses += hash(words...)
	case s.Tag == hprof.SubInstanceDump:
		c.instances++
		words = append(words, uint64(s.Tag), c.rank(s.ID), uint64(s.StackTrace), c.ref(s.ClassID), uint64(len(s.Data)))
		l, ok := c.layout[s.ClassID]
		if !ok {
			c.unknownClass++
		}
		p := 0
		for _, t := range l {
			n := t.Size(c.idSize)
			if p+n > len(s.Data) {
				words = append(words, dangling) // layout longer than the data
				break
			}
			if t == hprof.Object {
				var v uint64
				for _, b := range s.Data[p : p+n] {
					v = v<<8 | uint64(b)
				}
				words = append(words, c.ref(v))
			}
			p += n
		}
		c.fpObjects += hash(words...)
	case s.Tag == hprof.SubObjectArrayDump:
		c.objArrays++
		c.objArrayElems += uint64(len(s.Elements))
		words = append(words, uint64(s.Tag), c.rank(s.ID), uint64(s.StackTrace), c.ref(s.ClassID), uint64(len(s.Elements)))
		h := hash(words...)
		for _, e := range s.Elements {
			h = hash(h, c.ref(e))
		}
		c.fpObjects += h
	case s.Tag == hprof.SubPrimitiveArrayDump || s.Tag == hprof.SubPrimitiveArrayNoData:
		if s.Tag == hprof.SubPrimitiveArrayNoData {
			c.primNoData++
		} else {
			c.primArrays++
		}
		c.primByType[s.ElemType&15]++
		c.primArrayElems += uint64(s.Length)
		c.primArrayBytes += uint64(s.Length) * uint64(s.ElemType.Size(c.idSize))
		c.fpObjects += hash(uint64(s.Tag), c.rank(s.ID), uint64(s.StackTrace), uint64(s.ElemType), uint64(s.Length))
	}
}

// top counts a top-level record other than a heap dump.
func (c *counts) top(rec hprof.Record, body []byte) error {
	dec := hprof.BodyDecoder{IDSize: c.idSize}
	switch rec.Tag {
	case hprof.TagString:
		c.strings++
	case hprof.TagLoadClass:
		c.loadClasses++
		l, err := dec.ParseLoadClass(rec, body)
		if err != nil {
			return err
		}
		c.fpTop += hash(uint64(rec.Tag), uint64(l.Serial), c.ref(l.ClassID), uint64(l.StackTrace))
	case hprof.TagStackFrame:
		c.stackFrames++
		f, err := dec.ParseStackFrame(rec, body)
		if err != nil {
			return err
		}
		c.fpTop += hash(uint64(rec.Tag), uint64(f.Class), uint64(uint32(f.Line)))
	case hprof.TagStackTrace:
		c.stackTraces++
		t, err := dec.ParseStackTrace(rec, body, nil)
		if err != nil {
			return err
		}
		c.fpTop += hash(uint64(rec.Tag), uint64(t.Serial), uint64(t.Thread), uint64(len(t.Frames)))
	case hprof.TagStartThread:
		c.startThreads++
	}
	return nil
}

// objects is the number of objects (class dumps included).
func (c *counts) objects() uint64 {
	return c.classes + c.instances + c.objArrays + c.primArrays + c.primNoData
}

// write prints the counts as sorted "key: value" lines. Lines starting with
// "file." describe the file's layout and are not expected to survive a round
// trip; all others are.
func (c *counts) write(w io.Writer) error {
	m := map[string]string{}
	u := func(k string, v uint64) { m[k] = fmt.Sprint(v) }
	u("records.string", c.strings)
	u("records.load_class", c.loadClasses)
	u("records.stack_frame", c.stackFrames)
	u("records.stack_trace", c.stackTraces)
	u("records.start_thread", c.startThreads)
	u("objects.total", c.objects())
	u("objects.class_dump", c.classes)
	u("objects.instance", c.instances)
	u("objects.object_array", c.objArrays)
	u("objects.primitive_array", c.primArrays)
	u("objects.primitive_array_nodata", c.primNoData)
	for t, n := range c.primByType {
		if n > 0 {
			u("objects.primitive_array."+hprof.BasicType(t).String(), n)
		}
	}
	u("objects.instance_of_unknown_class", c.unknownClass)
	u("elements.object_array", c.objArrayElems)
	u("elements.primitive_array", c.primArrayElems)
	u("elements.primitive_array_bytes", c.primArrayBytes)
	u("refs.nonnull", c.refs)
	u("refs.null", c.nullRefs)
	u("refs.dangling", c.dangling)
	u("roots.total", c.roots)
	for t, n := range c.rootsBy {
		if n > 0 {
			u("roots."+strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(hprof.SubTag(t).String(), "ROOT ")), " ", "_"), n)
		}
	}
	x := func(k string, v uint64) { m[k] = fmt.Sprintf("%016x", v) }
	x("fingerprint.classes", c.fpClasses)
	x("fingerprint.objects", c.fpObjects)
	x("fingerprint.roots", c.fpRoots)
	x("fingerprint.top", c.fpTop)
	m["id_size"] = fmt.Sprint(c.idSize)
	f := c.file
	if f.bytes > 0 {
		m["file.bytes"] = fmt.Sprint(f.bytes)
		m["file.over_4gib"] = fmt.Sprint(f.bytes > 1<<32)
	}
	if f.records > 0 {
		m["file.records"] = fmt.Sprint(f.records)
		m["file.heap_dump_segments"] = fmt.Sprint(f.segments)
		m["file.heap_dumps"] = fmt.Sprint(f.heapDumps)
		m["file.heap_dump_ends"] = fmt.Sprint(f.heapDumpEnds)
		m["file.max_record_body"] = fmt.Sprint(f.maxBody)
	}
	if f.version != "" {
		m["file.version"] = f.version
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, m[k])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// idRanks maps object IDs to ranks: ids[i] has rank i+1. When the IDs are
// ascending (as in the generator's output and decrunch's) it searches them
// directly; otherwise through a permutation sorted by ID.
type idRanks struct {
	ids    []uint64
	perm   []uint32 // nil when ids is ascending
	sorted bool
}

func newIDRanks(ids []uint64) *idRanks {
	x := &idRanks{ids: ids, sorted: true}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			x.sorted = false
			break
		}
	}
	if !x.sorted {
		x.perm = make([]uint32, len(ids))
		for i := range x.perm {
			x.perm[i] = uint32(i)
		}
		slices.SortFunc(x.perm, func(a, b uint32) int {
			if ids[a] < ids[b] {
				return -1
			} else if ids[a] > ids[b] {
				return 1
			}
			return int(a) - int(b)
		})
	}
	return x
}

// rank returns the rank of id, or dangling. A duplicate ID resolves to its
// first occurrence.
func (x *idRanks) rank(id uint64) uint64 {
	if x.sorted {
		i, ok := slices.BinarySearch(x.ids, id)
		if !ok {
			return dangling
		}
		return uint64(i) + 1
	}
	i, ok := slices.BinarySearchFunc(x.perm, id, func(p uint32, id uint64) int {
		if x.ids[p] < id {
			return -1
		} else if x.ids[p] > id {
			return 1
		}
		return 0
	})
	if !ok {
		return dangling
	}
	return uint64(x.perm[i]) + 1
}

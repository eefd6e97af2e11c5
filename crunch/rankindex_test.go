package crunch

import (
	"bytes"
	"encoding/binary"
	"flag"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/bigmem"
)

var bigHeap = flag.Bool("bigheap", false, "BenchmarkIndexLookup: 24 M objects instead of 4 M")

// heapLikeIDs returns n IDs as a HotSpot dump has them: regions of
// ascending addresses (objects of 2 to 7 words), the regions dumped in a
// shuffled order, with repeats (a second heap dump) when dups is set.
func heapLikeIDs(rng *rand.Rand, n, regions int, align uint64, dups bool) []uint64 {
	var ids []uint64
	starts := rng.Perm(regions)
	per := n / regions
	for _, r := range starts {
		a := 0x7f0000000 + uint64(r)*uint64(per)*8*align
		for range per {
			a += align * uint64(2+rng.IntN(6))
			ids = append(ids, a)
		}
	}
	if dups {
		for i := 0; i < len(ids)/3; i++ {
			ids = append(ids, ids[rng.IntN(len(ids))])
		}
	}
	return ids
}

// g1LikeIDs returns n IDs as a G1 dump has them: regions of ascending
// addresses, dumped in a shuffled order, compacted into ranges 1 GB apart
// in a 16 GB heap, and n/20 objects archived with the class data (CDS) at
// the heap's top, dumped first when first is set.
func g1LikeIDs(rng *rand.Rand, n, regions int, first bool) []uint64 {
	var heap, top []uint64
	per := n / regions
	for _, r := range rng.Perm(regions) {
		a := 0x400000000 + uint64(r%16)<<30 + uint64(r/16)*uint64(per)*64
		for range per {
			a += 8 * uint64(2+rng.IntN(6))
			heap = append(heap, a)
		}
	}
	a := uint64(0x400000000 + 16<<30 - 1<<20)
	for range n / 20 {
		a += 8 * uint64(2+rng.IntN(6))
		top = append(top, a)
	}
	if first {
		return append(top, heap...)
	}
	return append(heap, top...)
}

// zgcLikeIDs returns n IDs as ZGC and Shenandoah dumps have them: objects
// in the order their heap walk meets them, which follows the addresses
// only in runs of one to three objects, mostly downwards (a ZGC dump of
// scripts/gendump.sh's Big: 654,144 pieces for 1,016,574 objects), in
// 2 MB pages at ZGC's addresses.
func zgcLikeIDs(rng *rand.Rand, n int) []uint64 {
	ids := make([]uint64, n)
	a := uint64(0x100000200000)
	for i := range ids {
		a += 8 * uint64(2+rng.IntN(6))
		if rng.IntN(5000) == 0 {
			a = (a>>21 + 1 + uint64(rng.IntN(4))) << 21 // the next page used
		}
		ids[i] = a
	}
	var runs [][]uint64
	for i := 0; i < n; {
		k := min(1+rng.IntN(3), n-i)
		run := slices.Clone(ids[i : i+k])
		slices.Reverse(run)
		runs = append(runs, run)
		i += k
	}
	rng.Shuffle(len(runs), func(i, j int) { runs[i], runs[j] = runs[j], runs[i] })
	return slices.Concat(runs...)
}

// TestRankIndexMatchesSorted: the bitmap index gives every ID, repeated or
// not, the ordinal the sorted table gives, finds no absent ID, and counts
// the same repeats, on heap-like IDs and on awkward sets.
func TestRankIndexMatchesSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cases := map[string][]uint64{
		"one":           {0x1000},
		"two":           {0x2000, 0x1000},
		"same twice":    {0x1000, 0x1000},
		"unaligned":     {0x1001, 0x1000, 0x1003, 0x1010},
		"descending":    {0x50, 0x40, 0x30, 0x20, 0x10},
		"regions":       heapLikeIDs(rng, 30000, 40, 8, false),
		"regions, dups": heapLikeIDs(rng, 30000, 40, 8, true),
		"one region":    heapLikeIDs(rng, 30000, 1, 8, false),
		// Deltas of over markBytes: setBits walks their units on two
		// goroutines where the test has two cores.
		"regions, marked":   heapLikeIDs(rng, 300000, 40, 8, false),
		"align 16":          heapLikeIDs(rng, 20000, 7, 16, true),
		"G1":                g1LikeIDs(rng, 30000, 40, false),
		"G1, archive first": g1LikeIDs(rng, 30000, 40, true),
		"G1, dups": func() []uint64 {
			a := g1LikeIDs(rng, 3000, 4, false)
			return append(a, a[len(a)-5], a[5]) // one archived, one not
		}(),
		"interleaved":   {0x1000, 0x1020, 0x1040, 0x1010, 0x1030, 0x1050},
		"runs touching": {0x2000, 0x2008, 0x1000, 0x1008, 0x1ff8, 0x3000},
		"ZGC":           zgcLikeIDs(rng, 30000),
		"ZGC, dups": func() []uint64 {
			a := zgcLikeIDs(rng, 30000)
			return append(a, a[17], a[len(a)-1], a[17])
		}(),
		"every ID, once": func() []uint64 {
			a := make([]uint64, 5000)
			for i := range a {
				a[i] = uint64(0x1000 + 8*i)
			}
			rng.Shuffle(len(a), func(i, j int) { a[i], a[j] = a[j], a[i] })
			return a
		}(),
	}
	for name, ids := range cases {
		t.Run(name, func(t *testing.T) {
			var s idSeq
			for _, id := range ids {
				s.add(id)
			}
			w := rankIndexLayout(&s)
			if w.words == 0 {
				t.Fatal("no bitmap layout")
			}
			rx, rdups := newRankIndex(&s, w, false)
			sx, sdups := newDedupedIDIndex(append([]uint64(nil), ids...))
			// The pieces made from the runs, when they can be, are those
			// the walk over the IDs makes.
			walked := s
			walked.runs = ascRuns{over: true}
			wx, _ := newRankIndex(&walked, w, false)
			if !slices.Equal(rx.pieces, wx.pieces) || !slices.Equal(rx.words, wx.words) || !slices.Equal(rx.ords, wx.ords) {
				t.Fatalf("pieces from runs %v, from the walk %v", rx.pieces, wx.pieces)
			}
			// A table of the ordinals by rank where the order follows the
			// addresses only in runs of a few objects (one piece each).
			table := map[string]bool{"ZGC": true, "ZGC, dups": true, "every ID, once": true}[name]
			if (rx.ords != nil) != table || rx.ords != nil && rx.pieces != nil {
				t.Fatalf("%d ordinals in a table, %d pieces; want a table: %v", len(rx.ords), len(rx.pieces), table)
			}
			fromRuns := (&rankIndex{n: rx.n}).piecesFromRuns(&s.runs, s.n)
			// Runs that hold each ID once and do not overlap: regions, or
			// single IDs.
			want := map[string]bool{"one": true, "two": true, "descending": true, "regions": true, "one region": true, "regions, marked": true,
				"G1": true, "G1, archive first": true}[name]
			if fromRuns != want {
				t.Fatalf("pieces made from the runs: %v, want %v", fromRuns, want)
			}
			// Consuming the IDs makes the same index, and leaves none of
			// them where the pieces come from the runs, all of them else.
			var c idSeq
			for _, id := range ids {
				c.add(id)
			}
			cx, cdups := newRankIndex(&c, w, true)
			if !slices.Equal(cx.pieces, rx.pieces) || !slices.Equal(cx.words, rx.words) || !slices.Equal(cx.ords, rx.ords) || cx.n != rx.n || cdups != rdups {
				t.Fatalf("consuming: %d IDs, %d pieces, %d repeats; not: %d, %d, %d", cx.n, len(cx.pieces), cdups, rx.n, len(rx.pieces), rdups)
			}
			left := 0
			c.each(func(uint64) { left++ })
			if wantLeft := map[bool]int{false: len(ids)}[fromRuns]; left != wantLeft {
				t.Fatalf("consuming: %d IDs left, want %d (pieces from the runs: %v)", left, wantLeft, fromRuns)
			}
			if rx.n != sx.len() || rdups != sdups {
				t.Fatalf("bitmap: %d IDs, %d repeats; sorted: %d, %d", rx.n, rdups, sx.len(), sdups)
			}
			for _, id := range ids {
				for _, probe := range []uint64{id, id + 1, id - 1, id + 8, id - 8, id + 1<<40, id + 1<<20, id - 1<<20, id + 1<<29} {
					ro, rok := rx.lookup(probe)
					so, sok := sx.lookup(probe)
					if ro != so || rok != sok {
						t.Fatalf("lookup(%#x): bitmap %d %v, sorted %d %v", probe, ro, rok, so, sok)
					}
				}
			}
			if _, ok := rx.lookup(0); ok && ids[0] != 0 {
				t.Error("0 found")
			}
			t.Logf("%d IDs, %d pieces, %d bytes (%.2f per ID)", rx.n, len(rx.pieces), rx.bytes(), float64(rx.bytes())/float64(rx.n))
		})
	}
}

// TestRankIndexEdges: the bitmap index answers as the sorted table does,
// for IDs below the first (which wrap around in lookup), between two and
// above the last, at the top of the 64-bit range and with IDs of a large
// alignment, whose units the rotation in rankIndex.unit reaches too.
func TestRankIndexEdges(t *testing.T) {
	seq := func(from, step uint64, n int) []uint64 {
		a := make([]uint64, n)
		for i := range a {
			a[i] = from + uint64(i)*step
		}
		return a
	}
	for _, tc := range []struct {
		name string
		ids  []uint64
	}{
		{"ends at 2^64", seq(1<<64-512, 8, 64)},
		// A word of 64 units, which run past 2⁶⁴.
		{"past 2^64", seq(1<<64-256, 8, 32)},
		{"the last aligned ID", []uint64{1<<64 - 8}},
		{"the last ID", []uint64{1<<64 - 1, 1<<64 - 2}},
		{"align 2^40", seq(1<<40, 1<<40, 100)},
		{"align 2^40, high", seq(1<<63, 1<<40, 100)},
		{"align 2^62", []uint64{1 << 62, 1 << 63, 3 << 62}},
		{"unaligned low bits", seq(0x1004, 8, 500)},
		{"regions, high", func() []uint64 {
			a := heapLikeIDs(rand.New(rand.NewPCG(7, 8)), 3000, 3, 8, false)
			for i := range a {
				a[i] += 1<<64 - 0x800000000
			}
			return a
		}()},
	} {
		var s idSeq
		for _, id := range tc.ids {
			s.add(id)
		}
		if rankIndexLayout(&s).words == 0 {
			t.Fatalf("%s: no bitmap layout", tc.name)
		}
		x, _ := buildIDIndex(&s)
		sx, _ := newDedupedIDIndex(slices.Clone(tc.ids))
		step := uint64(1) << s.shift()
		for _, id := range tc.ids {
			for _, probe := range []uint64{id, id + 1, id - 1, id + step, id - step, id - 512 - step, id + 4*step, 0, 1, math.MaxUint64, id ^ 1<<63} {
				o, ok := x.lookup(probe)
				so, sok := sx.lookup(probe)
				if o != so || ok != sok {
					t.Fatalf("%s: lookup(%#x): %d %v, sorted %d %v", tc.name, probe, o, ok, so, sok)
				}
			}
		}
	}
	if _, ok := emptyRank.lookup(0x1000); ok {
		t.Error("emptyRank found an ID")
	}
}

// TestBuildIDIndexChoice: buildIDIndex takes the bitmap for a compact
// heap, the sorted table for IDs spread over a wide span, and both index
// what they were given.
func TestBuildIDIndexChoice(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name   string
		ids    []uint64
		bitmap bool
	}{
		{"heap", heapLikeIDs(rng, 10000, 5, 8, false), true},
		// G1's dumps: ranges spread over a 16 GB heap, and archived
		// objects at its top.
		{"G1 heap", g1LikeIDs(rng, 100000, 40, false), true},
		{"spread", func() []uint64 {
			a := make([]uint64, 10000)
			for i := range a {
				a[i] = rng.Uint64() &^ 7
			}
			return a
		}(), false},
	} {
		var s idSeq
		for _, id := range tc.ids {
			s.add(id)
		}
		x, _ := buildIDIndex(&s)
		if (x.rank != nil) != tc.bitmap {
			t.Errorf("%s: bitmap %v, want %v", tc.name, x.rank != nil, tc.bitmap)
		}
		for i, id := range tc.ids {
			if o, ok := x.lookup(id); !ok || int(o) != i {
				t.Fatalf("%s: lookup(%#x) = %d %v, want %d", tc.name, id, o, ok, i)
			}
		}
	}
}

// TestIDSeq: the compact sequence gives back the IDs in order, whatever
// their differences, and knows their bounds and alignment.
func TestIDSeq(t *testing.T) {
	ids := []uint64{0x1008, 0x1000, 1<<63 + 8, 0x10, 0x1008, ^uint64(7)}
	var s idSeq
	for _, id := range ids {
		s.add(id)
	}
	var got []uint64
	s.each(func(id uint64) { got = append(got, id) })
	if len(got) != len(ids) || s.n != len(ids) {
		t.Fatalf("got %d IDs back, want %d", len(got), len(ids))
	}
	for i := range ids {
		if got[i] != ids[i] {
			t.Errorf("ID %d: %#x, want %#x", i, got[i], ids[i])
		}
	}
	if s.lo != 0x10 || s.hi != ^uint64(7) || s.shift() != 3 {
		t.Errorf("lo %#x hi %#x shift %d", s.lo, s.hi, s.shift())
	}

	// Runs appended (appendRun) give what adding their IDs one by one
	// gives: a run of one ID, an empty one, runs that fill more than a
	// chunk or are alone larger than the first, a run less aligned than the rest,
	// runs that go on from the one before (their ascending runs join).
	var a, want idSeq
	var run idRun
	rng := rand.New(rand.NewPCG(3, 4))
	base := bigmem.Mapped()
	for k, n := range []int{1, 0, 5000, 3 * idSeqChunk / 2, 1, 700000, 3} {
		run.reset()
		base := uint64(0x10000000) + rng.Uint64N(1<<30)&^15
		if k%2 == 0 && want.n > 0 {
			base = want.last + 32
		}
		for i := range n {
			id := base + 16*uint64(i) + 16*rng.Uint64N(1<<20)*uint64(i%5000/4999) // a jump now and then
			if n == 3 {
				id = base + 8*uint64(i) // alignment 8 where the others have 16
			}
			run.add(id)
			want.add(id)
		}
		a.appendRun(&run)
	}
	var wantIDs []uint64
	want.each(func(id uint64) { wantIDs = append(wantIDs, id) })
	got = got[:0]
	a.each(func(id uint64) { got = append(got, id) })
	if !slices.Equal(got, wantIDs) || a.n != want.n {
		t.Fatalf("appended runs: %d IDs back (n %d), want %d", len(got), a.n, len(wantIDs))
	}
	if !slices.Equal(a.runs.spans, want.runs.spans) || a.runs.over != want.runs.over || len(want.runs.spans) < 2 {
		t.Errorf("appended runs: ascending runs %v, want %v", a.runs.spans, want.runs.spans)
	}
	if a.lo != want.lo || a.hi != want.hi || a.shift() != want.shift() || want.shift() != 3 || len(a.chunks) < 2 {
		t.Errorf("appended runs: lo %#x hi %#x shift %d, %d chunks; want lo %#x hi %#x shift %d", a.lo, a.hi, a.shift(), len(a.chunks), want.lo, want.hi, want.shift())
	}
	// The chunks after the first are mapped apart (bigmem), and release
	// gives them back.
	mapped := bigmem.Mapped() - base
	if runtime.GOOS == "linux" && mapped < 2 {
		t.Errorf("%d tables mapped for the chunks after the first of two sequences", mapped)
	}
	a.release()
	want.release()
	if got := bigmem.Mapped() - base; got != 0 {
		t.Errorf("%d tables still mapped after release (%d before)", got, mapped)
	}
}

// BenchmarkIndexLookup compares the two index layouts on the IDs of a
// HotSpot-like heap (4 M objects in 700 regions; with -bigheap 24 M, as
// the 1.3 GB dump has, whose index does not fit the cache), looked up in
// dump order (as references mostly are: near their object) and at random.
func BenchmarkIndexLookup(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	n := 4 << 20
	if *bigHeap {
		n = 24 << 20
	}
	ids := heapLikeIDs(rng, n, 700, 8, false)
	shuffled := append([]uint64(nil), ids...)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	var s idSeq
	for _, id := range ids {
		s.add(id)
	}
	rx, _ := newRankIndex(&s, rankIndexLayout(&s), false)
	sx, _ := newDedupedIDIndex(append([]uint64(nil), ids...))
	for _, x := range []struct {
		name   string
		lookup func(uint64) (uint32, bool)
	}{{"bitmap", rx.lookup}, {"sorted", sx.lookup}} {
		for _, order := range []struct {
			name  string
			probe []uint64
		}{{"dump order", ids}, {"random", shuffled}} {
			b.Run(x.name+"/"+order.name, func(b *testing.B) {
				n := len(order.probe)
				for i := 0; i < b.N; i++ {
					if _, ok := x.lookup(order.probe[i%n]); !ok {
						b.Fatal("missing")
					}
				}
			})
		}
	}
	b.Logf("bytes per object: bitmap %.2f, sorted %.2f", float64(rx.bytes())/float64(rx.n), float64(sx.bytes())/float64(sx.len()))
}

// BenchmarkRankIndexBuild: building the bitmap index of a HotSpot-like heap
// (4 M objects in 700 regions), as pass 1's end does.
func BenchmarkRankIndexBuild(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	var s idSeq
	for _, id := range heapLikeIDs(rng, 4<<20, 700, 8, false) {
		s.add(id)
	}
	words := rankIndexLayout(&s)
	for b.Loop() {
		newRankIndex(&s, words, false)
	}
}

// TestIDSeqUnits: the units of a sequence (idSeq.units), added one by one
// or appended in runs, cover its deltas once, in order, each unit's walk
// from its ID gives the sequence's IDs, and a chunk of more than
// markBytes of deltas is cut at marks at least markBytes apart, and not
// much more where the runs appended are short.
func TestIDSeqUnits(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	ids := heapLikeIDs(rng, 600000, 30, 8, false)
	ids = append(ids, 0x10, 1<<62, 0x18) // deltas of several bytes
	var added, appended idSeq
	var run idRun
	for i, id := range ids {
		added.add(id)
		run.add(id)
		if i%7000 == 6999 || i == len(ids)-1 {
			appended.appendRun(&run)
			run.reset()
		}
	}
	for name, s := range map[string]*idSeq{"added": &added, "appended": &appended} {
		var want []uint64
		s.each(func(id uint64) { want = append(want, id) })
		units := s.units()
		var got []uint64
		for i, u := range units {
			if i > 0 && units[i-1].chunk == u.chunk && units[i-1].to != u.from {
				t.Fatalf("%s: unit %d starts at %d, the one before ends at %d", name, i, u.from, units[i-1].to)
			}
			if u.from == 0 && u.id != s.chunks[u.chunk].base || u.to > len(s.chunks[u.chunk].delta) {
				t.Fatalf("%s: unit %d: %+v", name, i, u)
			}
			one := idSeq{chunks: []idChunkData{{base: u.id, delta: s.chunks[u.chunk].delta[u.from:u.to]}}}
			one.each(func(id uint64) { got = append(got, id) })
		}
		if !slices.Equal(got, want) || len(want) != len(ids) {
			t.Fatalf("%s: the units' walks give %d IDs, the sequence %d (of %d)", name, len(got), len(want), len(ids))
		}
		for k, c := range s.chunks {
			if n := len(c.delta) / markBytes; len(c.marks) < n*3/4 || len(c.marks) > n {
				t.Errorf("%s: chunk %d: %d marks in %d bytes of deltas", name, k, len(c.marks), len(c.delta))
			}
			for i, m := range c.marks {
				if i > 0 && m.off-c.marks[i-1].off < markBytes {
					t.Errorf("%s: chunk %d: marks at %d and %d", name, k, c.marks[i-1].off, m.off)
				}
			}
		}
		marks := 0
		for _, c := range s.chunks {
			marks += len(c.marks)
		}
		if len(units) != len(s.chunks)+marks || marks < 8 {
			t.Errorf("%s: %d units of %d chunks and %d marks", name, len(units), len(s.chunks), marks)
		}
	}
}

// TestAppendDelta: a step up of 0 to 127 is one byte, the step; any other
// difference is its zigzag varint, of two bytes or more (the first 128 or
// more), at the edges and beyond; longDelta and idSeq.each decode them.
func TestAppendDelta(t *testing.T) {
	for _, d := range []int64{0, 1, 127, 128, -1, 63, -64, 64, -65, 8191, -8192, 8192, -8193, 1 << 40, math.MinInt64, math.MaxInt64} {
		last := uint64(1 << 62)
		got := appendDelta(nil, last, last+uint64(d))
		if d >= 0 && d < 128 {
			if !bytes.Equal(got, []byte{byte(d)}) {
				t.Errorf("delta %d: % x, want %02x", d, got, d)
			}
		} else {
			z, n := protowire.ConsumeVarint(got)
			if len(got) < 2 || got[0] < 0x80 || n != len(got) || z != protowire.EncodeZigZag(d) {
				t.Errorf("delta %d: % x, want the zigzag varint %d in two bytes or more", d, got, protowire.EncodeZigZag(d))
			}
			if step, n := longDelta(got); step != uint64(d) || n != len(got) {
				t.Errorf("delta %d: longDelta %d, %d bytes, want %d bytes", d, int64(step), n, len(got))
			}
		}
		var s idSeq
		s.add(last)
		s.add(last + uint64(d))
		var ids []uint64
		s.each(func(id uint64) { ids = append(ids, id) })
		if !slices.Equal(ids, []uint64{last, last + uint64(d)}) {
			t.Errorf("delta %d: each gives %#x", d, ids)
		}
	}
}

// TestIDRunAddAll: adding IDs in batches (addAll) makes the run that
// adding them one by one makes: deltas, facts and ascending runs, for
// steps at the one-byte edge (127 and 128 bytes), runs that start and stop
// within a batch, IDs repeated or going down, the first ID of a run, and
// more ascending runs than are followed (over).
func TestIDRunAddAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	steps := []uint64{8, 16, 63, 64, 65, 127, 128, 129, 1 << 16, 1<<16 + 8, 0, ^uint64(7)} // the last goes down
	for _, c := range []struct {
		name string
		n    int
		next func(last uint64) uint64
	}{
		{"small steps", 10000, func(last uint64) uint64 { return last + 8*(1+rng.Uint64N(7)) }},
		{"edges and jumps", 10000, func(last uint64) uint64 { return last + steps[rng.IntN(len(steps))] }},
		{"random", 3000, func(uint64) uint64 { return rng.Uint64N(1<<40) &^ 7 }},
		{"many runs", 3 * maxSpans, func(last uint64) uint64 { return last - 1<<20 }},
		{"runs going down", 10000, func(last uint64) uint64 {
			if rng.IntN(100) == 0 {
				return last - 1<<20 // below the highest ID so far
			}
			return last + 8
		}},
		{"a full run", 1000, func(last uint64) uint64 { return last + 8 }},
	} {
		ids := make([]uint64, c.n)
		last := uint64(1 << 44)
		for i := range ids {
			last = c.next(last)
			ids[i] = last
		}
		var one, all idRun
		if c.name == "a full run" {
			// A run about to hold the most IDs it can count: the next
			// ones start another.
			one.add(ids[0])
			all.add(ids[0])
			one.runs.spans[0].n = math.MaxUint32 - 500
			all.runs.spans[0].n = math.MaxUint32 - 500
			ids = ids[1:]
		}
		for _, id := range ids {
			one.add(id)
		}
		for rest := ids; len(rest) > 0; {
			k := min(len(rest), 1+rng.IntN(300))
			all.addAll(rest[:k])
			rest = rest[k:]
		}
		if !bytes.Equal(all.delta, one.delta) || all.firstLen != one.firstLen {
			t.Errorf("%s: the deltas differ (%d bytes, want %d)", c.name, len(all.delta), len(one.delta))
		}
		f, w := all.idFacts, one.idFacts
		if f.n != w.n || f.first != w.first || f.last != w.last || f.lo != w.lo || f.hi != w.hi || f.or != w.or {
			t.Errorf("%s: n %d first %#x last %#x lo %#x hi %#x or %#x, want n %d first %#x last %#x lo %#x hi %#x or %#x",
				c.name, f.n, f.first, f.last, f.lo, f.hi, f.or, w.n, w.first, w.last, w.lo, w.hi, w.or)
		}
		if !slices.Equal(f.runs.spans, w.runs.spans) || f.runs.over != w.runs.over {
			t.Errorf("%s: %d ascending runs (over %v), want %d (over %v)", c.name, len(f.runs.spans), f.runs.over, len(w.runs.spans), w.runs.over)
		}
	}
}

// TestWordOf: wordOf finds the bitmap word of any ID, one of the index or
// not (null, below the smallest, past the span, in a block without words,
// unaligned: a corrupt dump's references), never one out of the bitmap,
// and for an ID of the index the word that holds its bit. touch,
// prefetching and loading, brings in the words of such IDs (its loads'
// sum is that of the words' bits) without going out of the bitmap either,
// and windowArrays finds their words (checkWindow).
func TestWordOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for name, ids := range map[string][]uint64{
		"regions": heapLikeIDs(rng, 20000, 20, 8, false),
		"G1":      g1LikeIDs(rng, 20000, 20, true),
	} {
		var s idSeq
		for _, id := range ids {
			s.add(id)
		}
		x, _ := newRankIndex(&s, rankIndexLayout(&s), false)
		if name == "G1" && x.blocks == nil {
			t.Fatalf("%s: no blocks", name)
		}
		for _, id := range ids {
			k := x.unit(id)
			i, ok := x.wordOf(id)
			if !ok || x.words[i].bits&(1<<(k%64)) == 0 {
				t.Fatalf("%s: wordOf(%#x) = %d, %v: its bit is not there", name, id, i, ok)
			}
		}
		odd := []uint64{0, 1, x.min - 8, x.min + 1, ^uint64(0), ^uint64(7), x.min + x.units<<x.shift, x.min + x.units<<x.shift + 8}
		for range 100000 {
			odd = append(odd, rng.Uint64(), x.min+rng.Uint64N(x.units<<x.shift+4096))
		}
		for _, id := range odd {
			if i, ok := x.wordOf(id); ok && i >= uint64(len(x.words)) {
				t.Fatalf("%s: wordOf(%#x) = %d, past the %d words", name, id, i, len(x.words))
			}
		}
		var want uint64 // the sum of the words of ids, loaded
		for _, id := range ids {
			i, _ := x.wordOf(id)
			want += x.words[i].bits
		}
		for _, pre := range []bool{false, true} {
			if pre && !canPrefetch {
				continue
			}
			func() {
				defer func(p bool) { prefetching = p }(prefetching)
				prefetching = pre
				all := append(slices.Clone(ids), odd...)
				at := make([]uint32, len(all))
				for i := range at {
					at[i] = uint32(i)
				}
				got := x.touch(all, at)
				if !pre {
					// The odd IDs' words are loaded too: the sum of the
					// words of ids alone is the loads of a second touch.
					if got2 := x.touch(ids, at[:len(ids)]); got2 != want {
						t.Errorf("%s: touch loaded words summing to %#x, want %#x", name, got2, want)
					}
				} else if got != 0 {
					t.Errorf("%s: touch prefetching returned %#x, want 0", name, got)
				}
			}()
		}
		checkWindow(t, name, x, ids, odd)
	}
}

// checkWindow checks windowArrays on arrays of the IDs ids, all of index
// x, and odd, any: each array's IDs, as elements gives them, and one
// offset per element, that of the word of each ID of
// ids, never one out of the bitmap; and that advancing the window by a
// stretch at a time prefetches each offset once, windowAhead lookups
// ahead at most and fewer than windowMin short of it, the batch's last
// offsets all.
func checkWindow(t *testing.T, name string, x *rankIndex, ids, odd []uint64) {
	t.Helper()
	all := append(slices.Clone(ids), odd...)
	heads, data := arrayHeads(all, 5)
	var w wordWindow
	x.windowArrays(&w, heads, data, 0, 8)
	for i, h := range heads { // each array takes its own IDs, in order
		if got, want := w.elements(int(h.Length)), all[5*i:5*i+int(h.Length)]; !slices.Equal(got, want) {
			t.Fatalf("%s: array %d's elements %#x, want %#x", name, i, got, want)
		}
	}
	if w.taken != len(all) {
		t.Fatalf("%s: %d IDs taken of %d", name, w.taken, len(all))
	}
	if !canPrefetch {
		if len(w.offs) != 0 {
			t.Errorf("%s: %d offsets where nothing is prefetched", name, len(w.offs))
		}
		return
	}
	if len(w.offs) != len(all) {
		t.Fatalf("%s: %d offsets for %d elements", name, len(w.offs), len(all))
	}
	size := uint64(unsafe.Sizeof(rankWord{}))
	for j, o := range w.offs {
		if o%size != 0 || o/size >= uint64(len(x.words)) {
			t.Fatalf("%s: offset %d of element %d (%#x) is not that of a word of the %d", name, o, j, all[j], len(x.words))
		}
		if i, _ := x.wordOf(all[j]); j < len(ids) && o != i*size {
			t.Fatalf("%s: offset %d for %#x, whose word is at %d", name, o, all[j], i*size)
		}
	}
	if w.next != min(windowAhead, len(all)) {
		t.Errorf("%s: %d offsets prefetched before any lookup, want %d", name, w.next, min(windowAhead, len(all)))
	}
	for w.used < len(all) {
		n := min(1+w.used%windowStep, len(all)-w.used) // stretches of 1 to windowStep
		w.advance(x, n)
		if want := min(w.used+windowAhead, len(all)); w.next > want || w.next <= want-windowMin || w.used+windowAhead >= len(all) && w.next != len(all) {
			t.Fatalf("%s: %d offsets prefetched after %d lookups, want %d, or fewer by less than %d", name, w.next, w.used, want, windowMin)
		}
	}
}

// arrayHeads returns the heads of object arrays of the IDs ids (8-byte
// IDs), per to an array, and the bytes they were read from, from offset
// 0 on.
func arrayHeads(ids []uint64, per int) ([]hprof.ObjectHead, []byte) {
	var data []byte
	var heads []hprof.ObjectHead
	for i := 0; i < len(ids); i += per {
		part := ids[i:min(i+per, len(ids))]
		h := hprof.ObjectHead{Offset: int64(len(data)), Tag: hprof.SubObjectArrayDump, Length: uint32(len(part))}
		data = append(data, make([]byte, 2*8+9)...) // the fixed part, zeros
		for _, id := range part {
			data = binary.BigEndian.AppendUint64(data, id)
		}
		heads = append(heads, h)
	}
	return heads, data
}

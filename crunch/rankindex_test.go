package crunch

import (
	"math/rand/v2"
	"testing"
)

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
		"align 16":      heapLikeIDs(rng, 20000, 7, 16, true),
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
			w := rankIndexWords(&s)
			if w == 0 {
				t.Fatal("no bitmap layout")
			}
			rx, rdups := newRankIndex(&s, w)
			sx, sdups := newDedupedIDIndex(append([]uint64(nil), ids...))
			if rx.n != sx.len() || rdups != sdups {
				t.Fatalf("bitmap: %d IDs, %d repeats; sorted: %d, %d", rx.n, rdups, sx.len(), sdups)
			}
			for _, id := range ids {
				for _, probe := range []uint64{id, id + 1, id - 1, id + 8, id - 8, id + 1<<40} {
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

	// Two sequences, one after the other, and enough IDs for several chunks.
	var a, b idSeq
	var want []uint64
	for i := range 3 * idSeqChunk / 2 {
		id := uint64(0x1000 + 16*i)
		a.add(id)
		want = append(want, id)
	}
	for i := range 1000 {
		id := uint64(0x800 + 24*i)
		b.add(id)
		want = append(want, id)
	}
	a.appendSeq(&b)
	got = got[:0]
	a.each(func(id uint64) { got = append(got, id) })
	if len(got) != len(want) || a.n != len(want) || b.n != 0 {
		t.Fatalf("appended: %d IDs back (n %d), want %d", len(got), a.n, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("appended ID %d: %#x, want %#x", i, got[i], want[i])
		}
	}
	if a.lo != 0x800 || a.shift() != 3 || len(a.chunks) < 2 {
		t.Errorf("appended: lo %#x shift %d, %d chunks", a.lo, a.shift(), len(a.chunks))
	}
}

// BenchmarkIndexLookup compares the two index layouts on the IDs of a
// HotSpot-like heap (4 M objects in 700 regions), looked up in dump order
// (as references mostly are: near their object) and at random.
func BenchmarkIndexLookup(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	ids := heapLikeIDs(rng, 4<<20, 700, 8, false)
	shuffled := append([]uint64(nil), ids...)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	var s idSeq
	for _, id := range ids {
		s.add(id)
	}
	rx, _ := newRankIndex(&s, rankIndexWords(&s))
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

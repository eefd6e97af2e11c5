package crunch

import (
	"math/rand"
	randv2 "math/rand/v2"
	"slices"
	"testing"
)

func TestIDIndex(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, tc := range []struct {
		name string
		gen  func(i int) uint64
	}{
		{"aligned8", func(i int) uint64 { return 0x7f0000000 + uint64(i)*8*uint64(1+rng.Intn(5)) }},
		{"sparse64", func(i int) uint64 { return rng.Uint64() }},
		{"id32", func(i int) uint64 { return uint64(rng.Uint32()) &^ 7 }},
		{"gaps", func(i int) uint64 {
			if i%2 == 0 {
				return 0x12c00000 + uint64(i)*16
			}
			return 0x70000000 + uint64(i)*8
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 20000
			ids := make([]uint64, n)
			want := map[uint64]uint32{}
			for i := range ids {
				v := tc.gen(i)
				for _, dup := want[v]; dup || v == 0; _, dup = want[v] {
					v = tc.gen(i)
				}
				ids[i] = v
				want[v] = uint32(i)
			}
			x := newIDIndex(append([]uint64(nil), ids...))
			for id, ord := range want {
				got, ok := x.lookup(id)
				if !ok || got != ord {
					t.Fatalf("lookup(%#x) = %d,%v want %d", id, got, ok, ord)
				}
				for _, miss := range []uint64{id + 1, id - 1, id + 4} {
					if _, in := want[miss]; in {
						continue
					}
					if o, ok := x.lookup(miss); ok {
						t.Fatalf("lookup(%#x) found %d for an absent ID", miss, o)
					}
				}
			}
		})
	}
}

func BenchmarkIDIndexLookup(b *testing.B) {
	const n = 4 << 20
	ids := make([]uint64, n)
	a := uint64(0x7f0000000)
	rng := rand.New(rand.NewSource(2))
	for i := range ids {
		a += 8 * uint64(2+rng.Intn(6))
		ids[i] = a
	}
	probe := append([]uint64(nil), ids...)
	rng.Shuffle(len(probe), func(i, j int) { probe[i], probe[j] = probe[j], probe[i] })
	x := newIDIndex(ids)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := x.lookup(probe[i%n]); !ok {
			b.Fatal("missing")
		}
	}
}

// TestSortKeys: the two-core sort sorts, whatever the order and
// distribution of the keys (random, ascending, descending, clustered).
func TestSortKeys(t *testing.T) {
	const n = 200000
	rng := randv2.New(randv2.NewPCG(1, 2))
	cases := map[string]func(i int) uint64{
		"random":     func(int) uint64 { return rng.Uint64() },
		"ascending":  func(i int) uint64 { return uint64(i) << 20 },
		"descending": func(i int) uint64 { return uint64(n-i) << 20 },
		"clustered":  func(i int) uint64 { return uint64(i%7)<<40 | uint64(i) },
	}
	for name, gen := range cases {
		a := make([]uint64, n)
		for i := range a {
			a[i] = gen(i)
		}
		want := slices.Clone(a)
		slices.Sort(want)
		sortKeys(a)
		if !slices.Equal(a, want) {
			t.Errorf("%s: not sorted", name)
		}
	}
}

// TestDedupedIDIndex: repeated IDs share the rank of their first
// occurrence, and ranks stay dense.
func TestDedupedIDIndex(t *testing.T) {
	for _, wide := range []bool{false, true} {
		ids := []uint64{0x100, 0x200, 0x100, 0x300, 0x200, 0x400}
		if wide {
			ids = []uint64{0x100, 1 << 62, 0x100, 3, 1 << 62, 0x400} // too wide to pack
		}
		want := map[uint64]uint32{ids[0]: 0, ids[1]: 1, ids[3]: 2, ids[5]: 3}
		x, dups := newDedupedIDIndex(append([]uint64(nil), ids...))
		if dups != 2 || x.len() != 4 {
			t.Fatalf("wide %v: %d repeats, %d entries", wide, dups, x.len())
		}
		for id, r := range want {
			if got, ok := x.lookup(id); !ok || got != r {
				t.Errorf("wide %v: lookup(%#x) = %d %v, want %d", wide, id, got, ok, r)
			}
		}
		if _, ok := x.lookup(0x500); ok {
			t.Errorf("wide %v: 0x500 found", wide)
		}
	}
}

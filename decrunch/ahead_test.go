package decrunch

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// TestAheadItemSize: the second pass's items stay 48 bytes (see
// aheadItem); 72-byte items made the reader slower.
func TestAheadItemSize(t *testing.T) {
	if n := unsafe.Sizeof(aheadItem{}); n != 48 {
		t.Errorf("aheadItem is %d bytes, want 48", n)
	}
}

// The ways of the second pass that the tests compare.
type way int

const (
	wayTwo   way = iota // runAhead
	wayOne              // runOne
	wayTurns            // runTimed, switching between them every few objects
)

func (w way) String() string { return [...]string{"two goroutines", "one goroutine", "turns"}[w] }

// allWays are the ways of the second pass.
var allWays = []way{wayTwo, wayOne, wayTurns}

// turnObjects is the stretch of wayTurns: a few objects, so that the ways
// switch often in a small file, at many kinds of places.
const turnObjects = 7

// passOf returns a second pass that runs way w.
func passOf(w way) func(c *converter, src Source) error {
	return func(c *converter, src Source) error {
		var err error
		switch w {
		case wayOne:
			_, err = c.runOne(src, math.MaxUint64)
		case wayTurns:
			err = c.runTimed(src, turnObjects, math.MaxInt, 0) // no round ends the turns
		default:
			_, err = c.runAhead(src, math.MaxUint64)
		}
		return err
	}
}

// setWay makes the second pass run way w until the test ends.
func setWay(t testing.TB, w way) {
	was := secondPass
	t.Cleanup(func() { secondPass = was })
	secondPass = passOf(w)
}

// decrunchWay decrunches data with the second pass run way w.
func decrunchWay(data []byte, opt Options, w way) (*Stats, []byte, error) {
	defer func(was func(*converter, Source) error) { secondPass = was }(secondPass)
	secondPass = passOf(w)
	var out bytes.Buffer
	st, err := Decrunch(bytes.NewReader(data), &out, opt)
	return st, out.Bytes(), err
}

// sameSecondPassWays checks that the second pass on one goroutine, and
// switching between one and two every few objects, writes what it writes
// on two, byte for byte, with the same Stats, or fails with the same
// error.
func sameSecondPassWays(t *testing.T, data []byte, opt Options) {
	t.Helper()
	wantSt, want, wantErr := decrunchWay(data, opt, wayTwo)
	for _, w := range []way{wayOne, wayTurns} {
		st, got, err := decrunchWay(data, opt, w)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("salvage %v: %v: error %v; two goroutines: %v", opt.Salvage, w, err, wantErr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("salvage %v: %v wrote %d bytes of HPROF, which differ from the %d of two goroutines", opt.Salvage, w, len(got), len(want))
		}
		if !reflect.DeepEqual(st, wantSt) {
			t.Fatalf("salvage %v: the Stats of %v\n%+v\ndiffer from two goroutines'\n%+v", opt.Salvage, w, st, wantSt)
		}
	}
}

// TestOverflowPlacedOnSharedID: where two object records share an ID
// and the second holds an ID too large for the file's, salvage names
// the second one's offset in each way of the second pass. Two goroutines
// found the record again by its kind and ID alone, and named the first
// (FuzzSecondPassWays found it). The file, version 1: a HEAP DUMP at
// offset 0; OBJECT ARRAYs of ID 6 at offsets 8 (six elements of ID 48)
// and 18 (one of ID 621,417,512, past what 4-byte IDs number); then a
// byte that is no record.
func TestOverflowPlacedOnSharedID(t *testing.T) {
	data := []byte("\x01\x06000000\x06\x060\x06000000\x06\x060\x01\xa8\xa8\xa8\xa820")
	const want = "an object ID too large for 4-byte identifiers in the OBJECT ARRAY record at offset 18 "
	for _, w := range []way{wayOne, wayTwo, wayTurns} {
		st, _, err := decrunchWay(data, Options{Salvage: true}, w)
		if err != nil {
			t.Fatalf("%v: %v", w, err)
		}
		if st.Salvaged == nil || !strings.Contains(st.Salvaged.Error(), want) {
			t.Errorf("%v: salvaged %v, want it to say %q", w, st.Salvaged, want)
		}
	}
}

// TestSecondPassWays: the second pass on one goroutine gives the HPROF
// file, the Stats or the error of the second pass on two, on the BMD
// files of the fixtures and the corpus dumps: as crunched by default,
// whole, cut short and with a byte changed, with and without salvage,
// and with output limits; with everything kept; in version 1, whole, cut
// short and with a byte changed.
func TestSecondPassWays(t *testing.T) {
	dumps := testutil.SmallDumps(t, "sample.hprof.gz", "sample32.hprof.gz", "secrets.hprof.gz")
	for name, dump := range dumps {
		t.Run(name, func(t *testing.T) {
			f := crunchBytes(t, dump, crunch.Options{})
			bad := bytes.Clone(f)
			bad[len(bad)/2] ^= 0x5a
			for _, data := range [][]byte{f, f[:len(f)*2/3], bad} {
				for _, salvage := range []bool{false, true} {
					sameSecondPassWays(t, data, Options{Salvage: salvage})
				}
			}
			sameSecondPassWays(t, crunchBytes(t, dump, crunch.Options{KeepStrings: true, KeepPrimitives: true}), Options{})
			var v1 bytes.Buffer
			if _, err := crunch.CrunchV1(bytes.NewReader(dump), &v1, crunch.Options{}, io.Discard); err == nil {
				// Version 1, whole, cut short and with a byte changed.
				v := v1.Bytes()
				for k := range 4 {
					bad := bytes.Clone(v)
					bad[len(bad)*k/4] ^= 0x5a
					for _, data := range [][]byte{v[:len(v)*(k+1)/4], bad} {
						for _, salvage := range []bool{false, true} {
							sameSecondPassWays(t, data, Options{Salvage: salvage})
						}
					}
				}
			}
			// Output limits, met anywhere in the second pass.
			_, whole, err := decrunchWay(f, Options{}, wayTwo)
			if err != nil {
				t.Fatal(err)
			}
			for k := 1; k < 6; k++ {
				for _, salvage := range []bool{false, true} {
					sameSecondPassWays(t, f, Options{MaxOutput: int64(len(whole)) * int64(k) / 6, Salvage: salvage})
				}
			}
		})
	}
}

// TestTurnsSwitch: in the second pass of wayTurns, the ways take turns
// many times in a fixture's BMD, and two goroutines stop where asked and
// leave the rest to one (more true), which the comparisons of
// TestSecondPassWays then cover.
func TestTurnsSwitch(t *testing.T) {
	dump := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	f := crunchBytes(t, dump, crunch.Options{})
	was := timedWays
	defer func() { timedWays = was }()
	var calls, stopped [2]int
	for w := range timedWays {
		timedWays[w] = func(c *converter, src Source, until uint64) (bool, error) {
			calls[w]++
			more, err := was[w](c, src, until)
			if more {
				stopped[w]++
				if c.st.Objects < until {
					t.Errorf("way %d stopped at %d objects, before %d", w, c.st.Objects, until)
				}
			}
			return more, err
		}
	}
	st, _, err := decrunchWay(f, Options{}, wayTurns)
	if err != nil {
		t.Fatal(err)
	}
	if want := int(st.Objects / turnObjects / 4); calls[0] < want || calls[1] < want || stopped[1] < want {
		t.Errorf("%d objects in stretches of %d: one goroutine ran %d times, two %d times (stopped early %d), want %d each at least",
			st.Objects, turnObjects, calls[0], calls[1], stopped[1], want)
	}
}

// TestTimedGoesOnFaster: after its timed stretches, runTimed writes the
// rest of the pass the way that wrote more objects per second: here the
// way made slow by a second in each of its stretches loses, one
// goroutine or two, and the output is the same. The second is added to
// runTimed's clock, not slept: with a real pause (20 ms), a loaded
// machine under the race detector delayed the other way's stretches of
// 1000 objects by as much (58 ms against 18), and the slowed way won.
func TestTimedGoesOnFaster(t *testing.T) {
	f, want := sampleBMD(t)
	for slow := range 2 {
		var lag [2]time.Duration
		lag[slow] = time.Second
		_, last, out := laggedTimed(t, f, lag, 1000, 2)
		if last == slow {
			t.Errorf("way %d, slowed, wrote the rest of the pass", slow)
		}
		if !bytes.Equal(out, want) {
			t.Errorf("way %d slowed: %d bytes of HPROF, which differ from the %d of two goroutines", slow, len(out), len(want))
		}
	}
}

// sampleBMD returns the sample fixture crunched by default, and the HPROF
// that decrunch writes of it on two goroutines.
func sampleBMD(t *testing.T) (f, want []byte) {
	t.Helper()
	f = crunchBytes(t, testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz")), crunch.Options{})
	_, want, err := decrunchWay(f, Options{}, wayTwo)
	if err != nil {
		t.Fatal(err)
	}
	return f, want
}

// laggedTimed decrunches BMD f with its second pass timed (runTimed, in
// stretches of sample objects, rounds rounds, margin clearMargin), each
// stretch of way w adding lag[w] to runTimed's clock (not slept). It
// returns how many times each way ran, the way that ran last (which
// writes the rest of the pass), and the HPROF.
func laggedTimed(t *testing.T, f []byte, lag [2]time.Duration, sample uint64, rounds int) (calls [2]int, last int, out []byte) {
	t.Helper()
	was, wasNow, wasPass := timedWays, timedNow, secondPass
	defer func() { timedWays, timedNow, secondPass = was, wasNow, wasPass }()
	var ahead time.Duration // what the lags added to the clock
	timedNow = func() time.Time { return time.Now().Add(ahead) }
	last = -1
	for w := range timedWays {
		timedWays[w] = func(c *converter, src Source, until uint64) (bool, error) {
			ahead += lag[w]
			calls[w]++
			last = w
			return was[w](c, src, until)
		}
	}
	secondPass = func(c *converter, src Source) error { return c.runTimed(src, sample, rounds, clearMargin) }
	var b bytes.Buffer
	st, err := Decrunch(bytes.NewReader(f), &b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Objects < sample*uint64(2*rounds+2) {
		t.Fatalf("test premise: %d objects, fewer than the stretches take", st.Objects)
	}
	return calls, last, b.Bytes()
}

// TestFaster: runTimed goes on with the way that wrote more objects per
// second, one goroutine on a tie or when nothing was timed.
func TestFaster(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		wrote [2]uint64
		spent [2]time.Duration
		want  int
	}{
		{[2]uint64{100, 100}, [2]time.Duration{10 * ms, 5 * ms}, 1},
		{[2]uint64{100, 100}, [2]time.Duration{5 * ms, 10 * ms}, 0},
		{[2]uint64{100, 300}, [2]time.Duration{10 * ms, 20 * ms}, 1}, // 10 against 15 an ms
		{[2]uint64{300, 100}, [2]time.Duration{20 * ms, 10 * ms}, 0},
		{[2]uint64{100, 100}, [2]time.Duration{10 * ms, 10 * ms}, 0},
		{[2]uint64{0, 0}, [2]time.Duration{0, 0}, 0},
		{[2]uint64{100, 100}, [2]time.Duration{10 * ms, 0}, 1}, // a clock too coarse for one stretch
	} {
		if got := faster(c.wrote, c.spent); got != c.want {
			t.Errorf("faster(%v, %v) = %d, want %d", c.wrote, c.spent, got, c.want)
		}
	}
}

// TestPassObjects: the size cores.Choose weighs is the file's count of
// objects, and a version 1 file, which has none, counts as large: the
// timed stretches alone decide for it.
func TestPassObjects(t *testing.T) {
	dump := testutil.ReadAll(t, testutil.Fixture("sample.hprof.gz"))
	v2, err := bmd.NewReader(bytes.NewReader(crunchBytes(t, dump, crunch.Options{})))
	if err != nil {
		t.Fatal(err)
	}
	if n := passObjects(v2.Metadata()); n != v2.Metadata().Objects || n == 0 {
		t.Errorf("version 2: %d objects weighed, the file holds %d", n, v2.Metadata().Objects)
	}
	var v1 bytes.Buffer
	if _, err := crunch.CrunchV1(bytes.NewReader(dump), &v1, crunch.Options{}, io.Discard); err != nil {
		t.Fatal(err)
	}
	src, isV1, err := OpenSource(bytes.NewReader(v1.Bytes()), v1.Bytes()[:64])
	if err != nil {
		t.Fatal(err)
	}
	if !isV1 {
		t.Fatal("test premise: CrunchV1 wrote no version 1 file")
	}
	if n := passObjects(src.Metadata()); n != math.MaxUint64 {
		t.Errorf("version 1: %d objects weighed, want the most", n)
	}
}

// FuzzSecondPassWays: whatever the input, the second pass on one
// goroutine gives what it gives on two.
func FuzzSecondPassWays(f *testing.F) {
	for _, s := range fuzzseed.Seeds(f, 4<<10) {
		var b bytes.Buffer
		if _, err := crunch.Crunch(bytes.NewReader(s.Data), &b, crunch.Options{}); err == nil {
			f.Add(b.Bytes())
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, salvage := range []bool{false, true} {
			// Bounded: a few bytes can ask for gigabytes (a 14-byte
			// version 1 file for 3.4 GB, testdata/fuzz).
			sameSecondPassWays(t, data, Options{Salvage: salvage, MaxOutput: 64 << 20})
		}
	})
}

// TestTimedStopsEarly: where a round of timed stretches finds one way
// clearMargin times as fast as the other, runTimed times no second round
// and writes the rest the faster way; where one is only a quarter
// faster, it times every round. Each way's stretches are made slower on
// runTimed's clock (as in TestTimedGoesOnFaster), not slept.
func TestTimedStopsEarly(t *testing.T) {
	f, want := sampleBMD(t)
	const rounds = 3
	for _, c := range []struct {
		lag       [2]time.Duration // added to the clock by each stretch of each way
		timed     [2]int           // the timed stretches of each way
		finishing int              // the way that writes the rest
	}{
		{[2]time.Duration{time.Second, 2 * time.Second}, [2]int{1, 1}, 0},
		{[2]time.Duration{3 * time.Second, time.Second}, [2]int{1, 1}, 1},
		{[2]time.Duration{time.Second, time.Second + time.Second/4}, [2]int{rounds, rounds}, 0},
	} {
		calls, last, out := laggedTimed(t, f, c.lag, 500, rounds)
		// Two goroutines write an untimed stretch first, and the finishing
		// way the rest.
		timed := calls
		timed[1]--
		timed[last]--
		if timed != c.timed || last != c.finishing {
			t.Errorf("lags %v: timed stretches %v, the rest by way %d; want %v, way %d", c.lag, timed, last, c.timed, c.finishing)
		}
		if !bytes.Equal(out, want) {
			t.Errorf("lags %v: %d bytes of HPROF, which differ from the %d of two goroutines", c.lag, len(out), len(want))
		}
	}
}

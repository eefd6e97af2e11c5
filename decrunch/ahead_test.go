package decrunch

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"reflect"
	"testing"
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

// decrunchWay decrunches data with the second pass on one goroutine
// (runOne) or on two (runAhead).
func decrunchWay(data []byte, opt Options, one bool) (*Stats, []byte, error) {
	defer func(was func(*converter, Source) error) { secondPass = was }(secondPass)
	secondPass = func(c *converter, src Source) error {
		if one {
			return c.runOne(src)
		}
		return c.runAhead(src)
	}
	var out bytes.Buffer
	st, err := Decrunch(bytes.NewReader(data), &out, opt)
	return st, out.Bytes(), err
}

// sameSecondPassWays checks that the second pass on one goroutine writes
// what it writes on two, byte for byte, with the same Stats, or fails
// with the same error.
func sameSecondPassWays(t *testing.T, data []byte, opt Options) {
	t.Helper()
	wantSt, want, wantErr := decrunchWay(data, opt, false)
	st, got, err := decrunchWay(data, opt, true)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("salvage %v: one goroutine: error %v; two: %v", opt.Salvage, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("salvage %v: one goroutine wrote %d bytes of HPROF, which differ from the %d of two", opt.Salvage, len(got), len(want))
	}
	if !reflect.DeepEqual(st, wantSt) {
		t.Fatalf("salvage %v: one goroutine's Stats\n%+v\ndiffer from two's\n%+v", opt.Salvage, st, wantSt)
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
			_, whole, err := decrunchWay(f, Options{}, false)
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

// TestPassObjects: the size cores.Pipeline weighs is the file's count of
// objects, and a version 1 file, which has none, counts as large: the
// probe alone decides for it.
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

package crunch

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/multidump"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// crunchPass2 crunches data with pass 2 on one goroutine (pass2.inline)
// or on two.
func crunchPass2(data []byte, opt Options, one bool) (*Stats, []byte, error) {
	was := pass2OneGoroutine
	defer func() { pass2OneGoroutine = was }()
	pass2OneGoroutine = func() bool { return one }
	var out bytes.Buffer
	st, err := Crunch(bytes.NewReader(data), &out, opt)
	return st, out.Bytes(), err
}

// samePass2Ways checks that pass 2 on one goroutine writes what pass 2 on
// two writes, byte for byte, up to the same error if any.
func samePass2Ways(t *testing.T, data []byte, opt Options) {
	t.Helper()
	_, want, wantErr := crunchPass2(data, opt, false)
	_, got, err := crunchPass2(data, opt, true)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("%+v: one goroutine: error %v; two: %v", opt, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%+v: one goroutine wrote %d bytes of BMD, which differ from the %d of two", opt, len(got), len(want))
	}
}

// TestPass2OneGoroutine: pass 2 on one goroutine gives the BMD file or the
// error of pass 2 on two, on the fixtures and the corpus dumps, whole, cut
// short and with a byte changed, with the options that keep more or drop
// heaps (objects then go through items); on a dump with objects dumped
// again; and on one with unknown IDs, numbered in order (TestUnknownIDsInOrder
// checks the numbers).
func TestPass2OneGoroutine(t *testing.T) {
	dumps := map[string][]byte{}
	for _, name := range []string{"sample.hprof.gz", "sample32.hprof.gz", "sample-align16.hprof.gz", "sample-nocoops.hprof.gz", "secrets.hprof.gz"} {
		dumps[name] = testutil.ReadAll(t, testutil.Fixture(name))
	}
	for _, p := range testutil.CorpusHPROFs(t) {
		if d := testutil.ReadAll(t, p); len(d) < 64<<20 {
			dumps[filepath.Base(p)] = d
		}
	}
	var several bytes.Buffer
	if err := multidump.Write(&several, 3); err != nil {
		t.Fatal(err)
	}
	dumps["three heap dumps"] = several.Bytes()
	dumps["unknown IDs"] = unknownIDsDump(2 * chunkSubRecords)
	options := []Options{{}, {KeepPrimitives: true, KeepStrings: true}, {Profile: "leak", DropHeaps: []string{"zygote", "image"}}}
	for name, data := range dumps {
		t.Run(name, func(t *testing.T) {
			for _, opt := range options {
				samePass2Ways(t, data, opt)
			}
			samePass2Ways(t, data[:len(data)*2/3], Options{})
			bad := bytes.Clone(data)
			bad[len(bad)/2] ^= 0x5a
			samePass2Ways(t, bad, Options{})
		})
	}
}

// FuzzPass2Ways: whatever the input, pass 2 on one goroutine gives what
// pass 2 on two gives.
func FuzzPass2Ways(f *testing.F) {
	for _, s := range fuzzseed.Seeds(f, 4<<10) {
		f.Add(s.Data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		samePass2Ways(t, data, Options{})
	})
}

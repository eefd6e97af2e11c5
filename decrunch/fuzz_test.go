package decrunch_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/decrunch"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
)

// limitWriter keeps at most max bytes and then fails, so that a BMD
// describing a huge heap (a 4-billion-element array costs a few bytes)
// does not keep the fuzzer busy writing zeros.
type limitWriter struct {
	buf bytes.Buffer
	max int
}

var errTooBig = errors.New("output over the fuzz limit")

func (l *limitWriter) Write(b []byte) (int, error) {
	if l.buf.Len()+len(b) > l.max {
		return 0, errTooBig
	}
	return l.buf.Write(b)
}

// FuzzDecrunch feeds any bytes to bmd.NewReader and decrunch.Decrunch,
// with and without salvage: no panic, and whenever Decrunch succeeds the
// HPROF it wrote reads back whole.
func FuzzDecrunch(f *testing.F) {
	for _, s := range fuzzseed.Seeds(f, 4<<10) {
		for _, opt := range []crunch.Options{{}, {KeepStrings: true, KeepPrimitives: true}} {
			var b bytes.Buffer
			if _, err := crunch.Crunch(bytes.NewReader(s.Data), &b, opt); err == nil {
				f.Add(b.Bytes())
				if b.Len() > 100 {
					f.Add(b.Bytes()[:b.Len()*2/3]) // cut short, for salvage
				}
			}
		}
	}
	f.Add([]byte{})
	f.Add([]byte{2, 2, 0x10, 4, 21, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		names := decrunch.NewNameTable()
		add := names.Source("fuzz")
		for _, n := range []string{"java.lang.Object", "value", "com.example.Leaf", "Leaf.java", "main"} {
			add(n)
		}
		for _, salvage := range []bool{false, true} {
			if _, err := bmd.NewReader(bytes.NewReader(data)); err != nil {
				var fe *bmd.FormatError
				if !errors.As(err, &fe) && !errors.Is(err, bmd.ErrVersion1) {
					t.Fatalf("NewReader: error %T is not a *bmd.FormatError: %v", err, err)
				}
				return
			}
			out := &limitWriter{max: 16 << 20}
			st, err := decrunch.Decrunch(bytes.NewReader(data), out, decrunch.Options{Names: names, Salvage: salvage, Rename: strings.ToUpper})
			if err != nil {
				if salvage && !errors.Is(err, errTooBig) {
					t.Fatalf("salvage failed: %v", err)
				}
				continue
			}
			if st == nil {
				t.Fatal("no error and no stats")
			}
			if err := heapstat.ReadAll(out.buf.Bytes()); err != nil {
				t.Fatalf("salvage=%v: the HPROF written does not read back: %v", salvage, err)
			}
		}
	})
}

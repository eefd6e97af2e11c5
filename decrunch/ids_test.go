package decrunch

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
)

// TestReferenceLoops: the loops of shapedInstance and objectArray, which
// make the HPROF IDs of references in place, write what WriteSub writes
// with the IDs of objectIDs.id, for each layout of IDs (4 bytes, 8 bytes
// with compressed references or not, alignments of 8 to 256), on random
// dense IDs up to the largest valid one, and a primitive field among
// the references.
func TestReferenceLoops(t *testing.T) {
	layouts := []bmd.Metadata{
		{IDSize: 4, Alignment: 8}, {IDSize: 4, Alignment: 16},
		{IDSize: 8, Alignment: 8}, {IDSize: 8, Alignment: 256},
		{IDSize: 8, Alignment: 8, UncompressedRefs: true}, {IDSize: 8, Alignment: 32, UncompressedRefs: true},
	}
	for _, m := range layouts {
		rng := rand.New(rand.NewPCG(uint64(m.IDSize), uint64(m.Alignment)))
		ids := newObjectIDs(&m)
		dense := func() uint64 {
			switch rng.IntN(4) {
			case 0:
				return ids.max - uint64(rng.IntN(3))
			case 1:
				return uint64(rng.IntN(3))
			}
			return rng.Uint64N(ids.max + 1)
		}
		id := func(d uint64) uint64 { v, _ := ids.id(d); return v }
		write := func(fast bool) []byte {
			var out bytes.Buffer
			w, err := hprof.NewWriter(&out, hprof.Header{Version: hprof.Version102, IDSize: m.IDSize})
			if err != nil {
				t.Fatal(err)
			}
			c := &converter{meta: m, ids: ids, w: w, enc: w.Encoder(), st: &Stats{}, inHeap: true}
			w.BeginHeapDump(hprof.TagHeapDump, 0)
			rng = rand.New(rand.NewPCG(1, 2))
			for n := range 200 {
				// A shape of n%5 references around an int.
				sh := &classShape{}
				var vals []uint64
				for i := range n%5 + 1 {
					if i == 1 {
						sh.prims = append(sh.prims, fieldAt{i: uint32(i), off: uint32(sh.bytes), size: 4})
						sh.bytes += 4
						vals = append(vals, uint64(rng.Uint32()))
						continue
					}
					sh.refs = append(sh.refs, fieldAt{i: uint32(i), off: uint32(sh.bytes), size: uint8(m.IDSize)})
					sh.bytes += int64(m.IDSize)
					vals = append(vals, dense())
				}
				elems := make([]uint64, n%7)
				for i := range elems {
					elems[i] = dense()
				}
				obj, class := dense(), dense()
				if fast {
					if err := c.shapedInstance(obj, class, 3, sh, vals); err != nil {
						t.Fatal(err)
					}
					if err := c.objectArray(obj, class, 3, elems); err != nil {
						t.Fatal(err)
					}
					continue
				}
				var data []byte
				for i, v := range vals {
					if i == 1 {
						data = binary.BigEndian.AppendUint32(data, uint32(v))
					} else {
						data = c.enc.AppendID(data, id(v))
					}
				}
				w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: id(obj), StackTrace: 3, ClassID: id(class), Data: data})
				hids := make([]uint64, len(elems))
				for i, e := range elems {
					hids[i] = id(e)
				}
				w.WriteSub(&hprof.SubRecord{Tag: hprof.SubObjectArrayDump, ID: id(obj), StackTrace: 3, ClassID: id(class), Elements: hids})
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			return out.Bytes()
		}
		if got, want := write(true), write(false); !bytes.Equal(got, want) {
			t.Errorf("%+v: the loops wrote %d bytes, not those of WriteSub (%d)", m, len(got), len(want))
		}
	}
}

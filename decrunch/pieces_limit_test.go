package decrunch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/heapcrunch/heapcrunch/bmd"
	"google.golang.org/protobuf/encoding/protowire"
)

// reblock returns a version 2 BMD file with the header of file and the
// stream of its records as edit makes it, in new blocks.
func reblock(t *testing.T, file []byte, edit func(stream []byte) []byte) []byte {
	t.Helper()
	h := headerSize(t, file)
	var stream []byte
	for p := h; p < len(file); {
		n, k := protowire.ConsumeVarint(file[p:])
		stream = append(stream, file[p+k:p+k+int(n)]...)
		p += k + int(n) + 8
	}
	stream = edit(stream)
	out := bytes.Clone(file[:h])
	for len(stream) > 0 {
		m := min(len(stream), bmd.BlockSize)
		at := len(out)
		out = protowire.AppendVarint(out, uint64(m))
		out = append(out, stream[:m]...)
		out = binary.LittleEndian.AppendUint64(out, xxhash.Sum64(out[at:]))
		stream = stream[m:]
	}
	return out
}

// oneArrayFile returns a BMD file with 8-byte IDs whose heap dump holds
// one object array of n elements.
func oneArrayFile(t *testing.T, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	w.HeapDump(true)
	elems := make([]uint64, n)
	for i := range elems {
		elems[i] = 1
	}
	if _, err := w.ObjectArray(0, elems); err != nil {
		t.Fatal(err)
	}
	w.HeapDumpEnd()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// lyingArrayFile returns a file of some 50 bytes whose one object array
// says it has n elements: it holds one, then the file ends.
func lyingArrayFile(t *testing.T, n uint64) []byte {
	t.Helper()
	one, two := oneArrayFile(t, 1), oneArrayFile(t, 2)
	var s1, s2 []byte
	reblock(t, one, func(s []byte) []byte { s1 = s; return s })
	reblock(t, two, func(s []byte) []byte { s2 = s; return s })
	at := 0 // the array's length, 1 or 2, is where the streams part
	for s1[at] == s2[at] {
		at++
	}
	return reblock(t, one, func(s []byte) []byte {
		out := protowire.AppendVarint(bytes.Clone(s[:at]), n)
		return append(out, s[at+1:]...)
	})
}

// TestObjectArrayInPiecesOutputLimit: with Salvage and an output limit, a
// file whose array says more elements than it holds (or is cut within
// them) is an *OutputLimitError, before any of the array is written,
// when the array's elements (written as nulls past the cut) would cross
// the limit: the first pass failed on the array, so its estimate did not
// count it. The array was begun and written up to the limit, then the
// error said "a record written while ... elements of an object array are
// still to come". Below the limit, the salvage writes it whole.
func TestObjectArrayInPiecesOutputLimit(t *testing.T) {
	lie := lyingArrayFile(t, 10_000_000)
	for _, pass := range allWays {
		_, out, err := decrunchWay(lie, Options{Salvage: true, MaxOutput: 1 << 20}, pass)
		var le *OutputLimitError
		if !errors.As(err, &le) {
			t.Errorf("way %v: %v, want an OutputLimitError", pass, err)
		}
		if len(out) > 1000 {
			t.Errorf("way %v: %d bytes written, part of the array", pass, len(out))
		}
		st, out, err := decrunchWay(lie, Options{Salvage: true, MaxOutput: 100 << 20}, pass)
		if err != nil || st.Salvaged == nil {
			t.Fatalf("way %v, under the limit: %v, salvaged %v", pass, err, st.Salvaged)
		}
		if n := readsWhole(t, out); len(n) != 1 || n[0] != 10_000_000 {
			t.Fatalf("way %v, under the limit: arrays of %v read back", pass, n)
		}
	}
}

package crunch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/onerecord"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// oneRecord returns dump data as version 1.0.1 with the sub-records of
// all its heap dump records in one HEAP DUMP record, as JDK 8 writes a
// heap of up to 2 GB, followed there by extra, raw sub-records.
func oneRecord(t *testing.T, data, extra []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := onerecord.Rewrite(bytes.NewReader(data), &out, extra); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// byteArrays returns n PRIMITIVE ARRAY DUMP sub-records of bytes, with
// IDs of idSize bytes from id on, each holding payload: sub-records that
// a guess may take for the dump's own.
func byteArrays(idSize, n int, id uint64, payload []byte) []byte {
	var b []byte
	for i := range n {
		b = append(b, byte(hprof.SubPrimitiveArrayDump))
		if idSize == 8 {
			b = binary.BigEndian.AppendUint64(b, id+uint64(i)*8)
		} else {
			b = binary.BigEndian.AppendUint32(b, uint32(id)+uint32(i)*8)
		}
		b = binary.BigEndian.AppendUint32(b, 0)
		b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
		b = append(b, byte(hprof.Byte))
		b = append(b, payload...)
	}
	return b
}

// fakeInstances returns n INSTANCE DUMP sub-records of class, with no
// fields, as raw bytes.
func fakeInstances(idSize, n int, class uint64) []byte {
	var b []byte
	id := func(v uint64) {
		if idSize == 8 {
			b = binary.BigEndian.AppendUint64(b, v)
		} else {
			b = binary.BigEndian.AppendUint32(b, uint32(v))
		}
	}
	for i := range n {
		b = append(b, byte(hprof.SubInstanceDump))
		id(0x6000_0000 + uint64(i)*8)
		b = binary.BigEndian.AppendUint32(b, 0)
		id(class)
		b = binary.BigEndian.AppendUint32(b, 0)
	}
	return b
}

// insertAt returns one-record dump data with extra, raw sub-records put
// before its class dump of class ID class.
func insertAt(t *testing.T, data []byte, class uint64, extra []byte) []byte {
	t.Helper()
	var out []byte
	found := errors.New("found")
	err := heapstat.Walk(data, func(rec hprof.Record, _ *hprof.Reader, s *hprof.SubRecord) error {
		if s == nil || s.Tag != hprof.SubClassDump || s.ID != class {
			return nil
		}
		out = append(bytes.Clone(data[:s.Offset]), extra...)
		binary.BigEndian.PutUint32(out[rec.Offset+5:], rec.Length+uint32(len(extra)))
		out = append(out, data[s.Offset:]...)
		return found
	})
	if err != found {
		t.Fatalf("no class dump of class 0x%x: %v", class, err)
	}
	return out
}

// heapBody returns the sub-records of dump data's first heap dump record.
func heapBody(t *testing.T, data []byte) []byte {
	t.Helper()
	for p := bytes.IndexByte(data, 0) + 13; p+hprof.RecordHeaderSize <= len(data); {
		rec := hprof.DecodeRecordHeader(data[p:], int64(p))
		if rec.Tag.IsHeapDump() {
			return data[rec.Body():rec.End()]
		}
		p = int(rec.End())
	}
	t.Fatal("no heap dump record")
	return nil
}

// crunchBig crunches data from a mapped file, with heap dump records over
// maxMapped bytes read in guessed pieces of guess bytes, their starts
// searched for over scan bytes, subs sub-records read to take one; those
// under a quarter of that in batches, the others split off whole.
func crunchBig(t *testing.T, data []byte, opt Options, maxMapped uint32, guess, scan int64, subs int) ([]byte, error) {
	m, g, s, n := maxSplitMapped, guessBytes, guessScan, guessSubs
	defer func() { maxSplitMapped, guessBytes, guessScan, guessSubs = m, g, s, n }()
	maxSplitMapped, guessBytes, guessScan, guessSubs = maxMapped, guess, scan, subs
	return crunchSegments(t, data, opt, 2, maxMapped/4, maxMapped, 1<<16, true)
}

// sameBigRecordWays checks that reading large heap dump records in
// guessed pieces gives the output and error of reading every record
// inline, with pieces of a few KiB, guesses that take one sub-record or
// sixteen, and searches of 8 bytes (mostly none found) to 64 KiB.
func sameBigRecordWays(t *testing.T, data []byte, opt Options) {
	t.Helper()
	type way struct {
		maxMapped   uint32
		guess, scan int64
		subs        int
	}
	sameAsInline(t, data, opt, []way{{16 << 10, 4 << 10, 64 << 10, 16}, {16 << 10, 3000, 64 << 10, 1}, {8 << 10, 1 << 10, 8, 16}, {64 << 10, 20 << 10, 1 << 10, 2}},
		func(w way) ([]byte, error) {
			return crunchBig(t, data, opt, w.maxMapped, w.guess, w.scan, w.subs)
		})
}

// TestBigRecordInPieces: pass 1 gives the same BMD file or error reading a
// large heap dump record in guessed pieces as reading it inline: on the
// fixtures and corpus dumps (each JDK 17 segment of 1 MB a large record
// here, the corpus's 1.0.1 dumps one record each) and on dumps of one
// record, also with byte arrays full of sub-records that guesses take
// for the dump's; whole, cut short and with a byte changed. The guesses
// must be taken, found wrong and not found, each at least once.
func TestBigRecordInPieces(t *testing.T) {
	dumps := testutil.SmallDumps(t, "sample.hprof.gz", "sample32.hprof.gz", "secrets.hprof.gz")
	for _, idSize := range []int{4, 8} {
		d := spansDump(idSize, 64<<10)
		dumps[fmt.Sprintf("one record, %d-byte IDs", idSize)] = oneRecord(t, d, nil)
		body := heapBody(t, d)
		fake := byteArrays(idSize, 6, 0x7000_0000, body[:40<<10])
		dumps[fmt.Sprintf("false starts, %d-byte IDs", idSize)] = oneRecord(t, d, fake)
		// Instances of class 0x30 (spansDump's leaf, whose first
		// instances come before its class dump) where a guess takes them,
		// before any: a piece read from a wrong start must leave no trace
		// in what the next pieces learn of the classes needed.
		fake = byteArrays(idSize, 6, 0x7000_0000, fakeInstances(idSize, 2000, 0x30))
		dumps[fmt.Sprintf("false starts before a class, %d-byte IDs", idSize)] = insertAt(t, oneRecord(t, d, nil), 0x20, fake)
	}
	before := [3]int64{guesses.taken.Load(), guesses.redone.Load(), guesses.notFound.Load()}
	for name, data := range dumps {
		t.Run(name, func(t *testing.T) {
			sameBigRecordWays(t, data, Options{})
			sameBigRecordWays(t, data[:len(data)*2/3], Options{})
			bad := bytes.Clone(data)
			bad[len(bad)/2] ^= 0x5a
			sameBigRecordWays(t, bad, Options{})
			sameBigRecordWays(t, data, Options{KeepStrings: true, KeepPrimitives: true})
		})
	}
	taken, redone, notFound := guesses.taken.Load()-before[0], guesses.redone.Load()-before[1], guesses.notFound.Load()-before[2]
	t.Logf("guesses taken %d, wrong %d, none found %d", taken, redone, notFound)
	if taken == 0 || redone == 0 || notFound == 0 {
		t.Errorf("guesses taken %d, wrong %d, none found %d: want each", taken, redone, notFound)
	}
}

// FuzzBigRecord: whatever the input, reading its heap dump records over
// 256 bytes in guessed pieces of 64 bytes gives what reading them inline
// gives.
func FuzzBigRecord(f *testing.F) {
	for _, s := range fuzzseed.Seeds(f, 4<<10) {
		f.Add(s.Data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantErr := crunchSegments(t, data, Options{}, 1, 0, 0, 1<<16, false)
		for _, subs := range []int{1, 16} {
			got, err := crunchBig(t, data, Options{}, 256, 64, 256, subs)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
				t.Fatalf("guesses of %d sub-records: error %v and %d bytes, inline %v and %d", subs, err, len(got), wantErr, len(want))
			}
		}
	})
}

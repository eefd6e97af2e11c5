package hprof_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/fuzzseed"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// addSeeds seeds f with small dumps cut from the fixtures and the shared
// corpus (when present), a hand-built dump with every record kind, and a
// few degenerate inputs.
func addSeeds(f *testing.F) {
	for _, s := range fuzzseed.Seeds(f, 4<<10) {
		f.Add(s.Data)
	}
	hdr := []byte("JAVA PROFILE 1.0.2\x00\x00\x00\x00\x04\x00\x00\x01\x8b\x00\x00\x00\x00")
	f.Add([]byte{})
	f.Add(hdr)
	f.Add(append(append([]byte{}, hdr...), 0x1C, 0, 0, 0, 0, 0, 0, 0, 0))                                                                    // empty HEAP DUMP SEGMENT
	f.Add(append(append([]byte{}, hdr...), 0x0C, 0, 0, 0, 0, 0, 0, 0, 5, 0x21, 0, 0, 0, 1))                                                  // truncated INSTANCE DUMP
	f.Add(append(append([]byte{}, hdr...), 0x0C, 0, 0, 0, 0, 0, 0, 0, 17, 0x22, 0, 0, 0, 1, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 2)) // huge array count
}

// allocBound is what reading an input of n bytes may allocate: the
// Reader's fixed buffer, slack for the runtime, and a small multiple of the
// input (object array elements widen 4-byte IDs to uint64 and grow by
// doubling).
func allocBound(n int) uint64 { return 4<<20 + 32*uint64(n) }

// totalAlloc returns the bytes allocated so far by the process (cheaper
// than runtime.ReadMemStats, which stops the world).
func totalAlloc() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// item is one record or sub-record as read, in a form that compares with ==.
type item struct {
	top  bool
	tag  int
	time uint32
	desc string
}

// readAll reads every record and sub-record of data, with primitive array
// contents, until the end or the first error. It checks that an error is a
// *hprof.FormatError with an offset inside the input.
func readAll(t *testing.T, data []byte) (items []item, hdr hprof.Header, complete bool) {
	t.Helper()
	items, hdr, complete, _ = readAllFrom(t, data, bytes.NewReader(data), false)
	return items, hdr, complete
}

// readAllFrom is readAll reading data from src, which also returns the
// error that ended the reading (nil at the end of the input).
//
// With split, each heap dump record is split off (SplitHeapDump) and its
// sub-records read from the split Reader, one reused for every record.
// A nil src reads data in place (NewReaderBytes), which must not change it.
func readAllFrom(t *testing.T, data []byte, src io.Reader, split bool) (items []item, hdr hprof.Header, complete bool, end error) {
	t.Helper()
	check := func(err error) {
		t.Helper()
		var fe *hprof.FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("error %T is not a *hprof.FormatError: %v", err, err)
		}
		if fe.Offset < 0 || fe.Offset > int64(len(data)) {
			t.Fatalf("error offset %d outside the %d-byte input: %v", fe.Offset, len(data), err)
		}
		if fe.Error() == "" {
			t.Fatal("empty error message")
		}
	}
	var r *hprof.Reader
	var err error
	if src == nil {
		orig := bytes.Clone(data)
		defer func() {
			if !bytes.Equal(data, orig) {
				t.Fatal("reading in place changed the data")
			}
		}()
		r, err = hprof.NewReaderBytes(data)
	} else {
		r, err = hprof.NewReader(src)
	}
	if err != nil {
		check(err)
		return nil, hdr, false, err
	}
	hdr = r.Header()
	if hdr.IDSize != 4 && hdr.IDSize != 8 {
		t.Fatalf("accepted identifier size %d", hdr.IDSize)
	}
	r.ArrayData = true
	var sub hprof.Reader
	for rec, err := range r.Records() {
		if err != nil {
			check(err)
			return items, hdr, false, err
		}
		if rec.Offset < 0 || rec.Offset+9 > int64(len(data)) {
			t.Fatalf("record at offset %d of a %d-byte input", rec.Offset, len(data))
		}
		if !rec.Tag.IsHeapDump() {
			body, err := r.Body()
			if err != nil {
				check(err)
				return items, hdr, false, err
			}
			if len(body) != int(rec.Length) {
				t.Fatalf("%s: body of %d bytes, length says %d", rec.Tag, len(body), rec.Length)
			}
			items = append(items, item{top: true, tag: int(rec.Tag), time: rec.Time, desc: string(body)})
			continue
		}
		items = append(items, item{top: true, tag: int(rec.Tag), time: rec.Time, desc: "heap"})
		subs := r
		if split {
			if err := r.SplitHeapDump(&sub); err != nil {
				t.Fatal(err)
			}
			subs = &sub
		}
		for s, err := range subs.SubRecords() {
			if err != nil {
				check(err)
				return items, hdr, false, err
			}
			if s.Offset < rec.Offset+9 || s.Offset >= rec.Offset+9+int64(rec.Length) {
				t.Fatalf("%s at offset %d outside its record at %d", s.Tag, s.Offset, rec.Offset)
			}
			items = append(items, item{tag: int(s.Tag), desc: describe(s, hdr.IDSize)})
		}
	}
	return items, hdr, true, nil
}

// describe renders the fields of s that its tag uses (the Reader leaves
// the others as they were).
func describe(s *hprof.SubRecord, idSize int) string {
	switch s.Tag {
	case hprof.SubClassDump:
		c := s.Class
		return fmt.Sprintf("%x %d %x %x %x %x %x %x %d %v %v %v", c.ID, c.StackTrace, c.Super, c.Loader, c.Signers, c.ProtectionDomain,
			c.Reserved1, c.Reserved2, c.InstanceSize, c.Constants, c.Statics, c.Fields)
	case hprof.SubInstanceDump:
		return fmt.Sprintf("%x %d %x %x", s.ID, s.StackTrace, s.ClassID, s.Data)
	case hprof.SubObjectArrayDump:
		if int(s.Length) != len(s.Elements) {
			panic(fmt.Sprintf("object array of length %d with %d elements", s.Length, len(s.Elements)))
		}
		return fmt.Sprintf("%x %d %x %x", s.ID, s.StackTrace, s.ClassID, s.Elements)
	case hprof.SubPrimitiveArrayDump:
		if len(s.Data) != int(s.Length)*s.ElemType.Size(idSize) {
			panic(fmt.Sprintf("primitive array of %d %s with %d bytes", s.Length, s.ElemType, len(s.Data)))
		}
		return fmt.Sprintf("%x %d %d %d %x", s.ID, s.StackTrace, s.Length, s.ElemType, s.Data)
	case hprof.SubPrimitiveArrayNoData:
		return fmt.Sprintf("%x %d %d %d", s.ID, s.StackTrace, s.Length, s.ElemType)
	case hprof.SubHeapDumpInfo:
		return fmt.Sprintf("%d %x", s.HeapType, s.HeapName)
	case hprof.SubRootJNIGlobal:
		return fmt.Sprintf("%x %x", s.ID, s.JNIRef)
	case hprof.SubRootJNILocal, hprof.SubRootJavaFrame, hprof.SubRootJNIMonitor:
		return fmt.Sprintf("%x %d %d", s.ID, s.Thread, s.Frame)
	case hprof.SubRootNativeStack, hprof.SubRootThreadBlock:
		return fmt.Sprintf("%x %d", s.ID, s.Thread)
	case hprof.SubRootThreadObject:
		return fmt.Sprintf("%x %d %d", s.ID, s.Thread, s.StackTrace)
	}
	return fmt.Sprintf("%x", s.ID)
}

// FuzzReader reads every record and sub-record of any input: no panic,
// bounded allocation, and errors that are *hprof.FormatError with an
// offset in the input.
func FuzzReader(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		before := totalAlloc()
		readAll(t, data)
		if got := totalAlloc() - before; got > allocBound(len(data)) {
			t.Fatalf("reading %d bytes allocated %d bytes", len(data), got)
		}
		// The body decoders on every top-level record body.
		r, err := hprof.NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		dec := hprof.BodyDecoder{IDSize: r.IDSize()}
		for rec, err := range r.Records() {
			if err != nil {
				return
			}
			if rec.Tag.IsHeapDump() {
				continue
			}
			body, err := r.Body()
			if err != nil {
				return
			}
			var derr error
			switch rec.Tag {
			case hprof.TagString:
				_, _, derr = dec.ParseString(rec, body)
			case hprof.TagLoadClass:
				_, derr = dec.ParseLoadClass(rec, body)
			case hprof.TagStackFrame:
				_, derr = dec.ParseStackFrame(rec, body)
			case hprof.TagStackTrace:
				_, derr = dec.ParseStackTrace(rec, body, nil)
			case hprof.TagStartThread:
				_, derr = dec.ParseStartThread(rec, body)
			case hprof.TagUnloadClass, hprof.TagEndThread:
				_, derr = dec.ParseSerial(rec, body)
			}
			var fe *hprof.FormatError
			if derr != nil && !errors.As(derr, &fe) {
				t.Fatalf("%s body: error %T is not a *hprof.FormatError: %v", rec.Tag, derr, derr)
			}
		}
	})
}

// FuzzWriterRoundTrip: what the Reader accepts (up to its first error),
// written back by the Writer, reads back to the same records; an input the
// Reader accepts whole is written back byte for byte.
func FuzzWriterRoundTrip(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		items, hdr, complete := readAll(t, data)
		if hdr.IDSize == 0 {
			return
		}
		// Replay the items into a Writer.
		var out bytes.Buffer
		w, err := hprof.NewWriter(&out, hdr)
		if err != nil {
			t.Fatal(err)
		}
		r, err := hprof.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		r.ArrayData = true
		var s hprof.SubRecord
		for n := 0; n < len(items); {
			rec, err := r.Next()
			if err != nil {
				t.Fatalf("second read: %v", err)
			}
			n++
			if !rec.Tag.IsHeapDump() {
				body, err := r.Body()
				if err != nil {
					t.Fatalf("second read: %v", err)
				}
				if err := w.WriteRecord(rec.Tag, rec.Time, body); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := w.BeginHeapDump(rec.Tag, rec.Time); err != nil {
				t.Fatal(err)
			}
			for n < len(items) && !items[n].top {
				if err := r.NextSub(&s); err != nil {
					t.Fatalf("second read: %v", err)
				}
				n++
				if err := w.WriteSub(&s); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.EndHeapDump(); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		again, _, ok := readAll(t, out.Bytes())
		if !ok {
			t.Fatal("the Writer's output does not read back whole")
		}
		if len(again) != len(items) {
			t.Fatalf("%d records and sub-records read, %d after writing", len(items), len(again))
		}
		for i := range items {
			if items[i] != again[i] {
				t.Fatalf("item %d: read %+v, after writing %+v", i, items[i], again[i])
			}
		}
		if complete && !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("input accepted whole but written back differently: %d bytes in, %d out", len(data), out.Len())
		}
	})
}

// failingReader returns its data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(b []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(b, f.data)
	f.data = f.data[n:]
	return n, nil
}

// TestReadErrorHasOffset: an error of the underlying reader (a damaged
// compressed stream, a disk error) comes back wrapped with the offset where
// it happened.
func TestReadErrorHasOffset(t *testing.T) {
	src := fuzzseed.HandBuilt(4, hprof.Version102)
	boom := errors.New("boom")
	for _, cut := range []int{0, 10, 31, 40, len(src) / 2, len(src) - 1} {
		r, err := hprof.NewReader(&failingReader{src[:cut], boom})
		if err == nil {
			err = readEverything(r)
		}
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), fmt.Sprintf("offset %d", cut)) {
			t.Errorf("cut at %d: got %v, want boom at offset %d", cut, err, cut)
		}
	}
}

// readEverything reads every record and sub-record and returns the first
// error.
func readEverything(r *hprof.Reader) error {
	for rec, err := range r.Records() {
		if err != nil {
			return err
		}
		if rec.Tag.IsHeapDump() {
			for _, err := range r.SubRecords() {
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// FuzzBuffering: the Reader reads the same records, sub-records and error
// whatever its buffer holds: whole sub-records (its fast path, NextSub's
// usual case) or a byte at a time from a source that gives one per read;
// and so does a Reader of each heap dump record split off (SplitHeapDump),
// from either source; and so do a Reader of the data in place
// (NewReaderBytes) and those split from it.
func FuzzBuffering(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, _, _, wholeErr := readAllFrom(t, data, bytes.NewReader(data), false)
		for _, v := range []struct {
			name  string
			src   io.Reader
			split bool
		}{
			{"a byte at a time", iotest.OneByteReader(bytes.NewReader(data)), false},
			{"split", bytes.NewReader(data), true},
			{"split, a byte at a time", iotest.OneByteReader(bytes.NewReader(data)), true},
			{"in place", nil, false},
			{"in place, split", nil, true},
		} {
			got, _, _, err := readAllFrom(t, data, v.src, v.split)
			if len(whole) != len(got) {
				t.Fatalf("%d items read from a full buffer, %d %s", len(whole), len(got), v.name)
			}
			for i := range whole {
				if whole[i] != got[i] {
					t.Fatalf("item %d: %+v from a full buffer, %+v %s", i, whole[i], got[i], v.name)
				}
			}
			if fmt.Sprint(wholeErr) != fmt.Sprint(err) {
				t.Fatalf("error %v from a full buffer, %v %s", wholeErr, err, v.name)
			}
		}
	})
}

// TestSplitHeapDump: Readers of heap dump records split off, copied or in
// place, read what the Reader itself reads, on whole dumps (HotSpot with 4- and 8-byte IDs, the
// corpus's Android dump) and on the same dumps cut in the middle of a
// heap dump record, where the error must be the one the Reader gives.
func TestSplitHeapDump(t *testing.T) {
	check := func(t *testing.T, data []byte) {
		for _, cut := range []int{len(data), len(data) / 2, len(data)/3 + 1} {
			want, _, _, wantErr := readAllFrom(t, data[:cut], bytes.NewReader(data[:cut]), false)
			for _, src := range []io.Reader{bytes.NewReader(data[:cut]), nil} {
				got, _, _, err := readAllFrom(t, data[:cut], src, true)
				if fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Fatalf("cut at %d: split (in place: %v), error %v, want %v", cut, src == nil, err, wantErr)
				}
				if cut < len(data) && err == nil {
					t.Fatalf("cut at %d: no error", cut)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("cut at %d: split (in place: %v), %d items, want %d", cut, src == nil, len(got), len(want))
				}
			}
		}
	}
	for _, name := range []string{"sample.hprof.gz", "sample32.hprof.gz"} {
		t.Run(name, func(t *testing.T) { check(t, testutil.ReadAll(t, testutil.Fixture(name))) })
	}
	t.Run("dialer", func(t *testing.T) {
		check(t, testutil.ReadAll(t, filepath.Join(testutil.CorpusDir(t), "android-dalvik-kitkat-dialer.android-hprof")))
	})
}

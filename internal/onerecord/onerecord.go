// Package onerecord rewrites an HPROF dump in the shape that HotSpot in
// JDK 8 and 9 gives a used heap of up to 2 GB, and that the corpus's
// JDK 5 dumps have: version "JAVA PROFILE 1.0.1", the whole heap dump in
// one HEAP DUMP record. It gives a real JVM's segmented dump that shape,
// at any size under 4 GiB of heap dump (a record's length is a u4), for
// the tests and measurements of crunch's reading of such records.
package onerecord

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// Rewrite reads the dump in twice, the first time for its heap dump's
// length, and writes to out the dump as one record. The sub-records of
// every HEAP DUMP SEGMENT and HEAP DUMP record go, in order, into the one
// HEAP DUMP record, followed by extra (more sub-records, or none), which
// stands where the first heap dump record did (at the end if there was
// none and extra is not empty); HEAP DUMP END records are left out; any
// other record keeps its order, one that came between or after heap
// dump records coming after the one. A record cut short is an error.
func Rewrite(in io.ReadSeeker, out io.Writer, extra []byte) error {
	heap, err := heapLength(in)
	if err != nil {
		return err
	}
	if heap += uint64(len(extra)); heap > math.MaxUint32 {
		return fmt.Errorf("%d bytes of heap dump, more than one record holds", heap)
	}
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return write(in, out, uint32(heap), extra)
}

// heapLength returns the length of the bodies of the heap dump records of
// the dump in.
func heapLength(in io.Reader) (uint64, error) {
	var heap uint64
	err := records(in, nil, func(h []byte, body io.Reader, tag hprof.Tag, n uint32) error {
		if isHeap(tag) {
			heap += uint64(n)
		}
		_, err := io.Copy(io.Discard, body)
		return err
	})
	return heap, err
}

// write writes the dump in to out with its heap dump records' bodies, then
// extra, in one HEAP DUMP record of heap bytes.
func write(in io.Reader, out io.Writer, heap uint32, extra []byte) error {
	w := bufio.NewWriterSize(out, 1<<20)
	var after bytes.Buffer // records met after the first heap dump record
	started := false
	start := func() error {
		started = true
		var rh [hprof.RecordHeaderSize]byte
		rh[0] = byte(hprof.TagHeapDump)
		binary.BigEndian.PutUint32(rh[5:], heap)
		_, err := w.Write(rh[:])
		return err
	}
	onHeader := func(header []byte) error {
		_, err := w.Write(append([]byte(hprof.Version101+"\x00"), header...))
		return err
	}
	err := records(in, onHeader, func(h []byte, body io.Reader, tag hprof.Tag, n uint32) error {
		switch {
		case isHeap(tag):
			if !started {
				if err := start(); err != nil {
					return err
				}
			}
			_, err := io.Copy(w, body)
			return err
		case tag == hprof.TagHeapDumpEnd:
			_, err := io.Copy(io.Discard, body)
			return err
		}
		dst := io.Writer(w)
		if started {
			dst = &after
		}
		dst.Write(h)
		_, err := io.Copy(dst, body)
		return err
	})
	if err == nil && !started && len(extra) > 0 {
		err = start()
	}
	if err == nil {
		_, err = w.Write(extra)
	}
	if err == nil {
		_, err = w.Write(after.Bytes())
	}
	if err == nil {
		err = w.Flush()
	}
	return err
}

// isHeap reports whether tag is a heap dump record whose sub-records go
// into the one record.
func isHeap(tag hprof.Tag) bool {
	return tag == hprof.TagHeapDump || tag == hprof.TagHeapDumpSegment
}

// records reads an HPROF file's header, passing the bytes after its
// version string (ID size and timestamp) to onHeader if not nil, then
// calls f for each record with its 9-byte header h and its body, which f
// reads to its end.
func records(r io.Reader, onHeader func([]byte) error, f func(h []byte, body io.Reader, tag hprof.Tag, n uint32) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	version, err := br.ReadString(0)
	if err != nil || len(version) > 64 {
		return errors.New("not an HPROF file: no version string")
	}
	header := make([]byte, 12)
	if _, err := io.ReadFull(br, header); err != nil {
		return fmt.Errorf("header cut short: %w", err)
	}
	if onHeader != nil {
		if err := onHeader(header); err != nil {
			return err
		}
	}
	var h [hprof.RecordHeaderSize]byte
	for off := int64(len(version) + len(header)); ; {
		if _, err := io.ReadFull(br, h[:]); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("record header at offset %d cut short", off)
		}
		rec := hprof.DecodeRecordHeader(h[:], off)
		body := &io.LimitedReader{R: br, N: int64(rec.Length)}
		if err := f(h[:], body, rec.Tag, rec.Length); err != nil {
			return err
		}
		if body.N != 0 {
			return fmt.Errorf("record at offset %d (tag 0x%02x) cut short", off, byte(rec.Tag))
		}
		off = rec.End()
	}
}

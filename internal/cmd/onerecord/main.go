// Command onerecord rewrites an HPROF dump in the shape of JDK 5 and
// earlier: version "JAVA PROFILE 1.0.1", its heap dump in one HEAP DUMP
// record. The sub-records of every HEAP DUMP SEGMENT and HEAP DUMP record
// go, in order, into the one record, which stands where the first one
// did; HEAP DUMP END records are left out, and any other record keeps its
// order (one that came between or after the segments comes after the heap
// dump). It gives a real JVM's dump the shape of the corpus's JDK 5 dumps,
// at any size under 4 GiB of heap dump (a record's length is a u4):
//
//	onerecord IN.hprof OUT.hprof
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/heapcrunch/heapcrunch/hprof"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: onerecord IN.hprof OUT.hprof")
		os.Exit(2)
	}
	if err := rewrite(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "onerecord:", err)
		os.Exit(1)
	}
}

// rewrite reads in twice, the first time for the heap dump's length, and
// writes out.
func rewrite(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	var heap uint64
	if err := records(f, func(h []byte, body io.Reader, tag hprof.Tag, n uint32) error {
		if isHeap(tag) {
			heap += uint64(n)
		}
		_, err := io.Copy(io.Discard, body)
		return err
	}); err != nil {
		return err
	}
	if heap > math.MaxUint32 {
		return fmt.Errorf("%s: %d bytes of heap dump, more than one record holds", in, heap)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(o, 1<<20)
	var after bytes.Buffer // records met after the first heap dump record
	started := false
	err = records(f, func(h []byte, body io.Reader, tag hprof.Tag, n uint32) error {
		switch {
		case isHeap(tag):
			if !started {
				started = true
				var rh [hprof.RecordHeaderSize]byte
				rh[0] = byte(hprof.TagHeapDump)
				binary.BigEndian.PutUint32(rh[5:], uint32(heap))
				if _, err := w.Write(rh[:]); err != nil {
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
	}, func(header []byte) error {
		_, err := w.Write(append([]byte(hprof.Version101+"\x00"), header...))
		return err
	})
	if err == nil {
		_, err = w.Write(after.Bytes())
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := o.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out)
	}
	return err
}

// isHeap reports whether tag is a heap dump record whose sub-records go
// into the one record.
func isHeap(tag hprof.Tag) bool {
	return tag == hprof.TagHeapDump || tag == hprof.TagHeapDumpSegment
}

// records reads an HPROF file's header, passing the bytes after its
// version string (ID size and timestamp) to each of onHeader, then calls
// f for each record with its 9-byte header h and its body, which f reads
// to its end.
func records(r io.Reader, f func(h []byte, body io.Reader, tag hprof.Tag, n uint32) error, onHeader ...func([]byte) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	version, err := br.ReadString(0)
	if err != nil || len(version) > 64 {
		return errors.New("not an HPROF file: no version string")
	}
	header := make([]byte, 12)
	if _, err := io.ReadFull(br, header); err != nil {
		return fmt.Errorf("header cut short: %w", err)
	}
	for _, h := range onHeader {
		if err := h(header); err != nil {
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

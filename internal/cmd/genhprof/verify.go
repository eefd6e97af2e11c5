package main

import (
	"fmt"
	"io"
	"os"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// verify reads the HPROF file at path twice with hprof.Reader, from start to
// end, and returns its counts. The first pass checks the file's structure
// (record offsets are where the lengths before them say, HEAP DUMP SEGMENTs
// are closed by a HEAP DUMP END, the reader ends at the file's size) and
// collects object IDs and class definitions; the second counts.
func verify(path string) (*counts, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	sc, err := scan(f, st.Size())
	if err != nil {
		return nil, err
	}

	ids := make([]uint64, 0, len(sc.classIDs)+sc.objIDs.n)
	ids = append(ids, sc.classIDs...)
	ids = sc.objIDs.appendTo(ids)
	ranks := newIDRanks(ids)
	c := newCounts(sc.idSize, ranks.rank)
	c.file = sc.info
	for _, d := range sc.defs {
		c.addClass(d)
	}
	c.buildLayouts()

	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	r, err := hprof.NewReader(f)
	if err != nil {
		return nil, err
	}
	for rec, err := range r.Records() {
		if err != nil {
			return nil, err
		}
		if !rec.Tag.IsHeapDump() {
			body, err := r.Body()
			if err != nil {
				return nil, err
			}
			if err := c.top(rec, body); err != nil {
				return nil, err
			}
			continue
		}
		for s, err := range r.SubRecords() {
			if err != nil {
				return nil, err
			}
			c.sub(s)
		}
	}
	return c, nil
}

// scanned is what the first pass of verify learns.
type scanned struct {
	info     fileInfo
	idSize   int
	classIDs []uint64
	objIDs   chunkList
	defs     []*hprof.ClassDump
}

// scan reads an HPROF stream of size bytes (-1: unknown) to its end and
// checks its structure: every record starts where the lengths before it say,
// sub-records fill their record exactly, HEAP DUMP SEGMENTs are closed by a
// HEAP DUMP END, and the reader ends at the stream's size. It collects the
// IDs of class dumps and objects and the class definitions.
func scan(f io.Reader, size int64) (*scanned, error) {
	r, err := hprof.NewReader(f)
	if err != nil {
		return nil, err
	}
	sc := &scanned{idSize: r.IDSize()}
	info := &sc.info
	info.bytes, info.version = size, r.Header().Version
	want := r.Offset() // where the next record must start
	openSegments := false
	for rec, err := range r.Records() {
		if err != nil {
			return nil, err
		}
		if rec.Offset != want {
			return nil, fmt.Errorf("record %s at offset %d, expected at %d", rec.Tag, rec.Offset, want)
		}
		want = rec.End()
		info.records++
		info.maxBody = max(info.maxBody, int64(rec.Length))
		switch rec.Tag {
		case hprof.TagHeapDumpSegment:
			info.segments++
			openSegments = true
		case hprof.TagHeapDump:
			info.heapDumps++
		case hprof.TagHeapDumpEnd:
			info.heapDumpEnds++
			if !openSegments {
				return nil, fmt.Errorf("HEAP DUMP END at offset %d closes no HEAP DUMP SEGMENT", rec.Offset)
			}
			openSegments = false
		}
		if !rec.Tag.IsHeapDump() {
			continue
		}
		for s, err := range r.SubRecords() {
			if err != nil {
				return nil, err
			}
			switch s.Tag {
			case hprof.SubClassDump:
				sc.classIDs = append(sc.classIDs, s.ID)
				sc.defs = append(sc.defs, s.Class.Clone())
			case hprof.SubInstanceDump, hprof.SubObjectArrayDump, hprof.SubPrimitiveArrayDump, hprof.SubPrimitiveArrayNoData:
				sc.objIDs.add(s.ID)
			}
		}
		if r.Offset() != want {
			return nil, fmt.Errorf("%s at offset %d: sub-records end at %d, the record at %d", rec.Tag, rec.Offset, r.Offset(), want)
		}
	}
	if openSegments {
		return nil, fmt.Errorf("the file ends without the HEAP DUMP END that closes its HEAP DUMP SEGMENTs")
	}
	if size < 0 {
		info.bytes = r.Offset()
	}
	if end := r.Offset(); end != info.bytes || want != info.bytes {
		return nil, fmt.Errorf("reader ended at offset %d (records at %d), file has %d bytes", end, want, info.bytes)
	}
	return sc, nil
}

// chunkList collects IDs in chunks of 1 Mi, so that growing never copies.
type chunkList struct {
	chunks [][]uint64
	n      int
}

func (l *chunkList) add(id uint64) {
	if l.n%(1<<20) == 0 {
		l.chunks = append(l.chunks, make([]uint64, 0, 1<<20))
	}
	c := &l.chunks[len(l.chunks)-1]
	*c = append(*c, id)
	l.n++
}

func (l *chunkList) appendTo(dst []uint64) []uint64 {
	for i, c := range l.chunks {
		dst = append(dst, c...)
		l.chunks[i] = nil
	}
	return dst
}

package hprof_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"log"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// Example writes a tiny heap dump, a class Point with two int fields and
// one instance held by a stack frame, and reads it back record by record.
func Example() {
	var buf bytes.Buffer
	w, err := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version102, IDSize: 4, Timestamp: 1700000000000})
	if err != nil {
		log.Fatal(err)
	}
	enc := w.Encoder()
	const (
		nameID, xID, yID = 1, 2, 3        // string IDs
		classID, pointID = 0x1000, 0x2000 // object IDs
		objectClassID    = 0x100          // java.lang.Object, not in this dump
		instanceSize     = 8              // two ints
		thread, frame    = 1, 0           // the root's thread serial and frame
		classSerial      = 1              // LOAD CLASS serial
		time             = 0              // microseconds after the header's time
		x, y             = 3, 4           // the fields' values
	)
	// Write errors of the underlying writer are kept: Flush returns the first.
	for id, s := range []string{nameID: "Point", xID: "x", yID: "y"} {
		if s != "" {
			w.WriteRecord(hprof.TagString, time, enc.AppendString(nil, uint64(id), []byte(s)))
		}
	}
	w.WriteRecord(hprof.TagLoadClass, time, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: classSerial, ClassID: classID, Name: nameID}))
	w.BeginHeapDump(hprof.TagHeapDumpSegment, time)
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{
		ID: classID, Super: objectClassID, InstanceSize: instanceSize,
		Fields: []hprof.Field{{Name: xID, Type: hprof.Int}, {Name: yID, Type: hprof.Int}},
	}})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: pointID, ClassID: classID, Data: []byte{0, 0, 0, x, 0, 0, 0, y}})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubRootJavaFrame, ID: pointID, Thread: thread, Frame: frame})
	w.EndHeapDump()
	w.WriteRecord(hprof.TagHeapDumpEnd, time, nil)
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}

	r, err := hprof.NewReader(&buf)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, %d-byte IDs\n", r.Header().Version, r.IDSize())
	dec := hprof.BodyDecoder{IDSize: r.IDSize()}
	strings := map[uint64]string{}
	for rec, err := range r.Records() {
		if err != nil {
			log.Fatal(err)
		}
		switch {
		case rec.Tag == hprof.TagString:
			body, err := r.Body()
			if err != nil {
				log.Fatal(err)
			}
			id, text, err := dec.ParseString(rec, body)
			if err != nil {
				log.Fatal(err)
			}
			strings[id] = string(text) // text is valid until the next read: copy it
		case rec.Tag == hprof.TagLoadClass:
			body, err := r.Body()
			if err != nil {
				log.Fatal(err)
			}
			l, err := dec.ParseLoadClass(rec, body)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Printf("%s: class 0x%x is %s\n", rec.Tag, l.ClassID, strings[l.Name])
		case rec.Tag.IsHeapDump():
			fmt.Printf("%s of %d bytes:\n", rec.Tag, rec.Length)
			for s, err := range r.SubRecords() {
				if err != nil {
					log.Fatal(err)
				}
				switch s.Tag {
				case hprof.SubClassDump:
					fmt.Printf("  %s 0x%x: %d fields, instances of %d bytes\n", s.Tag, s.ID, len(s.Class.Fields), s.Class.InstanceSize)
				case hprof.SubInstanceDump:
					fmt.Printf("  %s 0x%x of class 0x%x: % x\n", s.Tag, s.ID, s.ClassID, s.Data)
				default:
					fmt.Printf("  %s 0x%x\n", s.Tag, s.ID)
				}
			}
		default:
			fmt.Printf("%s\n", rec.Tag)
		}
	}
	// Output:
	// JAVA PROFILE 1.0.2, 4-byte IDs
	// LOAD CLASS: class 0x1000 is Point
	// HEAP DUMP SEGMENT of 91 bytes:
	//   CLASS DUMP 0x1000: 2 fields, instances of 8 bytes
	//   INSTANCE DUMP 0x2000 of class 0x1000: 00 00 00 03 00 00 00 04
	//   ROOT JAVA FRAME 0x2000
	// HEAP DUMP END
}

// ExampleReader_SkimObjects counts the objects of each class in a heap
// dump, reading the objects a batch at a time and anything else (here a
// CLASS DUMP and a root) with NextSub, which also reads the objects that
// SkimObjects leaves (here the array, whose 19 bytes and the root's 5 end
// the record: fewer than the 25 that SkimObjects asks for).
func ExampleReader_SkimObjects() {
	var buf bytes.Buffer
	w, err := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version102, IDSize: 4})
	if err != nil {
		log.Fatal(err)
	}
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: 0x100, InstanceSize: 4, Fields: []hprof.Field{{Name: 1, Type: hprof.Int}}}})
	for id := uint64(0x200); id < 0x230; id += 0x10 {
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: id, ClassID: 0x100, Data: []byte{0, 0, 0, 7}})
	}
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubPrimitiveArrayDump, ID: 0x300, ElemType: hprof.Byte, Length: 5, Data: make([]byte, 5)})
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubRootStickyClass, ID: 0x100})
	w.EndHeapDump()
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}

	r, err := hprof.NewReaderBytes(buf.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	heads := make([]hprof.ObjectHead, 256)
	var s hprof.SubRecord
	instances := map[uint64]int{}
	object := func(tag hprof.SubTag, id, class uint64, length uint32, t hprof.BasicType) {
		if tag == hprof.SubInstanceDump {
			instances[class]++
		} else {
			fmt.Printf("%s 0x%x: %d elements of %s\n", tag, id, length, t)
		}
	}
	for rec, err := range r.Records() {
		if err != nil {
			log.Fatal(err)
		}
		if !rec.Tag.IsHeapDump() {
			continue
		}
		for {
			if n := r.SkimObjects(heads, 0); n > 0 {
				for _, h := range heads[:n] {
					object(h.Tag, h.ID, h.ClassID, h.Length, h.ElemType)
				}
				continue
			}
			if err := r.NextSub(&s); err == io.EOF {
				break
			} else if err != nil {
				log.Fatal(err)
			}
			switch s.Tag {
			case hprof.SubInstanceDump, hprof.SubObjectArrayDump, hprof.SubPrimitiveArrayDump:
				object(s.Tag, s.ID, s.ClassID, s.Length, s.ElemType)
			default:
				fmt.Printf("%s 0x%x\n", s.Tag, s.ID)
			}
		}
	}
	fmt.Println("instances of class 0x100:", instances[0x100])
	// Output:
	// CLASS DUMP 0x100
	// PRIMITIVE ARRAY DUMP 0x300: 5 elements of byte
	// ROOT STICKY CLASS 0x100
	// instances of class 0x100: 3
}

// ExampleReader_SkimObjectsData sums an int field over the instances of a
// heap dump, reading their field values from the bytes SkimObjectsData
// returns (ObjectHead.Contents), and the sub-records it leaves with
// NextSub.
func ExampleReader_SkimObjectsData() {
	var buf bytes.Buffer
	w, err := hprof.NewWriter(&buf, hprof.Header{Version: hprof.Version102, IDSize: 4})
	if err != nil {
		log.Fatal(err)
	}
	w.BeginHeapDump(hprof.TagHeapDumpSegment, 0)
	w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: 0x100, InstanceSize: 4, Fields: []hprof.Field{{Name: 1, Type: hprof.Int}}}})
	for i := range 40 {
		w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: 0x200 + uint64(i), ClassID: 0x100, Data: []byte{0, 0, 0, byte(i)}})
	}
	w.EndHeapDump()
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}

	r, err := hprof.NewReaderBytes(buf.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	heads := make([]hprof.ObjectHead, 16)
	var s hprof.SubRecord
	var sum, skimmed, one uint32
	for rec, err := range r.Records() {
		if err != nil {
			log.Fatal(err)
		}
		if !rec.Tag.IsHeapDump() {
			continue
		}
		for {
			if n, data, base := r.SkimObjectsData(heads, 0); n > 0 {
				for i := range heads[:n] {
					if h := &heads[i]; h.Tag == hprof.SubInstanceDump {
						sum += binary.BigEndian.Uint32(h.Contents(data, base, r.IDSize()))
						skimmed++
					}
				}
				continue
			}
			if err := r.NextSub(&s); err == io.EOF {
				break
			} else if err != nil {
				log.Fatal(err)
			}
			if s.Tag == hprof.SubInstanceDump {
				sum += binary.BigEndian.Uint32(s.Data)
				one++
			}
		}
	}
	fmt.Printf("sum %d over %d instances skimmed and %d read one by one\n", sum, skimmed, one)
	// Output:
	// sum 780 over 39 instances skimmed and 1 read one by one
}

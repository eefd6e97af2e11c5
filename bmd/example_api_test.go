package bmd_test

import (
	"bytes"
	"fmt"
	"io"
	"log"

	"github.com/cespare/xxhash/v2"
	"github.com/heapcrunch/heapcrunch/bmd"
)

// A heap of one class, com.example.Node, and two instances of it, written
// and read back.
func Example() {
	var file bytes.Buffer
	w, err := bmd.NewWriter(&file, &bmd.Metadata{HPROFVersion: "JAVA PROFILE 1.0.2", IDSize: 8,
		Hash: bmd.HashXX64, Objects: 3, Classes: 1, Strings: 3})
	if err != nil {
		log.Fatal(err)
	}
	// Names: the app's class name hashed, field names in the clear.
	cls, _ := w.HashedString(16, xxhash.Sum64String("com.example.Node"))
	next, _ := w.ClearString([]byte("next"))
	value, _ := w.ClearString([]byte("value"))
	w.LoadClass(1, 1, 0, cls) // class serial 1 is object 1, named cls
	w.HeapDump(true)
	node, _ := w.Class(&bmd.Class{Index: 1, InstanceSize: 12, Fields: []bmd.Field{
		{Name: next, Type: bmd.Object}, {Name: value, Type: bmd.Int}}}) // value not kept
	a, _ := w.Instance(node, []uint64{0, 42})
	b, _ := w.Instance(node, []uint64{a, 7})
	w.Root(0x03, b, 1, 0, 0, 0) // JAVA FRAME: thread 1, frame 0
	w.HeapDumpEnd()
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("wrote %d bytes\n", w.Written())

	r, err := bmd.NewReader(&file)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Metadata().HPROFVersion)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		switch rec.Kind {
		case bmd.KindString:
			fmt.Printf("%v %d %q\n", rec.Kind, rec.ID, rec.Text)
		case bmd.KindHashedString:
			fmt.Printf("%v %d: %d bytes, hash %016x\n", rec.Kind, rec.ID, rec.Length, rec.Hash)
		case bmd.KindLoadClass:
			fmt.Printf("%v %d: class %d, name %d\n", rec.Kind, rec.Serial, rec.Class, rec.Name)
		case bmd.KindClass:
			fmt.Printf("%v %d: %d fields\n", rec.Kind, rec.ID, len(rec.Def.Fields))
		case bmd.KindInstance:
			fmt.Printf("%v %d of class %d: %v\n", rec.Kind, rec.ID, rec.Class, rec.Values)
		case bmd.KindRoot:
			fmt.Printf("%v 0x%02X: object %d\n", rec.Kind, rec.Tag, rec.Object)
		default:
			fmt.Println(rec.Kind)
		}
	}
	// Output:
	// wrote 127 bytes
	// JAVA PROFILE 1.0.2
	// HASHED STRING 1: 16 bytes, hash c1127d4e8e0aa3f6
	// STRING 2 "next"
	// STRING 3 "value"
	// LOAD CLASS 1: class 1, name 1
	// HEAP DUMP
	// CLASS 1: 2 fields
	// INSTANCE 2 of class 1: [0 0]
	// INSTANCE 3 of class 1: [2 0]
	// ROOT 0x03: object 3
	// HEAP DUMP END
	// END
}

// Sniff tells which reader reads a file from its first bytes.
func ExampleSniff() {
	var v2, v1 bytes.Buffer
	w, _ := bmd.NewWriter(&v2, &bmd.Metadata{IDSize: 4})
	w.Close()
	w1, _ := bmd.NewV1Writer(&v1, []byte("JAVA PROFILE 1.0.3"))
	w1.Flush()
	for _, file := range [][]byte{v2.Bytes(), v1.Bytes(), []byte("JAVA PROFILE 1.0.2\x00")} {
		switch bmd.Sniff(file[:min(len(file), 64)]) {
		case bmd.Version2:
			fmt.Println("version 2: bmd.NewReader")
		case bmd.Version1:
			fmt.Println("version 1: bmd.NewV1Reader")
		default:
			fmt.Println("not BMD")
		}
	}
	// Output:
	// version 2: bmd.NewReader
	// version 1: bmd.NewV1Reader
	// not BMD
}

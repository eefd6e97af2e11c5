// Package multidump writes a small HPROF file with several heap dumps, the
// shape the old -agentlib:hprof agent wrote for each dump request: one HEAP
// DUMP SEGMENT … HEAP DUMP END per dump, every class dumped again in each
// (with its statics of the moment), the objects still alive dumped again
// under the same IDs (with their field values of the moment), new objects
// and classes in later dumps, and objects gone. It exists to test that
// crunch and decrunch keep such files whole.
package multidump

import (
	"encoding/binary"
	"io"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// Write writes a dump with n heap dumps (n ≥ 1) and 4-byte IDs to w.
func Write(w io.Writer, n int) error {
	hw, err := hprof.NewWriter(w, hprof.Header{Version: hprof.Version102, IDSize: 4, Timestamp: 1700000000000})
	if err != nil {
		return err
	}
	enc := hw.Encoder()
	sid := map[string]uint64{}
	str := func(s string) uint64 {
		if id, ok := sid[s]; ok {
			return id
		}
		id := uint64(0x7000_0000+len(sid)*16) + 8
		sid[s] = id
		hw.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, id, []byte(s)))
		return id
	}
	const (
		object  = 0x1000_0000
		str8    = 0x1000_0100
		node    = 0x1000_0200
		later   = 0x1000_0300 // a class loaded before the second dump
		objArr  = 0x1000_0400
		byteArr = 0x1000_0500
	)
	serial := uint32(1)
	load := func(id uint64, name string) {
		hw.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: serial, ClassID: id, Name: str(name)}))
		serial++
	}
	load(object, "java/lang/Object")
	load(str8, "java/lang/String")
	load(node, "com/example/Node")
	load(objArr, "[Ljava/lang/Object;")
	load(byteArr, "[B")
	fieldNext, fieldVal, fieldName := str("next"), str("value"), str("name")
	countName := str("COUNT")
	for d := 0; d < n; d++ {
		if d == 1 {
			load(later, "com/example/Later")
		}
		if err := hw.BeginHeapDump(hprof.TagHeapDumpSegment, uint32(d*1000)); err != nil {
			return err
		}
		sub := func(s hprof.SubRecord) { hw.WriteSub(&s) }
		class := func(id, super uint64, fields []hprof.Field, statics []hprof.StaticField, size uint32) {
			sub(hprof.SubRecord{Tag: hprof.SubClassDump, ID: id, Class: hprof.ClassDump{ID: id, Super: super,
				Fields: fields, Statics: statics, InstanceSize: size}})
		}
		class(object, 0, nil, nil, 0)
		class(str8, object, []hprof.Field{{Name: fieldVal, Type: hprof.Object}}, nil, 4)
		class(node, object, []hprof.Field{{Name: fieldNext, Type: hprof.Object}, {Name: fieldName, Type: hprof.Object}, {Name: fieldVal, Type: hprof.Int}},
			[]hprof.StaticField{{Name: countName, Type: hprof.Int, Value: uint64(10 * (d + 1))}}, 12)
		class(objArr, object, nil, nil, 0)
		class(byteArr, object, nil, nil, 0)
		if d >= 1 {
			class(later, object, []hprof.Field{{Name: fieldNext, Type: hprof.Object}}, nil, 4)
		}
		// Nodes: those of 0…9 alive in dump d are d…9+2d (the first d
		// are gone, new ones appear); a node points at the next alive.
		first, last := d, 9+2*d
		for i := first; i <= last; i++ {
			id := uint64(0x2000_0000 + i*0x40)
			name := uint64(0x3000_0000 + i*0x40)
			next := uint64(0)
			if i < last {
				next = id + 0x40
			}
			data := binary.BigEndian.AppendUint32(nil, uint32(next))
			data = binary.BigEndian.AppendUint32(data, uint32(name))
			data = binary.BigEndian.AppendUint32(data, uint32(i*100+d))
			sub(hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: id, ClassID: node, Data: data})
			arr := uint64(0x4000_0000 + i*0x40)
			sub(hprof.SubRecord{Tag: hprof.SubPrimitiveArrayDump, ID: arr, Length: uint32(5 + i), ElemType: hprof.Byte})
			sub(hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: name, ClassID: str8, Data: binary.BigEndian.AppendUint32(nil, uint32(arr))})
		}
		all := []uint64{}
		for i := first; i <= last; i += 2 {
			all = append(all, uint64(0x2000_0000+i*0x40))
		}
		sub(hprof.SubRecord{Tag: hprof.SubObjectArrayDump, ID: 0x5000_0000, ClassID: objArr, Elements: all})
		if d >= 1 {
			sub(hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: uint64(0x6000_0000 + d*0x40), ClassID: later,
				Data: binary.BigEndian.AppendUint32(nil, uint32(0x2000_0000+first*0x40))})
		}
		sub(hprof.SubRecord{Tag: hprof.SubRootJNIGlobal, ID: 0x5000_0000, JNIRef: 0x9000})
		for _, c := range []uint64{object, str8, node, objArr, byteArr} {
			sub(hprof.SubRecord{Tag: hprof.SubRootStickyClass, ID: c})
		}
		if err := hw.EndHeapDump(); err != nil {
			return err
		}
		if err := hw.WriteRecord(hprof.TagHeapDumpEnd, uint32(d*1000), nil); err != nil {
			return err
		}
	}
	return hw.Flush()
}

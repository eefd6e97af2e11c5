package apkstrings

import (
	"encoding/binary"
	"fmt"

	"github.com/heapcrunch/heapcrunch/names"
)

// Constant pool tags of the Java class file format (JVMS §4.4).
const (
	cpUtf8               = 1
	cpInteger            = 3
	cpFloat              = 4
	cpLong               = 5
	cpDouble             = 6
	cpClass              = 7
	cpString             = 8
	cpFieldref           = 9
	cpMethodref          = 10
	cpInterfaceMethodref = 11
	cpNameAndType        = 12
	cpMethodHandle       = 15
	cpMethodType         = 16
	cpDynamic            = 17
	cpInvokeDynamic      = 18
	cpModule             = 19
	cpPackage            = 20
)

// ReadClass emits every CONSTANT_Utf8 of a Java class file's constant pool, in
// pool order, decoded from modified UTF-8 to valid UTF-8 as [ReadDEX] does.
// These hold the class's own name, the names and descriptors of its fields and
// methods, the classes and members it refers to, generic signatures and string
// literals. Every constant pool tag up to Java 21 is understood (Long and
// Double take two slots). ReadClass returns the number of strings emitted.
// Malformed input is reported as a *FormatError; the strings emitted before
// the problem was found stay emitted and counted.
func ReadClass(data []byte, emit func(string)) (int, error) {
	if len(data) < 10 {
		return 0, formatErr(int64(len(data)), fmt.Sprintf("truncated class file header (%d bytes)", len(data)))
	}
	if m := binary.BigEndian.Uint32(data); m != 0xCAFEBABE {
		return 0, formatErr(0, fmt.Sprintf("bad class file magic 0x%08X", m))
	}
	cpCount := int(binary.BigEndian.Uint16(data[8:]))
	p := 10
	n := 0
	for i := 1; i < cpCount; i++ {
		if p >= len(data) {
			return n, formatErr(int64(p), fmt.Sprintf("constant pool truncated at entry %d of %d", i, cpCount-1))
		}
		tag := data[p]
		size := 0
		switch tag {
		case cpUtf8:
			if len(data)-p < 3 {
				return n, formatErr(int64(p), fmt.Sprintf("constant pool truncated at entry %d of %d", i, cpCount-1))
			}
			l := int(binary.BigEndian.Uint16(data[p+1:]))
			if len(data)-p-3 < l {
				return n, formatErr(int64(p), fmt.Sprintf("CONSTANT_Utf8 #%d of %d bytes runs past the end", i, l))
			}
			emit(string(names.Normalize(data[p+3 : p+3+l])))
			n++
			p += 3 + l
			continue
		case cpClass, cpString, cpMethodType, cpModule, cpPackage:
			size = 3
		case cpMethodHandle:
			size = 4
		case cpInteger, cpFloat, cpFieldref, cpMethodref, cpInterfaceMethodref,
			cpNameAndType, cpDynamic, cpInvokeDynamic:
			size = 5
		case cpLong, cpDouble:
			size = 9
			i++ // takes two slots
		default:
			return n, formatErr(int64(p), fmt.Sprintf("unknown constant pool tag %d at entry %d", tag, i))
		}
		if len(data)-p < size {
			return n, formatErr(int64(p), fmt.Sprintf("constant pool truncated at entry %d of %d", i, cpCount-1))
		}
		p += size
	}
	return n, nil
}

package heapstat

import (
	"encoding/binary"
	"strings"
	"unicode/utf16"

	"github.com/heapcrunch/heapcrunch/hprof"
)

// EnumNames returns, for each enum constant of the dump in data, the text
// of its name (java.lang.Enum.name) as LeakCanary's Shark reads a String
// (HeapInstance.readAsJavaString: an int count of 0 is the empty string,
// a char array is cut to offset and count where String has both, a byte
// array is read as UTF-8), keyed by "Class.FIELD": the enum class's name
// and that of the static field that holds the constant. A constant is the
// value of a static field of a direct subclass of java.lang.Enum that is
// an instance of that class or of a subclass of it.
func EnumNames(data []byte) (map[string]string, error) {
	all, err := EnumStrings(data)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, s := range all {
		out[k] = s.Text
	}
	return out, nil
}

// EnumString is an enum constant's name String: its text as Shark reads
// it, and the values of its primitive fields (count, offset, hash, coder:
// those of its layout) by name.
type EnumString struct {
	Text   string
	Fields map[string]uint64
}

// EnumStrings returns the name String of each enum constant of the dump
// in data, keyed as EnumNames keys them.
func EnumStrings(data []byte) (map[string]EnumString, error) {
	ix, err := newIndex(data)
	if err != nil {
		return nil, err
	}
	inst, arrays, err := instancesAndTexts(data)
	if err != nil {
		return nil, err
	}
	out := map[string]EnumString{}
	for id, c := range ix.classes {
		if ix.className(c.Super) != "java.lang.Enum" && ix.className(c.Super) != "java/lang/Enum" {
			continue
		}
		for _, f := range c.Statics {
			o, ok := inst[f.Value]
			if f.Type != hprof.Object || !ok || !ix.below(o.ClassID, id) {
				continue
			}
			if name, ok := ix.field(o, "name"); ok {
				out[ix.className(id)+"."+ix.strs[f.Name]] = ix.stringOf(inst[name], arrays)
			}
		}
	}
	return out, nil
}

// MainThreadName returns the name String of an Android app's main thread
// in the dump in data, the thread of android.os.Looper.sMainLooper
// (Looper.mThread's java.lang.Thread.name), as EnumStrings gives a
// constant's; ok false if the dump has no such chain (a JDK's).
func MainThreadName(data []byte) (name EnumString, ok bool, err error) {
	return StaticString(data, "android.os.Looper", "sMainLooper", "mThread", "name")
}

// ProcessName returns the String of an Android app's process name in the
// dump in data, as LeakCanary's Shark reads it for its metadata:
// ActivityThread.sCurrentActivityThread.mBoundApplication.appInfo.processName;
// ok false if the dump has no such chain.
func ProcessName(data []byte) (name EnumString, ok bool, err error) {
	return StaticString(data, "android.app.ActivityThread", "sCurrentActivityThread", "mBoundApplication", "appInfo", "processName")
}

// StaticString returns the String that static field static of class
// class (named with dots; slashes match too) refers to in the dump in
// data, or that the instance fields of path lead to from there, each of
// the object the one before refers to, as EnumStrings gives a constant's;
// ok false if there is none.
func StaticString(data []byte, class, static string, path ...string) (str EnumString, ok bool, err error) {
	ix, err := newIndex(data)
	if err != nil {
		return EnumString{}, false, err
	}
	inst, arrays, err := instancesAndTexts(data)
	if err != nil {
		return EnumString{}, false, err
	}
	for id, c := range ix.classes {
		if n := ix.className(id); n != class && n != strings.ReplaceAll(class, ".", "/") {
			continue
		}
		for _, f := range c.Statics {
			if f.Type != hprof.Object || ix.strs[f.Name] != static {
				continue
			}
			o := inst[f.Value]
			for _, name := range path {
				o = ix.referent(o, name, inst)
			}
			if o != nil {
				return ix.stringOf(o, arrays), true, nil
			}
		}
	}
	return EnumString{}, false, nil
}

// referent returns the instance of inst that field name of instance o
// refers to; nil if there is none or o is nil.
func (ix *index) referent(o *hprof.SubRecord, name string, inst map[uint64]*hprof.SubRecord) *hprof.SubRecord {
	if o == nil {
		return nil
	}
	if v, ok := ix.field(o, name); ok {
		return inst[v]
	}
	return nil
}

// stringOf returns String s's text as Shark reads it and its primitive
// fields (none for a nil s).
func (ix *index) stringOf(s *hprof.SubRecord, arrays map[uint64]*hprof.SubRecord) EnumString {
	str := EnumString{Text: ix.javaString(s, arrays), Fields: map[string]uint64{}}
	if s == nil {
		return str
	}
	ix.fields(s, func(n uint64, t hprof.BasicType, v uint64) {
		if t != hprof.Object {
			str.Fields[ix.strs[n]] = v
		}
	})
	return str
}

// instancesAndTexts returns the instances of the dump in data and its
// char and byte arrays, by ID (copies).
func instancesAndTexts(data []byte) (inst, arrays map[uint64]*hprof.SubRecord, err error) {
	inst, arrays = map[uint64]*hprof.SubRecord{}, map[uint64]*hprof.SubRecord{}
	err = walk(data, true, func(_ hprof.Record, _ *hprof.Reader, s *hprof.SubRecord) error {
		switch {
		case s == nil:
		case s.Tag == hprof.SubInstanceDump:
			inst[s.ID] = &hprof.SubRecord{Tag: s.Tag, ID: s.ID, ClassID: s.ClassID, Data: append([]byte(nil), s.Data...)}
		case s.Tag == hprof.SubPrimitiveArrayDump && (s.ElemType == hprof.Char || s.ElemType == hprof.Byte):
			arrays[s.ID] = &hprof.SubRecord{Tag: s.Tag, ID: s.ID, ElemType: s.ElemType, Length: s.Length, Data: append([]byte(nil), s.Data...)}
		}
		return nil
	})
	return inst, arrays, err
}

// below reports whether class k is class top or one of its subclasses.
func (ix *index) below(k, top uint64) bool {
	for n := 0; k != 0 && n <= len(ix.classes); n++ {
		if k == top {
			return true
		}
		c, ok := ix.classes[k]
		if !ok {
			return false
		}
		k = c.Super
	}
	return false
}

// field returns the value of the first field called name of instance s,
// its own class's fields first (fields).
func (ix *index) field(s *hprof.SubRecord, name string) (v uint64, ok bool) {
	ix.fields(s, func(n uint64, _ hprof.BasicType, value uint64) {
		if !ok && ix.strs[n] == name {
			v, ok = value, true
		}
	})
	return v, ok
}

// javaString returns the text of String s as Shark reads it, or "" for
// none.
func (ix *index) javaString(s *hprof.SubRecord, arrays map[uint64]*hprof.SubRecord) string {
	if s == nil || ix.className(s.ClassID) != "java.lang.String" && ix.className(s.ClassID) != "java/lang/String" {
		return ""
	}
	count, hasCount := ix.field(s, "count")
	if hasCount && int32(count) == 0 {
		return ""
	}
	v, _ := ix.field(s, "value")
	a := arrays[v]
	switch {
	case a == nil:
		return ""
	case a.ElemType == hprof.Byte:
		return string(a.Data)
	}
	chars := make([]uint16, len(a.Data)/2)
	for i := range chars {
		chars[i] = binary.BigEndian.Uint16(a.Data[2*i:])
	}
	if off, ok := ix.field(s, "offset"); ok && hasCount {
		from := min(int(int32(off)), len(chars))
		to := min(from+int(int32(count)), len(chars))
		chars = chars[max(from, 0):max(to, from, 0)]
	}
	return string(utf16.Decode(chars))
}

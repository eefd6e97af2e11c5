package decrunch

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
)

// mainThreadDump returns an HPROF of an Android app's main thread on the
// String layout of flavour f: android.os.Looper.sMainLooper, its thread
// (Looper.mThread), named name, the name's String and its array, at the
// IDs of ids (Looper, thread, String, array), and a second thread, not
// the main one, named "main" too.
func mainThreadDump(t *testing.T, f enumFlavour, name string, ids [4]uint64) []byte {
	t.Helper()
	d := newSmallDump(t)
	const object, stringC, thread, looper, build = 0x1000, 0x1010, 0x1020, 0x1030, 0x1040
	d.loadClasses([]loadedClass{{object, "java.lang.Object"}, {stringC, "java.lang.String"}, {thread, "java.lang.Thread"},
		{looper, "android.os.Looper"}, {build, "android.os.Build$VERSION"}})
	must(t, d.w.BeginHeapDump(hprof.TagHeapDump, 0))
	d.platform(f, object, stringC, build)
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: thread, Super: object, InstanceSize: 8,
		Fields: []hprof.Field{{Name: d.str("name"), Type: hprof.Object}, {Name: d.str("priority"), Type: hprof.Int}}}})
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: looper, Super: object, InstanceSize: 4,
		Statics: []hprof.StaticField{{Name: d.str("sMainLooper"), Type: hprof.Object, Value: ids[0]}},
		Fields:  []hprof.Field{{Name: d.str("mThread"), Type: hprof.Object}}}})
	arr, s := f.stringOf(d.enc, name, false, ids[2], ids[3], stringC)
	other, otherS := f.stringOf(d.enc, "main", false, 0x5010, 0x5018, stringC)
	d.objects([]hprof.SubRecord{arr, s, other, otherS,
		{Tag: hprof.SubInstanceDump, ID: ids[0], ClassID: looper, Data: d.enc.AppendID(nil, ids[1])},
		{Tag: hprof.SubInstanceDump, ID: ids[1], ClassID: thread, Data: binary.BigEndian.AppendUint32(d.enc.AppendID(nil, ids[2]), 5)},
		{Tag: hprof.SubInstanceDump, ID: 0x5000, ClassID: thread, Data: binary.BigEndian.AppendUint32(d.enc.AppendID(nil, 0x5010), 5)},
	})
	d.sub(hprof.SubRecord{Tag: hprof.SubRootStickyClass, ID: looper})
	d.sub(hprof.SubRecord{Tag: hprof.SubRootThreadObject, ID: ids[1], Thread: 1})
	d.sub(hprof.SubRecord{Tag: hprof.SubRootThreadObject, ID: 0x5000, Thread: 2})
	return d.end()
}

// must fails t on an error.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestMainThreadName: on the String layouts of a JDK, Dalvik and ART
// before and after Android 8 (enumFlavours), with the Looper, the thread,
// its name String and the String's array in each order, the name of the
// thread of android.os.Looper.sMainLooper reads "main" after a round trip
// with defaults, its count (where String has one) as the VM gave it, and
// not another thread's, named "main" too; a main thread of another length
// of name gets no text. (One the app renamed to another name of 4 letters
// would read "main": the file holds no more than the length.)
func TestMainThreadName(t *testing.T) {
	orders := map[string][4]uint64{
		"ahead":  {0x2000, 0x2100, 0x2200, 0x2300}, // Looper, thread, String, array
		"behind": {0x2300, 0x2200, 0x2100, 0x2000}, // each behind what refers to it
		"mixed":  {0x2300, 0x2000, 0x2100, 0x2400}, // the thread and its String behind the Looper, the array ahead
	}
	for _, f := range enumFlavours {
		for order, ids := range orders {
			for _, name := range []string{"main", "ui"} {
				t.Run(f.name+"/"+order+"/"+name, func(t *testing.T) {
					src := mainThreadDump(t, f, name, ids)
					want, ok, err := heapstat.MainThreadName(src)
					if err != nil || !ok || want.Text != name {
						t.Fatalf("the original's main thread name: %q, %v, %v", want.Text, ok, err)
					}
					out, st := userFlow(t, src, crunch.Options{})
					got, ok, err := heapstat.MainThreadName(out)
					if err != nil || !ok {
						t.Fatalf("the round trip's main thread name: %v, %v", ok, err)
					}
					if name == "main" {
						if got.Text != "main" || got.Fields["count"] != want.Fields["count"] || st.ThreadNames != 1 {
							t.Errorf("%q (count %d), %d written; want %q (count %d), 1", got.Text, got.Fields["count"], st.ThreadNames, want.Text, want.Fields["count"])
						}
					} else if g := bytes.Trim([]byte(got.Text), "\x00"); len(g) != 0 || got.Fields["count"] != 0 || st.ThreadNames != 0 {
						t.Errorf("%q (count %d), %d written; want no text", got.Text, got.Fields["count"], st.ThreadNames)
					}
					if st.EnumNames != 0 {
						t.Errorf("%d enum names written, want 0", st.EnumNames)
					}
				})
			}
		}
	}
}

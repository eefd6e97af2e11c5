package decrunch

import (
	"bytes"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
)

// processNameDump returns an HPROF of an Android app's process name on
// the String layout of flavour f: android.app.ActivityThread's static
// sCurrentActivityThread, its mBoundApplication (an
// ActivityThread$AppBindData), the AppBindData's appInfo (an
// android.content.pm.ApplicationInfo), whose processName is name, the
// name's String and its array, at the IDs of ids in that order; and
// another ApplicationInfo, not the app's (com.example.Holder.sInfo), whose
// processName is name too.
func processNameDump(t *testing.T, f enumFlavour, name string, ids [5]uint64) []byte {
	t.Helper()
	d := newSmallDump(t)
	const object, stringC, at, bind, info, build, holder = 0x1000, 0x1010, 0x1020, 0x1030, 0x1040, 0x1050, 0x1060
	d.loadClasses([]loadedClass{{object, "java.lang.Object"}, {stringC, "java.lang.String"}, {at, "android.app.ActivityThread"},
		{bind, "android.app.ActivityThread$AppBindData"}, {info, "android.content.pm.ApplicationInfo"}, {build, "android.os.Build$VERSION"},
		{holder, "com.example.Holder"}})
	must(t, d.w.BeginHeapDump(hprof.TagHeapDump, 0))
	d.platform(f, object, stringC, build)
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: at, Super: object, InstanceSize: 8,
		Statics: []hprof.StaticField{{Name: d.str("sCurrentActivityThread"), Type: hprof.Object, Value: ids[0]}},
		Fields:  []hprof.Field{{Name: d.str("mServices"), Type: hprof.Object}, {Name: d.str("mBoundApplication"), Type: hprof.Object}}}})
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: bind, Super: object, InstanceSize: 8,
		Fields: []hprof.Field{{Name: d.str("processName"), Type: hprof.Object}, {Name: d.str("appInfo"), Type: hprof.Object}}}})
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: info, Super: object, InstanceSize: 8,
		Fields: []hprof.Field{{Name: d.str("packageName"), Type: hprof.Object}, {Name: d.str("processName"), Type: hprof.Object}}}})
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: holder, Super: object,
		Statics: []hprof.StaticField{{Name: d.str("sInfo"), Type: hprof.Object, Value: 0x5000}}}})
	arr, s := f.stringOf(d.enc, name, false, ids[3], ids[4], stringC)
	other, otherS := f.stringOf(d.enc, name, false, 0x5010, 0x5018, stringC)
	refs := func(a, b uint64) []byte { return d.enc.AppendID(d.enc.AppendID(nil, a), b) }
	d.objects([]hprof.SubRecord{arr, s, other, otherS,
		{Tag: hprof.SubInstanceDump, ID: ids[0], ClassID: at, Data: refs(0, ids[1])},
		{Tag: hprof.SubInstanceDump, ID: ids[1], ClassID: bind, Data: refs(ids[3], ids[2])},
		{Tag: hprof.SubInstanceDump, ID: ids[2], ClassID: info, Data: refs(ids[3], ids[3])},
		{Tag: hprof.SubInstanceDump, ID: 0x5000, ClassID: info, Data: refs(0x5010, 0x5010)},
	})
	d.sub(hprof.SubRecord{Tag: hprof.SubRootStickyClass, ID: at})
	d.sub(hprof.SubRecord{Tag: hprof.SubRootStickyClass, ID: holder})
	return d.end()
}

// TestProcessName: on the String layouts of a JDK, Dalvik and ART before
// and after Android 8 (enumFlavours), with the ActivityThread, its
// AppBindData, the ApplicationInfo, the process name's String and the
// String's array in each order, the app's process name (Shark's
// ActivityThread.sCurrentActivityThread.mBoundApplication.appInfo.processName)
// reads as on the original after a round trip whose BMD has the label
// ApplicationInfo.processName, or whose decrunch is given it
// (Options.Labels), its count (where String has one) as the VM gave it;
// a label of another length, or none, writes nothing, and another
// ApplicationInfo's processName gets no text.
func TestProcessName(t *testing.T) {
	const name = "com.example.app:sync"
	orders := map[string][5]uint64{
		"ahead":  {0x2000, 0x2100, 0x2200, 0x2300, 0x2400}, // each ahead of what it refers to
		"behind": {0x2400, 0x2300, 0x2200, 0x2100, 0x2000}, // each behind
		"mixed":  {0x2200, 0x2000, 0x2400, 0x2100, 0x2300}, // the AppBindData and the String behind what refers to them
	}
	cases := []struct {
		name   string
		labels []string // crunch's
		server []string // decrunch's (Options.Labels)
		text   bool     // the text written back
	}{
		{"label", []string{"app=com.example.app", "ApplicationInfo.processName=" + name}, nil, true},
		{"another process", []string{"ApplicationInfo.processName=com.example.app"}, nil, false},
		{"none", nil, nil, false},
		{"the server's", nil, []string{"ApplicationInfo.processName=" + name}, true},
	}
	for _, f := range enumFlavours {
		for order, ids := range orders {
			src := processNameDump(t, f, name, ids)
			want, ok, err := heapstat.ProcessName(src)
			if err != nil || !ok || want.Text != name {
				t.Fatalf("the original's process name: %q, %v, %v", want.Text, ok, err)
			}
			for _, c := range cases {
				t.Run(f.name+"/"+order+"/"+c.name, func(t *testing.T) {
					out, st := decrunchBytes(t, crunchBytes(t, src, crunch.Options{Labels: c.labels}), Options{Names: appNameTable(t, src), Labels: c.server})
					got, ok, err := heapstat.ProcessName(out)
					if err != nil || !ok {
						t.Fatalf("the round trip's process name: %v, %v", ok, err)
					}
					written := uint64(0)
					if c.text {
						written = 1
						if got.Text != name || got.Fields["count"] != want.Fields["count"] {
							t.Errorf("%q (count %d), want %q (count %d)", got.Text, got.Fields["count"], name, want.Fields["count"])
						}
					} else if g := bytes.Trim([]byte(got.Text), "\x00"); len(g) != 0 || got.Fields["count"] != 0 {
						t.Errorf("%q (count %d), want no text", got.Text, got.Fields["count"])
					}
					other, ok, err := heapstat.StaticString(out, "com.example.Holder", "sInfo", "processName")
					if err != nil || !ok || len(bytes.Trim([]byte(other.Text), "\x00")) != 0 {
						t.Errorf("another ApplicationInfo's processName: %q, %v, %v; want no text", other.Text, ok, err)
					}
					if st.ProcessNames != written || st.BuildTexts != 0 || st.ThreadNames != 0 || st.EnumNames != 0 {
						t.Errorf("%d process names, %d Build texts, %d thread names, %d enum names written; want %d, 0, 0, 0",
							st.ProcessNames, st.BuildTexts, st.ThreadNames, st.EnumNames, written)
					}
				})
			}
		}
	}
}

package decrunch

import (
	"bytes"
	"testing"

	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
)

// buildDump returns an HPROF of android.os.Build on the String layout of
// flavour f: its statics MANUFACTURER and ID and their Strings, each
// String at s and its array at s+8 (the array ahead of its String where
// behind is false, behind it where true), and another class with a
// static MANUFACTURER String, "samsung" too.
func buildDump(t *testing.T, f enumFlavour, manufacturer, id string, behind bool) []byte {
	t.Helper()
	d := newSmallDump(t)
	const object, stringC, build, version, other = 0x1000, 0x1010, 0x1020, 0x1030, 0x1040
	const manuS, idS, otherS = 0x3000, 0x3100, 0x3200
	d.loadClasses([]loadedClass{{object, "java.lang.Object"}, {stringC, "java.lang.String"}, {build, "android.os.Build"},
		{version, "android.os.Build$VERSION"}, {other, "com.example.Build"}})
	must(t, d.w.BeginHeapDump(hprof.TagHeapDump, 0))
	d.platform(f, object, stringC, version)
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: build, Super: object,
		Statics: []hprof.StaticField{{Name: d.str("MANUFACTURER"), Type: hprof.Object, Value: manuS}, {Name: d.str("ID"), Type: hprof.Object, Value: idS}}}})
	d.sub(hprof.SubRecord{Tag: hprof.SubClassDump, Class: hprof.ClassDump{ID: other, Super: object,
		Statics: []hprof.StaticField{{Name: d.str("MANUFACTURER"), Type: hprof.Object, Value: otherS}}}})
	arr := func(s uint64) uint64 {
		if behind {
			return s - 8
		}
		return s + 8
	}
	var objs []hprof.SubRecord
	for _, s := range []struct {
		id   uint64
		text string
	}{{manuS, manufacturer}, {idS, id}, {otherS, manufacturer}} {
		a, str := f.stringOf(d.enc, s.text, false, s.id, arr(s.id), stringC)
		objs = append(objs, a, str)
	}
	d.objects(objs)
	d.sub(hprof.SubRecord{Tag: hprof.SubRootStickyClass, ID: build})
	d.sub(hprof.SubRecord{Tag: hprof.SubRootStickyClass, ID: other})
	return d.end()
}

// TestBuildTexts: on the String layouts of a JDK, Dalvik and ART before
// and after Android 8 (enumFlavours), with each array ahead of its String
// or behind it, the texts of android.os.Build.MANUFACTURER and Build.ID
// read as on the original after a round trip whose BMD has the labels
// Build.MANUFACTURER and Build.ID (what the app passes crunch on the
// device), or whose decrunch is given them (Options.Labels, over the
// file's), each String's count (where String has one) as the VM gave it;
// a label of another length than the dump's text, or none, writes nothing
// into that String, and another class's static of the same name gets no
// text.
func TestBuildTexts(t *testing.T) {
	const manufacturer, id = "samsung", "TP1A.220624.014"
	cases := []struct {
		name         string
		labels       []string // crunch's
		server       []string // decrunch's (Options.Labels)
		manu, idText bool     // the texts written back
	}{
		{"both", []string{"app=com.example", "Build.MANUFACTURER=" + manufacturer, "Build.ID=" + id}, nil, true, true},
		{"manufacturer", []string{"Build.MANUFACTURER=" + manufacturer}, nil, true, false},
		{"another device", []string{"Build.MANUFACTURER=Google", "Build.ID=" + id}, nil, false, true},
		{"none", nil, nil, false, false},
		{"the server's", nil, []string{"Build.MANUFACTURER=" + manufacturer, "Build.ID=" + id}, true, true},
		{"the server's over the file's", []string{"Build.MANUFACTURER=Google"}, []string{"Build.MANUFACTURER=" + manufacturer}, true, false},
		{"the file's over none", []string{"Build.ID=" + id}, []string{"Build.MANUFACTURER=" + manufacturer}, true, true},
	}
	for _, f := range enumFlavours {
		for _, behind := range []bool{false, true} {
			src := buildDump(t, f, manufacturer, id, behind)
			orig := map[string]heapstat.EnumString{}
			for _, static := range []string{"MANUFACTURER", "ID"} {
				s, ok, err := heapstat.StaticString(src, "android.os.Build", static)
				if err != nil || !ok || s.Text != map[string]string{"MANUFACTURER": manufacturer, "ID": id}[static] {
					t.Fatalf("the original's Build.%s: %q, %v, %v", static, s.Text, ok, err)
				}
				orig[static] = s
			}
			for _, c := range cases {
				t.Run(f.name+"/"+map[bool]string{false: "ahead", true: "behind"}[behind]+"/"+c.name, func(t *testing.T) {
					out, st := decrunchBytes(t, crunchBytes(t, src, crunch.Options{Labels: c.labels}), Options{Names: appNameTable(t, src), Labels: c.server})
					written := uint64(0)
					for static, want := range map[string]bool{"MANUFACTURER": c.manu, "ID": c.idText} {
						got, ok, err := heapstat.StaticString(out, "android.os.Build", static)
						if err != nil || !ok {
							t.Fatalf("the round trip's Build.%s: %v, %v", static, ok, err)
						}
						if want {
							written++
							if got.Text != orig[static].Text || got.Fields["count"] != orig[static].Fields["count"] {
								t.Errorf("Build.%s %q (count %d), want %q (count %d)", static, got.Text, got.Fields["count"], orig[static].Text, orig[static].Fields["count"])
							}
						} else if g := bytes.Trim([]byte(got.Text), "\x00"); len(g) != 0 || got.Fields["count"] != 0 {
							t.Errorf("Build.%s %q (count %d), want no text", static, got.Text, got.Fields["count"])
						}
					}
					other, ok, err := heapstat.StaticString(out, "com.example.Build", "MANUFACTURER")
					if err != nil || !ok || len(bytes.Trim([]byte(other.Text), "\x00")) != 0 {
						t.Errorf("another class's MANUFACTURER: %q, %v, %v; want no text", other.Text, ok, err)
					}
					if st.BuildTexts != written || st.EnumNames != 0 || st.ThreadNames != 0 {
						t.Errorf("%d Build texts, %d enum names, %d thread names written; want %d, 0, 0", st.BuildTexts, st.EnumNames, st.ThreadNames, written)
					}
				})
			}
		}
	}
}

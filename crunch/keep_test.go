package crunch_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/bmdtest"
)

// keepDump is an HPROF dump (4-byte IDs) of one app class (class loader
// 0x9000) named name, with the static fields statics (long, value 1234)
// and the instance fields fields (long), each named by its own STRING,
// and an instance of it (every field 5678); and, when array is not "",
// an array class of that name (no CLASS DUMP needed: its LOAD CLASS).
func keepDump(t *testing.T, name, array string, statics, fields []string) []byte {
	t.Helper()
	return loaderDump(t, 0x9000, name, array, statics, fields)
}

// loaderDump is keepDump with the class loaded by loader (0: the boot
// class loader).
func loaderDump(t *testing.T, loader uint64, name, array string, statics, fields []string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := newDumpWriter(t, &buf, 4)
	enc := w.Encoder()
	id := uint64(0x100)
	str := func(s string) uint64 {
		id += 8
		must(t, w.WriteRecord(hprof.TagString, 0, enc.AppendString(nil, id, []byte(s))))
		return id
	}
	must(t, w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 1, ClassID: 0x1000, Name: str(name)})))
	if array != "" {
		must(t, w.WriteRecord(hprof.TagLoadClass, 0, enc.AppendLoadClass(nil, hprof.LoadClass{Serial: 2, ClassID: 0x1100, Name: str(array)})))
	}
	cd := hprof.ClassDump{ID: 0x1000, Loader: loader}
	var data []byte
	for _, s := range statics {
		cd.Statics = append(cd.Statics, hprof.StaticField{Name: str(s), Type: hprof.Long, Value: 1234})
	}
	for _, f := range fields {
		cd.Fields = append(cd.Fields, hprof.Field{Name: str(f), Type: hprof.Long})
		data = append(data, 0, 0, 0, 0, 0, 0, 0x16, 0x2e)
	}
	cd.InstanceSize = uint32(len(data))
	must(t, w.BeginHeapDump(hprof.TagHeapDumpSegment, 0))
	must(t, w.WriteSub(&hprof.SubRecord{Tag: hprof.SubClassDump, ID: 0x1000, Class: cd}))
	must(t, w.WriteSub(&hprof.SubRecord{Tag: hprof.SubInstanceDump, ID: 0x2000, ClassID: 0x1000, Data: data}))
	must(t, w.EndHeapDump())
	must(t, w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil))
	must(t, w.Flush())
	return buf.Bytes()
}

// keepRecords crunches dump with opt and returns the records of the BMD
// file (copied: CLASS records with their definitions, clear strings with
// their texts).
func keepRecords(t *testing.T, dump []byte, opt crunch.Options) []bmd.Record {
	t.Helper()
	var out bytes.Buffer
	if _, err := crunch.Crunch(bytes.NewReader(dump), &out, opt); err != nil {
		t.Fatal(err)
	}
	var recs []bmd.Record
	bmdtest.Records(t, out.Bytes(), false, func(rec *bmd.Record) {
		c := *rec
		c.Text = bytes.Clone(rec.Text)
		c.Def.Statics = append([]bmd.Static(nil), rec.Def.Statics...)
		c.Def.Fields = append([]bmd.Field(nil), rec.Def.Fields...)
		c.Values = append([]uint64(nil), rec.Values...)
		recs = append(recs, c)
	})
	return recs
}

// TestPlaceholderStaysHashed: a name that is decrunch's placeholder for a
// name it did not recover is written as a hashed entry of length 0 with
// the hash it carries, and an array name of one as an ARRAY NAME of it,
// whatever the options, --keep-strings included (spec/bmd.md §5.2, §7.1).
func TestPlaceholderStaysHashed(t *testing.T) {
	const ph = "unknown$9f11ff87b1bddd4f"
	dump := keepDump(t, ph, ph+"[]", nil, nil)
	for _, opt := range []crunch.Options{{}, {KeepStrings: true}} {
		var hashed, arrays, clear int
		for _, rec := range keepRecords(t, dump, opt) {
			switch rec.Kind {
			case bmd.KindHashedString:
				hashed++
				if rec.Length != 0 || rec.Hash != 0x9f11ff87b1bddd4f {
					t.Errorf("%+v: hashed entry of length %d, hash %x", opt, rec.Length, rec.Hash)
				}
			case bmd.KindArrayName:
				arrays++
			case bmd.KindString:
				clear++
			}
		}
		if hashed != 1 || arrays != 1 || clear != 0 {
			t.Errorf("%+v: %d hashed entries, %d array names, %d clear strings; want 1, 1, 0", opt, hashed, arrays, clear)
		}
	}
}

// TestProfileKeepsStatics: --profile leak keeps the value of a static
// field the profile lists for its class even where the class declares no
// instance field of that name (leakcanary.KeyedWeakReference's static
// heapDumpUptimeMillis), and the instance fields it lists; not the
// others (spec/bmd.md §7.3).
func TestProfileKeepsStatics(t *testing.T) {
	dump := keepDump(t, "leakcanary.KeyedWeakReference", "", []string{"heapDumpUptimeMillis", "other"}, []string{"watchUptimeMillis", "key2"})
	for _, rec := range keepRecords(t, dump, crunch.Options{Profile: "leak"}) {
		switch rec.Kind {
		case bmd.KindClass:
			s := rec.Def.Statics
			if len(s) != 2 || !s[0].Kept || s[0].Value != 1234 || s[1].Kept {
				t.Errorf("statics %+v: want heapDumpUptimeMillis kept (1234), other not", s)
			}
			f := rec.Def.Fields
			if len(f) != 2 || !f[0].Kept || f[1].Kept {
				t.Errorf("fields %+v: want watchUptimeMillis kept, key2 not", f)
			}
		case bmd.KindInstance:
			if len(rec.Values) != 2 || rec.Values[0] != 5678 {
				t.Errorf("instance values %v: want watchUptimeMillis 5678", rec.Values)
			}
		}
	}
}

// TestLifecycleFlags: a default crunch keeps the lifecycle flags and the
// platform sizes (spec/bmd.md §7.3: Activity.mDestroyed, ArrayList.size
// and the others) in instances of a framework class, one of the boot class
// loader, and in no app class of the same name; the other primitive fields
// of the class keep no value.
func TestLifecycleFlags(t *testing.T) {
	classes := map[string][]string{}
	for _, f := range slices.Concat(crunch.LifecycleFlags, crunch.PlatformSizes) {
		classes[f.Class] = append(classes[f.Class], f.Field)
	}
	if len(classes) < 6 {
		t.Fatalf("lifecycle flags and sizes of %d classes, want Activity, Window, MessageQueue, View, ArrayList and NativeAllocationRegistry", len(classes))
	}
	for class, flags := range classes {
		for _, loader := range []uint64{0, 0x9000} {
			kept := loader == 0
			fields := append(slices.Clone(flags), "mSecret")
			recs := keepRecords(t, loaderDump(t, loader, class, "", nil, fields), crunch.Options{})
			found := 0
			for _, rec := range recs {
				switch rec.Kind {
				case bmd.KindClass:
					for i, f := range rec.Def.Fields {
						if want := kept && i < len(flags); f.Kept != want {
							t.Errorf("%s, loader 0x%x: field %d (%s) kept %v, want %v", class, loader, i, fields[i], f.Kept, want)
						}
					}
				case bmd.KindInstance:
					found++
					// A dropped field reads 0, a kept one loaderDump's
					// value of every field.
					want := make([]uint64, len(fields))
					for i := range flags {
						if kept {
							want[i] = 0x162e
						}
					}
					if !slices.Equal(rec.Values, want) {
						t.Errorf("%s, loader 0x%x: instance values %v, want %v", class, loader, rec.Values, want)
					}
				}
			}
			if found != 1 {
				t.Fatalf("%s, loader 0x%x: %d instances, want 1", class, loader, found)
			}
		}
	}
}

// TestLibraryLeakFlags: the leak flags of the libraries an app bundles
// (spec/bmd.md §7.3) keep their values by default in a class of that name,
// whatever its class loader, statics and instance fields; the class's
// other fields, and fields of those names in another class, keep none;
// and their names stay hashed in a class of an app's loader, as the app's
// others.
func TestLibraryLeakFlags(t *testing.T) {
	classes := map[string][]string{}
	for _, f := range crunch.LibraryLeakFlags {
		classes[f.Class] = append(classes[f.Class], f.Field)
	}
	if len(classes) < 3 {
		t.Fatalf("library leak flags of %d classes, want LeakCanary's, Compose's and Mortar's", len(classes))
	}
	for class, flags := range classes {
		for _, c := range []struct {
			name   string
			loader uint64
			kept   bool
		}{{class, 0x9000, true}, {class, 0, true}, {"com.example.Other", 0x9000, false}} {
			statics := append(slices.Clone(flags), "sSecret")
			fields := append(slices.Clone(flags), "mSecret")
			recs := keepRecords(t, loaderDump(t, c.loader, c.name, "", statics, fields), crunch.Options{})
			instances, clear := 0, map[string]bool{}
			for _, rec := range recs {
				switch rec.Kind {
				case bmd.KindString:
					clear[string(rec.Text)] = true
				case bmd.KindClass:
					for i, f := range rec.Def.Statics {
						if want := c.kept && i < len(flags); f.Kept != want || want && f.Value != 1234 || !want && f.Value != 0 {
							t.Errorf("%s, loader 0x%x: static %s kept %v, value %d; want kept %v", c.name, c.loader, statics[i], f.Kept, f.Value, want)
						}
					}
					for i, f := range rec.Def.Fields {
						if want := c.kept && i < len(flags); f.Kept != want {
							t.Errorf("%s, loader 0x%x: field %s kept %v, want %v", c.name, c.loader, fields[i], f.Kept, want)
						}
					}
				case bmd.KindInstance:
					instances++
					want := make([]uint64, len(fields))
					for i := range flags {
						if c.kept {
							want[i] = 0x162e
						}
					}
					if !slices.Equal(rec.Values, want) {
						t.Errorf("%s, loader 0x%x: instance values %v, want %v", c.name, c.loader, rec.Values, want)
					}
				}
			}
			if instances != 1 {
				t.Fatalf("%s, loader 0x%x: %d instances, want 1", c.name, c.loader, instances)
			}
			// A boot class's names are the platform's, in the clear; an
			// app loader's class's are hashed, as the app's.
			for _, name := range append([]string{c.name}, flags...) {
				if clear[name] != (c.loader == 0) {
					t.Errorf("%s, loader 0x%x: %q in the clear %v, want %v", c.name, c.loader, name, clear[name], c.loader == 0)
				}
			}
		}
	}
}

// TestPlatformFactsBootOnly: a platform fact (spec/bmd.md §7.3) is kept
// only in a class of the boot class loader: an app's class of the same
// name keeps no value of its static, by default.
func TestPlatformFactsBootOnly(t *testing.T) {
	for _, c := range []struct {
		loader uint64
		kept   bool
	}{{0, true}, {0x9000, false}} {
		recs := keepRecords(t, loaderDump(t, c.loader, "android.os.Build$VERSION", "", []string{"SDK_INT", "CODENAME"}, nil), crunch.Options{})
		found := false
		for _, rec := range recs {
			if rec.Kind != bmd.KindClass {
				continue
			}
			found = true
			if len(rec.Def.Statics) != 2 {
				t.Fatalf("loader 0x%x: %d statics, want 2", c.loader, len(rec.Def.Statics))
			}
			sdk, other := rec.Def.Statics[0], rec.Def.Statics[1]
			if sdk.Kept != c.kept || c.kept && sdk.Value != 1234 || !c.kept && sdk.Value != 0 {
				t.Errorf("loader 0x%x: SDK_INT kept %v, value %d; want kept %v", c.loader, sdk.Kept, sdk.Value, c.kept)
			}
			if other.Kept || other.Value != 0 {
				t.Errorf("loader 0x%x: CODENAME kept %v, value %d; want dropped", c.loader, other.Kept, other.Value)
			}
		}
		if !found {
			t.Fatalf("loader 0x%x: no CLASS record", c.loader)
		}
	}
}

package crunch

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/bmdtest"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
	"github.com/heapcrunch/heapcrunch/names"
)

// dumpNames is what a test reads of the names of an HPROF dump, by its own
// walk (not crunch's): every STRING text, which of them the dump refers to,
// and which are platform names by the rule of spec/bmd.md §7.1.
type dumpNames struct {
	text       map[uint64]string
	referenced map[uint64]bool
	platform   map[uint64]bool
}

func readDumpNames(t *testing.T, data []byte) *dumpNames {
	t.Helper()
	d := &dumpNames{text: map[uint64]string{}, referenced: map[uint64]bool{}, platform: map[uint64]bool{}}
	type frame struct {
		method, sig, source uint64
		class               uint32
	}
	var frames []frame
	loads := map[uint64]hprof.LoadClass{}
	loaders := map[uint64]uint64{}
	boot := map[uint64]bool{} // field and static name IDs of boot classes
	r, err := hprof.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	dec := hprof.BodyDecoder{IDSize: r.IDSize()}
	for rec, err := range r.Records() {
		if err != nil {
			t.Fatal(err)
		}
		if rec.Tag.IsHeapDump() {
			for s, err := range r.SubRecords() {
				if err != nil {
					t.Fatal(err)
				}
				switch s.Tag {
				case hprof.SubClassDump:
					loaders[s.ID] = s.Class.Loader
					for _, f := range s.Class.Statics {
						d.referenced[f.Name] = true
						boot[f.Name] = boot[f.Name] || s.Class.Loader == 0
					}
					for _, f := range s.Class.Fields {
						d.referenced[f.Name] = true
						boot[f.Name] = boot[f.Name] || s.Class.Loader == 0
					}
				case hprof.SubHeapDumpInfo:
					d.referenced[s.HeapName], d.platform[s.HeapName] = true, true
				}
			}
			continue
		}
		body, err := r.Body()
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Tag {
		case hprof.TagString:
			id, text, err := dec.ParseString(rec, body)
			if err != nil {
				t.Fatal(err)
			}
			if _, dup := d.text[id]; !dup {
				d.text[id] = string(text)
			}
		case hprof.TagLoadClass:
			l, err := dec.ParseLoadClass(rec, body)
			if err != nil {
				t.Fatal(err)
			}
			loads[l.ClassID] = l
			d.referenced[l.Name] = true
		case hprof.TagStackFrame:
			f, err := dec.ParseStackFrame(rec, body)
			if err != nil {
				t.Fatal(err)
			}
			frames = append(frames, frame{f.Method, f.Signature, f.SourceFile, f.Class})
			d.referenced[f.Method], d.referenced[f.Signature], d.referenced[f.SourceFile] = true, true, true
		case hprof.TagStartThread:
			th, err := dec.ParseStartThread(rec, body)
			if err != nil {
				t.Fatal(err)
			}
			d.referenced[th.Name], d.referenced[th.Group], d.referenced[th.ParentGroup] = true, true, true
		}
	}
	for id, b := range boot {
		d.platform[id] = d.platform[id] || b
	}
	bootSerial := map[uint32]bool{}
	for cls, l := range loads {
		if loader, ok := loaders[cls]; ok && loader == 0 {
			d.platform[l.Name] = true
			bootSerial[l.Serial] = true
		}
	}
	for _, f := range frames {
		if bootSerial[f.class] {
			d.platform[f.method], d.platform[f.sig], d.platform[f.source] = true, true, true
		}
	}
	return d
}

// bmdNames reads the string records of a BMD file: the clear texts, and the
// hashes of the hashed names.
func bmdNames(t *testing.T, b []byte) (clear map[string]bool, hashes map[uint64]bool, records uint64) {
	t.Helper()
	clear, hashes = map[string]bool{}, map[uint64]bool{}
	bmdtest.Records(t, b, false, func(rec *bmd.Record) {
		switch rec.Kind {
		case bmd.KindString:
			clear[string(rec.Text)] = true
			records++
		case bmd.KindHashedString:
			hashes[rec.Hash] = true
			records++
		case bmd.KindArrayName:
			records++
		}
	})
	return clear, hashes, records
}

// TestPlatformNames checks the name rule of spec/bmd.md §7.1 on real
// Android and HotSpot dumps: every platform name is in the clear, every
// other name the dump refers to is hashed unless the fixed clear list
// keeps it, and no string that nothing refers to is written, in any form;
// with --hash-platform-names only the fixed list and the platform facts'
// names stay clear.
func TestPlatformNames(t *testing.T) {
	inputs := []string{testutil.Fixture("sample.hprof.gz"), testutil.Fixture("secrets.hprof.gz"),
		testutil.Fixture("libuser/libuser.hprof.gz"),
		filepath.Join(testutil.CorpusDir(t), "android-dalvik-kitkat-dialer.android-hprof")}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src := testutil.ReadAll(t, in)
			d := readDumpNames(t, src)
			var out bytes.Buffer
			if _, err := Crunch(bytes.NewReader(src), &out, Options{}); err != nil {
				t.Fatal(err)
			}
			clear, hashes, records := bmdNames(t, out.Bytes())
			referencedTexts := map[string]bool{}
			nPlatform, nApp := 0, 0
			for id := range d.referenced {
				text, ok := d.text[id]
				if !ok {
					continue
				}
				referencedTexts[text] = true
				switch {
				case d.platform[id]:
					nPlatform++
					if !clear[text] {
						t.Errorf("platform name %q is not in the clear", text)
					}
				case !KeepInClear([]byte(text)):
					nApp++
					if clear[text] && !d.platformText(text) {
						t.Errorf("app name %q is in the clear", text)
					}
				}
			}
			unreferenced := 0
			for id, text := range d.text {
				if d.referenced[id] || referencedTexts[text] {
					continue
				}
				unreferenced++
				if clear[text] || hashes[names.HashString(text)] {
					t.Errorf("unreferenced string %q is in the file", text)
				}
			}
			t.Logf("%d platform names, %d app names, %d unreferenced strings left out; %d string records",
				nPlatform, nApp, unreferenced, records)
			if nPlatform == 0 || nApp == 0 {
				t.Errorf("the dump should have platform and app names")
			}

			out.Reset()
			if _, err := Crunch(bytes.NewReader(src), &out, Options{HashPlatformNames: true}); err != nil {
				t.Fatal(err)
			}
			clear, _, _ = bmdNames(t, out.Bytes())
			for text := range clear {
				if !KeepInClear([]byte(text)) && !factName(text) {
					t.Errorf("--hash-platform-names: %q is in the clear", text)
				}
			}

			// The names that --profile leak and --preserve-class keep stay
			// clear too, and no others.
			const preserved = "java.util.HashMap"
			out.Reset()
			opt := Options{HashPlatformNames: true, Profile: "leak", PreserveClasses: []string{preserved}}
			if _, err := Crunch(bytes.NewReader(src), &out, opt); err != nil {
				t.Fatal(err)
			}
			clear, _, _ = bmdNames(t, out.Bytes())
			optionName := func(text string) bool {
				for _, p := range LeakProfile {
					if text == p.Field || slices.Contains(classNameSpellings(p.Class), text) {
						return true
					}
				}
				return slices.Contains(classNameSpellings(preserved), text)
			}
			kept := 0
			for text := range referencedTexts {
				if optionName(text) {
					kept++
					if !clear[text] {
						t.Errorf("--hash-platform-names with options: %q, which they keep, is not in the clear", text)
					}
				}
			}
			for text := range clear {
				if !KeepInClear([]byte(text)) && !factName(text) && !optionName(text) {
					t.Errorf("--hash-platform-names with options: %q is in the clear", text)
				}
			}
			spellings := classNameSpellings(preserved)
			if !referencedTexts[spellings[0]] && !referencedTexts[spellings[1]] || kept < 2 {
				t.Errorf("%d names that the options keep; want %s and a profile name", kept, preserved)
			}
		})
	}
}

// platformText reports whether some platform name has this text (a name
// shared by the app and the platform is one clear record).
func (d *dumpNames) platformText(text string) bool {
	for id := range d.platform {
		if d.text[id] == text {
			return true
		}
	}
	return false
}

func factName(text string) bool {
	for _, f := range slices.Concat(PlatformFacts, LifecycleFlags, PlatformSizes) {
		if f.Field == text || f.Class == text {
			return true
		}
		for _, s := range classNameSpellings(f.Class) {
			if s == text {
				return true
			}
		}
	}
	return false
}

// TestClearListInSpec: the fixed clear list of spec/bmd.md §7.1 names
// what KeepInClear keeps: the empty name, the primitive names and the JDK
// field names, no more and no fewer.
func TestClearListInSpec(t *testing.T) {
	spec, err := os.ReadFile("../spec/bmd.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(spec)
	i := strings.Index(text, "The fixed clear list")
	j := strings.Index(text[i:], "\n\nEverything else is hashed")
	if i < 0 || j < 0 {
		t.Fatal("spec/bmd.md §7.1 has no fixed clear list")
	}
	var items []string
	for _, it := range strings.Split(text[i:i+j], "\n- ")[1:] {
		items = append(items, strings.Join(strings.Fields(it), " "))
	}
	// ticked returns the `names` of the item that starts with prefix.
	ticked := func(prefix string) map[string]bool {
		for _, it := range items {
			if strings.HasPrefix(it, prefix) {
				set := map[string]bool{}
				for k, s := range strings.Split(it, "`") {
					if k%2 == 1 {
						set[s] = true
					}
				}
				return set
			}
		}
		t.Errorf("§7.1: no item of the fixed clear list starts with %q", prefix)
		return nil
	}
	if !maps.Equal(ticked("the primitive names"), primitiveNames) {
		t.Errorf("§7.1 lists the primitive names %v; KeepInClear keeps %v", ticked("the primitive names"), primitiveNames)
	}
	if !maps.Equal(ticked("the JDK field names"), analyzerFieldNames) {
		t.Errorf("§7.1 lists the field names %v; KeepInClear keeps %v", ticked("the JDK field names"), analyzerFieldNames)
	}
	if KeepInClear(nil) {
		ticked("the empty name")
	}
}

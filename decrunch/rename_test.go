package decrunch

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/apkstrings"
	"github.com/heapcrunch/heapcrunch/crunch"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/heapstat"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// mappingLibUser treats names of the libuser dump as if R8 had given them:
// class org.example.lib.Node "was" com.example.Graph, and so on.
const mappingLibUser = `# compiler: R8
com.example.Graph -> org.example.lib.Node:
    int instances -> instances
    java.lang.String title -> label
    com.example.Graph successor -> next
    long cost -> weight
    12:14:void visit(int) -> a
com.example.App -> LibUser:
    void run(java.lang.String[]) -> main
`

// namesOf reads an HPROF and returns, by class name, its field and static
// names; the method names of its stack frames by class name; and the
// LOAD CLASS names.
func namesOf(t *testing.T, data []byte) (fields map[string][]string, methods map[string][]string, classes map[string]bool) {
	t.Helper()
	strs := map[uint64]string{}
	byObj := map[uint64]string{}
	bySerial := map[uint32]string{}
	fields, methods, classes = map[string][]string{}, map[string][]string{}, map[string]bool{}
	err := heapstat.Walk(data, func(rec hprof.Record, r *hprof.Reader, s *hprof.SubRecord) error {
		if s != nil {
			if s.Tag == hprof.SubClassDump {
				name := byObj[s.Class.ID]
				for _, f := range s.Class.Statics {
					fields[name] = append(fields[name], "static "+strs[f.Name])
				}
				for _, f := range s.Class.Fields {
					fields[name] = append(fields[name], strs[f.Name])
				}
			}
			return nil
		}
		dec := hprof.BodyDecoder{IDSize: r.IDSize()}
		body, err := r.Body()
		if err != nil {
			return err
		}
		switch rec.Tag {
		case hprof.TagString:
			id, text, err := dec.ParseString(rec, body)
			if err != nil {
				return err
			}
			strs[id] = string(text)
		case hprof.TagLoadClass:
			lc, err := dec.ParseLoadClass(rec, body)
			if err != nil {
				return err
			}
			name, ok := strs[lc.Name]
			name = strings.ReplaceAll(name, "/", ".") // HotSpot 9+ writes slashes
			if !ok {
				return fmt.Errorf("LOAD CLASS names string 0x%x, which no earlier STRING record has", lc.Name)
			}
			byObj[lc.ClassID], bySerial[lc.Serial] = name, name
			classes[name] = true
		case hprof.TagStackFrame:
			f, err := dec.ParseStackFrame(rec, body)
			if err != nil {
				return err
			}
			methods[bySerial[f.Class]] = append(methods[bySerial[f.Class]], strs[f.Method])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fields, methods, classes
}

// TestMappingRenamesInContext: --mapping renames a class, its fields and a
// method of its frames, each in the context of its class: a field name
// shared with other classes ("next") is renamed only in the mapped class.
func TestMappingRenamesInContext(t *testing.T) {
	src := testutil.ReadAll(t, filepath.Join(testutil.Fixture("libuser"), "libuser.hprof.gz"))
	b := crunchBytes(t, src, crunch.Options{KeepStrings: true})
	m, err := apkstrings.ParseMapping(strings.NewReader(mappingLibUser))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := decrunchBytes(t, b, Options{})
	out, st := decrunchBytes(t, b, Options{Mapping: m})
	f0, m0, c0 := namesOf(t, plain)
	f1, m1, c1 := namesOf(t, out)

	if !c0["org.example.lib.Node"] || c1["org.example.lib.Node"] || !c1["com.example.Graph"] {
		t.Errorf("class not renamed: before %v, after Node=%v Graph=%v", c0["org.example.lib.Node"], c1["org.example.lib.Node"], c1["com.example.Graph"])
	}
	if c0["[Lorg.example.lib.Node;"] && !c1["[Lcom.example.Graph;"] {
		t.Errorf("array class of Node not renamed")
	}
	want := map[string]string{"label": "title", "next": "successor", "weight": "cost", "static instances": "static instances"}
	got := f1["com.example.Graph"]
	if len(got) != len(f0["org.example.lib.Node"]) {
		t.Fatalf("Graph fields %v, Node had %v", got, f0["org.example.lib.Node"])
	}
	for i, old := range f0["org.example.lib.Node"] {
		if w, ok := want[old]; ok && got[i] != w {
			t.Errorf("field %q: got %q, want %q", old, got[i], w)
		}
		if _, ok := want[old]; !ok && got[i] != old {
			t.Errorf("unmapped field %q renamed to %q", old, got[i])
		}
	}
	// The shared name "next" stays in every other class that has it.
	others := 0
	for cls, fs := range f0 {
		if cls == "org.example.lib.Node" {
			continue
		}
		for i, f := range fs {
			if f == "next" {
				others++
				if i >= len(f1[cls]) || f1[cls][i] != "next" {
					t.Errorf("%s.next renamed: fields now %q", cls, f1[cls])
				}
			}
		}
	}
	if others == 0 {
		t.Fatal("test premise: no other class has a field named next")
	}
	if len(m0["LibUser"]) == 0 {
		t.Fatal("test premise: no stack frame of LibUser")
	}
	for i, meth := range m0["LibUser"] {
		w := meth
		if meth == "main" {
			w = "run"
		}
		if i >= len(m1["com.example.App"]) || m1["com.example.App"][i] != w {
			t.Errorf("LibUser frame method %q: got frames %q, want %q", meth, m1["com.example.App"], w)
		}
	}
	if st.RenamedFields != 3 || st.RenamedMethods == 0 || st.RenamedClasses < 2 {
		t.Errorf("stats: %d classes, %d fields, %d methods renamed", st.RenamedClasses, st.RenamedFields, st.RenamedMethods)
	}
}

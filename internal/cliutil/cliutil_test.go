package cliutil

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReorderArgs(t *testing.T) {
	vf := map[string]bool{"o": true, "output": true, "apk": true}
	for _, c := range []struct{ in, want string }{
		{"decrunch in.bmd --apk x.apk -o out.hprof", "decrunch --apk x.apk -o out.hprof -- in.bmd"},
		{"decrunch --apk=x.apk in.bmd --stats", "decrunch --apk=x.apk --stats -- in.bmd"},
		{"crunch - - --quiet", "crunch --quiet -- - -"},
		{"crunch -- -weird-name.hprof out.bmd", "crunch -- -weird-name.hprof out.bmd"},
		{"decrunch in.bmd -o", "decrunch -o"}, // missing value: left for the parser to report
		{"decrunch -o - in.bmd", "decrunch -o - -- in.bmd"},
		{"decrunch", "decrunch"},
	} {
		got := strings.Join(ReorderArgs(strings.Fields(c.in), vf), " ")
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSniff(t *testing.T) {
	for head, want := range map[string]string{
		"":                                 "an empty file",
		"JAVA PROFILE 1.0.2\x00":           "an HPROF heap dump",
		"\x02\x10\x0a\x12JAVA PROFILE":     "a BMD file",
		"\x02\x02\x10\x04":                 "a BMD file",
		"\x01\x12JAVA PROFILE 1.0.3":       "a BMD file",
		"PK\x03\x04\x14\x00":               "a zip archive",
		"dex\n035\x00":                     "a DEX file",
		"\x89PNG\r\n\x1a\n":                "a PNG image",
		"\x1f\x8b\x08":                     "a gzip file",
		"\x28\xb5\x2f\xfd":                 "a zstd file",
		"hello, world\n":                   "",
		"\x02 not a bmd":                   "",
		"\x01\x00":                         "",
		"com.example.Foo -> a:\n":          "",
		"\xca\xfe\xba\xbe\x00\x00\x00\x3d": "a Java class file",
	} {
		if got := Sniff([]byte(head)); got != want {
			t.Errorf("Sniff(%q) = %q, want %q", head, got, want)
		}
	}
}

func TestCheckOutput(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "in.hprof")
	out := filepath.Join(d, "out.bmd")
	os.WriteFile(in, []byte("x"), 0o644)
	if err := CheckOutput(out, false, in); err != nil {
		t.Fatalf("new output: %v", err)
	}
	os.WriteFile(out, []byte("y"), 0o644)
	if err := CheckOutput(out, false, in); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("existing output: %v", err)
	}
	if err := CheckOutput(out, true, in); err != nil {
		t.Fatalf("existing output with force: %v", err)
	}
	if err := CheckOutput(in, true, "-", in); err == nil || !strings.Contains(err.Error(), "is the input") {
		t.Fatalf("output onto the input: %v", err)
	}
	if err := CheckOutput(d, true, in); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Fatalf("output onto a folder: %v", err)
	}
	if err := CheckOutput("-", false, in); err != nil {
		t.Fatalf("standard output: %v", err)
	}
	// Abort removes the temporary file; nothing is left in the folder.
	o, err := CreateOutput(filepath.Join(d, "new.bmd"), false, in)
	if err != nil {
		t.Fatal(err)
	}
	o.Write([]byte("partial"))
	o.Abort()
	ents, _ := os.ReadDir(d)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"in.hprof", "out.bmd"}) {
		t.Fatalf("after Abort: %v", names)
	}
}

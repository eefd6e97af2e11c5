package crunch

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
	"github.com/heapcrunch/heapcrunch/names"
)

func crunchV1(t *testing.T, fixture string, opt Options) ([]byte, *Stats, string) {
	t.Helper()
	src := testutil.ReadAll(t, testutil.Fixture(fixture))
	var out, warn bytes.Buffer
	st, err := CrunchV1(bytes.NewReader(src), &out, opt, &warn)
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), st, warn.String()
}

func crunchSecretsV1(t *testing.T, opt Options) []byte {
	b, _, _ := crunchV1(t, "secrets.hprof.gz", opt)
	return b
}

// TestPrivacyV1: the planted secrets of TestPrivacyDefault and its
// siblings, for BMD version 1: the same options keep the same values.
func TestPrivacyV1(t *testing.T) {
	numeric := map[string]bool{"long": true, "int": true, "double": true, "java.lang.Long": true, "static long": true}
	own := map[string]bool{"long": true, "int": true, "double": true, "static long": true}
	for _, c := range []struct {
		name string
		opt  Options
		kept func(s secret) bool
	}{
		{"default", Options{}, func(secret) bool { return false }},
		{"keep-strings", Options{KeepStrings: true}, func(secret) bool { return false }},
		{"keep-primitives", Options{KeepPrimitives: true}, func(s secret) bool { return numeric[s.jtype] }},
		{"preserve-class", Options{PreserveClasses: []string{"com.example.secrets.Vault"}}, func(s secret) bool { return own[s.jtype] }},
		{"profile leak", Options{Profile: "leak"}, func(secret) bool { return false }},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := crunchSecretsV1(t, c.opt)
			for _, s := range loadSecrets(t) {
				f := leaks(b, s)
				if c.kept(s) && len(f) == 0 {
					t.Errorf("%s (%s) should be kept", s.field, s.jtype)
				}
				if !c.kept(s) && len(f) > 0 {
					t.Errorf("secret %s (%s) found in the BMD v1 as %v", s.field, s.jtype, f)
				}
			}
		})
	}
}

// TestCrunchV1Header: the header is version 1 with the HPROF version text
// as metadata (what the original decruncher writes back as the HPROF
// header), and the first record is this project's marker string.
func TestCrunchV1Header(t *testing.T) {
	b, st, warn := crunchV1(t, "sample32.hprof.gz", Options{Tool: "heapcrunch test"})
	want := append([]byte{0x01, 18}, "JAVA PROFILE 1.0.2"...)
	if !bytes.HasPrefix(b, want) {
		t.Fatalf("header % x", b[:24])
	}
	r, err := bmd.NewV1Reader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	var m bmd.Metadata
	if rec.Tag != bmd.V1String || !bmd.ParseV1Marker(rec.Text, &m) || m.IDSize != 4 || m.Hash != bmd.HashJava || m.Tool != "heapcrunch test" || m.Timestamp == 0 {
		t.Errorf("marker %s %q -> %+v", rec.Tag, rec.Text, m)
	}
	if rec.ID != uint32(st.Strings+1) {
		t.Errorf("marker ID %d, %d strings", rec.ID, st.Strings)
	}
	if st.OutRecords["CLASS DEFINITION"] != st.Classes || st.OutRecords["ROOT OBJECTS"] != 1 || st.OutBytes != int64(len(b)) {
		t.Errorf("stats: %+v, %d bytes", st.OutRecords, len(b))
	}
	if !strings.Contains(warn, "GC roots written without their kinds") {
		t.Errorf("warnings: %s", warn)
	}
}

// TestCrunchV1Hashes: hashed names are Java's hash of the name and its
// UTF-8 length; java.lang names stay in the clear.
func TestCrunchV1Hashes(t *testing.T) {
	b, _, _ := crunchV1(t, "sample.hprof.gz", Options{})
	r, err := bmd.NewV1Reader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	hashes := map[int32]uint32{}
	clear := map[string]bool{}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Tag {
		case bmd.V1HashedString:
			hashes[rec.Hash] = rec.Length
		case bmd.V1String:
			clear[string(rec.Text)] = true
		}
	}
	for _, name := range []string{"Sample$ColoredCircle", "Sample.java", "parkedWorker"} {
		if n, ok := hashes[names.JavaHashString(name)]; !ok || n != uint32(len(name)) {
			t.Errorf("%s: no hashed string with its Java hash and length", name)
		}
	}
	for _, name := range []string{"java/lang/String", "value", "[I", "java/util/HashMap"} {
		if !clear[name] {
			t.Errorf("%s is not in the clear", name)
		}
	}
	n1, h1 := javaHashName([]byte("\xed\xa0\xbd\xed\xb8\x80x"))
	if n2, h2 := javaHashName([]byte("😀x")); n1 != n2 || h1 != h2 {
		t.Error("modified UTF-8 and UTF-8 of a supplementary character hash differently")
	}
	if n, h := javaHashName([]byte("😀x")); n != 5 || uint32(h) != 54959989 {
		t.Errorf("javaHashName(😀x) = %d %d", n, h)
	}
}

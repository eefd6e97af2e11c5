package crunch

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/hprof"
	"github.com/heapcrunch/heapcrunch/internal/bmdtest"
	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

type secret struct {
	field, jtype, value string
	raw                 []byte // bytes as in the HPROF
}

func loadSecrets(t *testing.T) []secret {
	f, err := os.Open(testutil.Fixture("gen/secrets.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []secret
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		c := strings.Split(line, "\t")
		raw, err := hex.DecodeString(c[3])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, secret{c[0], c[1], c[2], raw})
	}
	if len(out) < 10 {
		t.Fatalf("only %d secrets in secrets.txt", len(out))
	}
	return out
}

func reverse(b []byte) []byte {
	r := make([]byte, len(b))
	for i := range b {
		r[len(b)-1-i] = b[i]
	}
	return r
}

// encodings returns every way a secret's value could be written: the raw
// HPROF bytes and their reverse, UTF-8 and UTF-16 text, and for numbers
// every varint form BMD could use.
func encodings(s secret) map[string][]byte {
	e := map[string][]byte{"raw": s.raw, "reversed": reverse(s.raw)}
	if strings.Contains(s.jtype, "String") || s.jtype == "char[]" {
		e["utf8"] = []byte(s.value)
		var be, le []byte
		for _, u := range utf16.Encode([]rune(s.value)) {
			be = binary.BigEndian.AppendUint16(be, u)
			le = binary.LittleEndian.AppendUint16(le, u)
		}
		e["utf16be"], e["utf16le"] = be, le
	}
	if len(s.raw) == 4 || len(s.raw) == 8 {
		var v uint64
		for _, b := range s.raw {
			v = v<<8 | uint64(b)
		}
		e["uvarint"] = protowire.AppendVarint(nil, v)
		iv := int64(v)
		if len(s.raw) == 4 {
			iv = int64(int32(uint32(v)))
		}
		e["zigzag"] = protowire.AppendVarint(nil, uint64(iv<<1)^uint64(iv>>63))
		e["int64varint"] = protowire.AppendVarint(nil, uint64(iv))
	}
	if s.jtype == "double" {
		var v uint64
		for _, b := range s.raw {
			v = v<<8 | uint64(b)
		}
		e["float32"] = binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(math.Float64frombits(v))))
	}
	return e
}

func crunchSecrets(t *testing.T, opt Options) []byte {
	src := testutil.ReadAll(t, testutil.Fixture("secrets.hprof.gz"))
	var out bytes.Buffer
	if _, err := Crunch(bytes.NewReader(src), &out, opt); err != nil {
		t.Fatal(err)
	}
	// The secrets must be in the input, or the test proves nothing.
	for _, s := range loadSecrets(t) {
		if !bytes.Contains(src, s.raw) {
			t.Fatalf("secret %s is not in the input dump", s.field)
		}
	}
	return out.Bytes()
}

func leaks(b []byte, s secret) []string {
	var found []string
	for name, enc := range encodings(s) {
		if len(enc) >= 4 && bytes.Contains(b, enc) {
			found = append(found, name)
		}
	}
	return found
}

// TestPrivacyDefault: with default options no planted secret reaches the
// BMD in any encoding.
func TestPrivacyDefault(t *testing.T) {
	b := crunchSecrets(t, Options{})
	for _, s := range loadSecrets(t) {
		if f := leaks(b, s); len(f) > 0 {
			t.Errorf("secret %s (%s) found in the BMD as %v", s.field, s.jtype, f)
		}
	}
}

// TestPrivacyKeepStrings: --keep-strings puts names in the clear and
// nothing else: the symbol of a string literal (an HPROF STRING record that
// nothing refers to), heap strings built at run time, arrays and numbers
// stay out.
func TestPrivacyKeepStrings(t *testing.T) {
	b := crunchSecrets(t, Options{KeepStrings: true})
	for _, s := range loadSecrets(t) {
		if f := leaks(b, s); len(f) > 0 {
			t.Errorf("secret %s (%s) found with --keep-strings as %v", s.field, s.jtype, f)
		}
	}
}

// TestPrivacyKeepPrimitives: --keep-primitives keeps primitive field values
// (numbers, the boxed Long's value, the static) and no string or array
// contents.
func TestPrivacyKeepPrimitives(t *testing.T) {
	b := crunchSecrets(t, Options{KeepPrimitives: true})
	numeric := map[string]bool{"long": true, "int": true, "double": true, "java.lang.Long": true, "static long": true}
	for _, s := range loadSecrets(t) {
		f := leaks(b, s)
		if numeric[s.jtype] && len(f) == 0 {
			t.Errorf("--keep-primitives dropped %s (%s)", s.field, s.jtype)
		}
		if !numeric[s.jtype] && len(f) > 0 {
			t.Errorf("secret %s (%s) found with --keep-primitives as %v", s.field, s.jtype, f)
		}
	}
}

// TestPreserveClass keeps the values of com.example.secrets.Vault's
// primitive fields, instance and static, and nothing else.
func TestPreserveClass(t *testing.T) {
	b := crunchSecrets(t, Options{PreserveClasses: []string{"com.example.secrets.Vault"}})
	if !bytes.Contains(b, []byte("com/example/secrets/Vault")) {
		t.Error("preserved class name is not in the clear")
	}
	for _, s := range loadSecrets(t) {
		f := leaks(b, s)
		own := s.jtype == "long" || s.jtype == "int" || s.jtype == "double" || s.jtype == "static long"
		if own && len(f) == 0 {
			t.Errorf("--preserve-class dropped Vault.%s", s.field)
		}
		if !own && len(f) > 0 {
			t.Errorf("secret %s (%s) found with --preserve-class Vault as %v", s.field, s.jtype, f)
		}
	}
}

// TestRawRecordsChecked: a top-level record of a tag crunch does not know
// may hold anything (a VM's or a tool's own record, a string among its
// bytes), so it is left out, with a warning, whatever the options; so is a
// record of the four tags kept unchanged (ALLOC SITES, HEAP SUMMARY, CPU
// SAMPLES, CONTROL SETTINGS) whose length is not that of its layout of
// numbers: it has bytes its layout does not account for. Those of the
// right length are kept as RAW RECORDs.
func TestRawRecordsChecked(t *testing.T) {
	const planted = "PLANTED-in-a-raw-record-5521"
	var in bytes.Buffer
	w, err := hprof.NewWriter(&in, hprof.Header{Version: hprof.Version102, IDSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	u32 := func(b []byte, v ...uint32) []byte {
		for _, x := range v {
			b = binary.BigEndian.AppendUint32(b, x)
		}
		return b
	}
	control := []byte{0, 0, 0, 1, 0, 4}                                // flags, stack depth
	summary := u32(nil, 1, 2, 0, 3, 0, 4)                              // live bytes and instances, allocated (u8) bytes and instances
	samples := u32(nil, 7, 1, 7, 1)                                    // total, one trace: samples, serial
	sites := append([]byte{0, 0}, u32(nil, 0, 1, 1, 0, 1, 0, 1, 1)...) // flags, cutoff, live, allocated (u8), one site
	sites = append(append(sites, 0), u32(nil, 1, 1, 16, 1, 16, 1)...)  // the site
	for _, r := range []struct {
		tag  hprof.Tag
		body []byte
	}{
		{hprof.TagControlSettings, control},
		{hprof.TagHeapSummary, summary},
		{hprof.TagCPUSamples, samples},
		{hprof.TagAllocSites, sites},
		{0x42, []byte(planted)},                                                  // unknown
		{0x08, append(u32(nil, 1), planted...)},                                  // unknown
		{hprof.TagHeapSummary, append(bytes.Clone(summary), planted...)},         // too long
		{hprof.TagCPUSamples, append(u32(nil, 1, 0), planted...)},                // more than its trace count
		{hprof.TagControlSettings, append(bytes.Clone(control), planted[:2]...)}, // too long
	} {
		must(w.WriteRecord(r.tag, 0, r.body))
	}
	must(w.BeginHeapDump(hprof.TagHeapDumpSegment, 0))
	must(w.EndHeapDump())
	must(w.WriteRecord(hprof.TagHeapDumpEnd, 0, nil))
	must(w.Flush())
	for _, opt := range []Options{{}, {KeepStrings: true, KeepPrimitives: true}} {
		var out bytes.Buffer
		st, err := Crunch(bytes.NewReader(in.Bytes()), &out, opt)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(out.Bytes(), []byte(planted[:8])) || bytes.Contains(out.Bytes(), []byte(planted[:2])) {
			t.Errorf("%+v: the planted bytes are in the BMD", opt)
		}
		var kept []string
		bmdtest.Records(t, out.Bytes(), false, func(rec *bmd.Record) {
			if rec.Kind == bmd.KindRawRecord {
				kept = append(kept, fmt.Sprintf("%s %x", hprof.Tag(rec.Tag), rec.Text))
			}
		})
		want := []string{
			fmt.Sprintf("%s %x", hprof.TagControlSettings, control), fmt.Sprintf("%s %x", hprof.TagHeapSummary, summary),
			fmt.Sprintf("%s %x", hprof.TagCPUSamples, samples), fmt.Sprintf("%s %x", hprof.TagAllocSites, sites),
		}
		if !slices.Equal(kept, want) {
			t.Errorf("%+v: RAW RECORDs\n%q, want\n%q", opt, kept, want)
		}
		if w := strings.Join(st.Warnings, "\n"); !strings.Contains(w, "5 top-level records") || !strings.Contains(w, "0x42") {
			t.Errorf("%+v: warnings %q, want one that counts the 5 records left out", opt, st.Warnings)
		}
	}
}

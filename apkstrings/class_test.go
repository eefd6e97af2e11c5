package apkstrings

import (
	"bytes"
	"encoding/binary"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

func TestReadClassFixture(t *testing.T) {
	data := readFixture(t, "Hello.class")
	var strs []string
	n, err := ReadClass(data, collect(&strs))
	if err != nil {
		t.Fatal(err)
	}
	if n != len(strs) {
		t.Fatalf("returned %d, emitted %d", n, len(strs))
	}
	set := toSet(strs)
	for _, want := range []string{
		"fixture/Hello", "fixture/Hello$Inner", "smile \U0001F600", "a\x00b", "lone \uFFFD surrogate",
		"mDestroyed", "items", "greet", "(Lfixture/Hello$Inner;[[I)Ljava/lang/String;",
		"Ljava/util/List<Ljava/lang/String;>;", "EMOJI", "BIG", "PI", "makeConcatWithConstants",
		"java/lang/invoke/LambdaMetafactory", "lambda$lambda$0",
	} {
		if !set[want] {
			t.Errorf("missing %q", want)
		}
	}
	for _, s := range strs {
		if !utf8.ValidString(s) {
			t.Errorf("%q is not valid UTF-8", s)
		}
	}
}

// TestReadClassJavap checks the number of CONSTANT_Utf8 entries against javap,
// which shows every constant pool entry.
func TestReadClassJavap(t *testing.T) {
	javap, err := exec.LookPath("javap")
	if err != nil {
		testutil.Skip(t, "javap (JDK) not installed")
	}
	utf8Line := regexp.MustCompile(`(?m)^\s*#\d+ = Utf8 `)
	for _, name := range []string{"Hello.class"} {
		p := filepath.Join("testdata", name)
		out, err := exec.Command(javap, "-v", p).Output()
		if err != nil {
			t.Fatalf("javap: %v", err)
		}
		want := len(utf8Line.FindAll(out, -1))
		n, err := ReadClass(readFixture(t, name), func(string) {})
		if err != nil || n != want {
			t.Errorf("%s: ReadClass gives %d, %v; javap shows %d Utf8 entries", name, n, err, want)
		}
	}
}

// classWithAllTags builds a class file whose constant pool has one entry of
// every tag.
func classWithAllTags() []byte {
	be := binary.BigEndian
	b := []byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 65, 0, 0}
	count := 1
	add := func(tag byte, body ...byte) {
		b = append(b, tag)
		b = append(b, body...)
		count++
	}
	utf := func(s []byte) {
		b = append(b, cpUtf8)
		b = be.AppendUint16(b, uint16(len(s)))
		b = append(b, s...)
		count++
	}
	utf([]byte("A"))
	add(cpInteger, 0, 0, 0, 1)
	add(cpFloat, 0, 0, 0, 1)
	add(cpLong, 0, 0, 0, 0, 0, 0, 0, 1)
	count++
	add(cpDouble, 0, 0, 0, 0, 0, 0, 0, 1)
	count++
	add(cpClass, 0, 1)
	add(cpString, 0, 1)
	add(cpFieldref, 0, 8, 0, 13)
	add(cpMethodref, 0, 8, 0, 13)
	add(cpInterfaceMethodref, 0, 8, 0, 13)
	add(cpNameAndType, 0, 1, 0, 1)
	add(cpMethodHandle, 1, 0, 10)
	add(cpMethodType, 0, 1)
	add(cpDynamic, 0, 0, 0, 13)
	add(cpInvokeDynamic, 0, 0, 0, 13)
	add(cpModule, 0, 1)
	add(cpPackage, 0, 1)
	utf([]byte("Z\xED\xA0\xBD\xED\xB8\x80\xC0\x80"))
	be.PutUint16(b[8:], uint16(count))
	// access flags, this, super, no interfaces/fields/methods/attributes
	b = append(b, 0, 0x21, 0, 8, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0)
	return b
}

func TestReadClassAllTags(t *testing.T) {
	data := classWithAllTags()
	var strs []string
	n, err := ReadClass(data, collect(&strs))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"A", "Z\U0001F600\x00"}; n != 2 || !slices.Equal(strs, want) {
		t.Fatalf("got %d %q, want %q", n, strs, want)
	}
	// Every truncation inside the constant pool is an error, never a panic.
	poolEnd := len(data) - 14
	for i := 0; i < poolEnd; i++ {
		_, err := ReadClass(data[:i], func(string) {})
		if err == nil {
			t.Fatalf("truncated to %d bytes: no error", i)
		}
		asFormatError(t, err)
	}
}

func TestReadClassMalformed(t *testing.T) {
	good := classWithAllTags()
	tests := []struct {
		name string
		data []byte
		msg  string
	}{
		{"empty", nil, "truncated"},
		{"bad magic", append([]byte{0xCA, 0xFE, 0xBA, 0xBF}, good[4:]...), "magic"},
		{"text", []byte(strings.Repeat("not a class ", 10)), "magic"},
		{"unknown tag", func() []byte { b := bytes.Clone(good); b[14] = 2; return b }(), "unknown constant pool tag 2"},
		{"huge count", func() []byte { b := bytes.Clone(good); b[8], b[9] = 0xFF, 0xFF; return b }(), "at entry 21"},
		{"long utf8", func() []byte { b := bytes.Clone(good); b[11], b[12] = 0xFF, 0xFF; return b }(), "runs past the end"},
	}
	for _, tt := range tests {
		_, err := ReadClass(tt.data, func(string) {})
		fe := asFormatError(t, err)
		if !strings.Contains(fe.Msg, tt.msg) {
			t.Errorf("%s: %v does not mention %q", tt.name, fe, tt.msg)
		}
	}
}

package names

import (
	"bytes"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

// reference is the conversion written as spec/bmd.md §7.2 states it, on
// top of the standard library's UTF-8 decoder, to check decode against.
func reference(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		rest := b[i:]
		switch {
		case len(rest) >= 2 && rest[0] == 0xC0 && rest[1] == 0x80:
			out = append(out, 0)
			i += 2
		case len(rest) >= 6 && rest[0] == 0xED && rest[1] >= 0xA0 && rest[1] <= 0xAF && rest[2] >= 0x80 && rest[2] <= 0xBF &&
			rest[3] == 0xED && rest[4] >= 0xB0 && rest[4] <= 0xBF && rest[5] >= 0x80 && rest[5] <= 0xBF:
			hi := 0xD800 + rune(rest[1]-0xA0)<<6 + rune(rest[2]-0x80)
			lo := 0xDC00 + rune(rest[4]-0xB0)<<6 + rune(rest[5]-0x80)
			out = utf8.AppendRune(out, utf16.DecodeRune(hi, lo))
			i += 6
		case len(rest) >= 3 && rest[0] == 0xED && rest[1] >= 0xA0 && rest[1] <= 0xBF && rest[2] >= 0x80 && rest[2] <= 0xBF:
			out = append(out, "\uFFFD"...)
			i += 3
		default:
			r, n := utf8.DecodeRune(rest) // RuneError, 1 for a byte that starts no valid sequence
			out = utf8.AppendRune(out, r)
			i += n
		}
	}
	return out
}

// javaReference is String.hashCode() of the Go string s (valid UTF-8).
func javaReference(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

var examples = []struct {
	name string
	in   string
	want string
}{
	{"empty", "", ""},
	{"ascii", "com.example.Foo", "com.example.Foo"},
	{"BMP", "caf\xC3\xA9 \xE2\x82\xAC", "café €"},
	{"two-byte NUL", "\xC0\x80", "\x00"},
	{"NUL in text", "a\xC0\x80b", "a\x00b"},
	{"plain NUL", "a\x00b", "a\x00b"},
	{"surrogate pair", "\xED\xA0\xBD\xED\xB8\x80", "\U0001F600"},
	{"pair in text", "a\xED\xA0\xBD\xED\xB8\x80b", "a\U0001F600b"},
	{"lowest pair", "\xED\xA0\x80\xED\xB0\x80", "\U00010000"},
	{"highest pair", "\xED\xAF\xBF\xED\xBF\xBF", "\U0010FFFF"},
	{"standard 4-byte", "\xF0\x9F\x98\x80", "\U0001F600"},
	{"max BMP", "\xEF\xBF\xBF", "\uFFFF"},
	{"last before surrogates", "\xED\x9F\xBF", "\uD7FF"},
	{"lone high surrogate", "\xED\xA0\xBD", "\uFFFD"},
	{"lone high then text", "\xED\xA0\xBDx", "\uFFFDx"},
	{"lone low surrogate", "\xED\xB8\x80", "\uFFFD"},
	{"low before high", "\xED\xB8\x80\xED\xA0\xBD", "\uFFFD\uFFFD"},
	{"two highs then a low", "\xED\xA0\xBD\xED\xA0\xBD\xED\xB8\x80", "\uFFFD\U0001F600"},
	{"high then a bad low", "\xED\xA0\xBD\xED\xB8A", "\uFFFD\uFFFD\uFFFDA"},
	// The review's example: ED starts no sequence here, so the A after it
	// is kept.
	{"ED C0 41 9F", "\xED\xC0\x41\x9F", "\uFFFD\uFFFDA\uFFFD"},
	{"ED then text", "\xEDAB", "\uFFFDAB"},
	{"truncated 2-byte", "a\xC3", "a\uFFFD"},
	{"truncated 3-byte", "\xE2\x82", "\uFFFD\uFFFD"},
	{"truncated 3-byte then text", "\xE2\x82A", "\uFFFD\uFFFDA"},
	{"truncated pair", "\xED\xA0\xBD\xED\xB8", "\uFFFD\uFFFD\uFFFD"},
	{"stray continuation", "\x80a", "\uFFFDa"},
	{"invalid byte", "\xFF", "\uFFFD"},
	{"C0 alone", "\xC0", "\uFFFD"},
	{"overlong slash", "\xC0\xAF", "\uFFFD\uFFFD"},
	{"overlong 3-byte NUL", "\xE0\x80\x80", "\uFFFD\uFFFD\uFFFD"},
	{"beyond U+10FFFF", "\xF4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
	{"encoded U+FFFD", "\xEF\xBF\xBD", "\uFFFD"},
}

func TestNormalize(t *testing.T) {
	for _, tt := range examples {
		in := []byte(tt.in)
		if got := Normalize(in); string(got) != tt.want {
			t.Errorf("%s: Normalize(% X) = %q, want %q", tt.name, in, got, tt.want)
		}
		if got := NormalizeString(tt.in); got != tt.want {
			t.Errorf("%s: NormalizeString(% X) = %q, want %q", tt.name, in, got, tt.want)
		}
		if got := reference(in); string(got) != tt.want {
			t.Errorf("%s: reference(% X) = %q, want %q (the test's reference is wrong)", tt.name, in, got, tt.want)
		}
		if got := Append([]byte("p:"), in); string(got) != "p:"+tt.want {
			t.Errorf("%s: Append = %q, want %q", tt.name, got, "p:"+tt.want)
		}
		if got := Len(in); got != len(tt.want) {
			t.Errorf("%s: Len = %d, want %d", tt.name, got, len(tt.want))
		}
		if got, want := Hash(in), xxhash.Sum64String(tt.want); got != want {
			t.Errorf("%s: Hash = %x, want %x", tt.name, got, want)
		}
		if got, want := JavaHash(in), javaReference(tt.want); got != want {
			t.Errorf("%s: JavaHash = %d, want %d", tt.name, got, want)
		}
	}
}

func TestJavaHash(t *testing.T) {
	for _, c := range []struct {
		s string
		h int32
	}{
		{"", 0},
		{"a", 97},
		{"java.lang.ref.Reference", 409731804},
		{"com.example.MainActivity", -1660197799},
		{"mDestroyed", -249372628},
		{"sRoot", 108758005},
		{"été", 227742},
		{"😀x", 54959989},                        // U+1F600 counts as its surrogates D83D DE00
		{"\xED\xA0\xBD\xED\xB8\x80x", 54959989}, // the same in modified UTF-8
		{"\x00", 0},
		{"\xC0\x80", 0},
		{"\xff", 0xFFFD}, // invalid UTF-8 counts as U+FFFD
	} {
		if got := JavaHashString(c.s); got != c.h {
			t.Errorf("JavaHashString(%q) = %d, want %d", c.s, got, c.h)
		}
		if got := JavaHash([]byte(c.s)); got != c.h {
			t.Errorf("JavaHash(%q) = %d, want %d", c.s, got, c.h)
		}
	}
}

// TestHashKnownValues: the hashes of spec/bmd.md §9's example names.
func TestHashKnownValues(t *testing.T) {
	if Hash([]byte("parent")) != 0x9f11ff87b1bddd4f || HashString("weight") != 0x412b1a0509e5fcf4 {
		t.Errorf("Hash(parent) = %x, HashString(weight) = %x", Hash([]byte("parent")), HashString("weight"))
	}
}

// TestNoAllocations: a valid name is normalized, measured and hashed
// without allocating, and so is a short malformed one.
func TestNoAllocations(t *testing.T) {
	plain := []byte("com.example.ÉtéActivity$1")
	odd := []byte("com.example.\xED\xA0\xBD\xED\xB8\x80\xC0\x80x")
	dst := make([]byte, 0, 64)
	for name, f := range map[string]func(){
		"Normalize":       func() { Normalize(plain) },
		"NormalizeString": func() { NormalizeString(string(plain)) },
		"Append":          func() { dst = Append(dst[:0], plain); dst = Append(dst[:0], odd) },
		"Len":             func() { Len(plain); Len(odd) },
		"Hash":            func() { Hash(plain); Hash(odd) },
		"JavaHash":        func() { JavaHash(plain); JavaHash(odd) },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocations", name, n)
		}
	}
	if &Normalize(plain)[0] != &plain[0] {
		t.Error("Normalize copied a valid name")
	}
}

// FuzzNormalize checks the conversion and the hashes against the
// reference on any input: the result is valid UTF-8, valid UTF-8 is left
// unchanged, converting twice changes nothing more, and the string and
// byte variants agree.
func FuzzNormalize(f *testing.F) {
	for _, tt := range examples {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want := reference(in)
		got := Normalize(in)
		if !bytes.Equal(got, want) {
			t.Fatalf("Normalize(% X) = % X, want % X", in, got, want)
		}
		if !utf8.Valid(got) {
			t.Fatalf("Normalize(% X) = % X is not valid UTF-8", in, got)
		}
		if utf8.Valid(in) && !bytes.Equal(got, in) {
			t.Fatalf("valid UTF-8 % X changed to % X", in, got)
		}
		if again := Normalize(got); !bytes.Equal(again, got) {
			t.Fatalf("Normalize is not idempotent on % X", in)
		}
		if s := NormalizeString(string(in)); s != string(want) {
			t.Fatalf("NormalizeString(% X) = % X", in, s)
		}
		if a := Append([]byte{1}, in); !bytes.Equal(a[1:], want) || a[0] != 1 {
			t.Fatalf("Append(% X) = % X", in, a)
		}
		if Len(in) != len(want) {
			t.Fatalf("Len(% X) = %d, want %d", in, Len(in), len(want))
		}
		if h := xxhash.Sum64(want); Hash(in) != h || HashString(string(in)) != h {
			t.Fatalf("Hash(% X) = %x, HashString %x, want %x", in, Hash(in), HashString(string(in)), h)
		}
		if h := javaReference(string(want)); JavaHash(in) != h || JavaHashString(string(in)) != h {
			t.Fatalf("JavaHash(% X) = %d, JavaHashString %d, want %d", in, JavaHash(in), JavaHashString(string(in)), h)
		}
	})
}

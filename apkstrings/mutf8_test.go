package apkstrings

import (
	"bytes"
	"encoding/binary"
	"testing"
	"unicode/utf8"

	"github.com/heapcrunch/heapcrunch/names"
)

// classWithUtf8 makes a class file whose constant pool holds one
// CONSTANT_Utf8 per string, given as raw modified UTF-8 bytes.
func classWithUtf8(strs ...[]byte) []byte {
	b := []byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52, 0, 0}
	binary.BigEndian.PutUint16(b[8:], uint16(len(strs)+1))
	for _, s := range strs {
		b = append(b, cpUtf8)
		b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
		b = append(b, s...)
	}
	return append(b, 0, 0x21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}

// TestReadersDecodeModifiedUTF8: DEX and class-file strings are decoded by
// names.Normalize, the conversion crunch applies to heap dump names,
// malformed input included.
func TestReadersDecodeModifiedUTF8(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"ascii", []byte("hello"), "hello"},
		{"empty", nil, ""},
		{"surrogate pair", []byte{0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}, "\U0001F600"},
		{"pair in text", []byte("a\xED\xA0\xBD\xED\xB8\x80b"), "a\U0001F600b"},
		{"two-byte NUL", []byte{0xC0, 0x80}, "\x00"},
		{"NUL in text", []byte("a\xC0\x80b"), "a\x00b"},
		{"BMP", []byte("caf\xC3\xA9 \xE2\x82\xAC"), "café €"},
		{"lone high surrogate", []byte{0xED, 0xA0, 0xBD}, "\uFFFD"},
		{"lone high then text", []byte("\xED\xA0\xBDx"), "\uFFFDx"},
		{"lone low surrogate", []byte{0xED, 0xB8, 0x80}, "\uFFFD"},
		{"low before high", []byte{0xED, 0xB8, 0x80, 0xED, 0xA0, 0xBD}, "\uFFFD\uFFFD"},
		{"two highs", []byte{0xED, 0xA0, 0xBD, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}, "\uFFFD\U0001F600"},
		{"standard 4-byte", []byte("\xF0\x9F\x98\x80"), "\U0001F600"},
		{"truncated 2-byte", []byte{'a', 0xC3}, "a\uFFFD"},
		{"truncated 3-byte", []byte{0xE2, 0x82}, "\uFFFD\uFFFD"},
		{"stray continuation", []byte{0x80, 'a'}, "\uFFFDa"},
		{"invalid byte", []byte{0xFF}, "\uFFFD"},
		{"ED without a surrogate", []byte{0xED, 0xC0, 0x41, 0x9F}, "\uFFFD\uFFFDA\uFFFD"},
		{"overlong slash", []byte{0xC0, 0xAF}, "\uFFFD\uFFFD"},
		{"max BMP", []byte{0xEF, 0xBF, 0xBF}, "\uFFFF"},
		{"highest pair", []byte{0xED, 0xAF, 0xBF, 0xED, 0xBF, 0xBF}, "\U0010FFFF"},
	}
	var in [][]byte
	for _, tt := range tests {
		in = append(in, tt.in)
		if got := names.NormalizeString(string(tt.in)); got != tt.want {
			t.Errorf("%s: names.NormalizeString(% X) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
	var fromDEX, fromClass []string
	dex := buildDEX(dexSpec{}, in...)
	if _, err := ReadDEX(bytes.NewReader(dex), int64(len(dex)), collect(&fromDEX)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadClass(classWithUtf8(in...), collect(&fromClass)); err != nil {
		t.Fatal(err)
	}
	if len(fromDEX) != len(tests) || len(fromClass) != len(tests) {
		t.Fatalf("%d strings from the DEX file, %d from the class file, want %d", len(fromDEX), len(fromClass), len(tests))
	}
	for i, tt := range tests {
		if fromDEX[i] != tt.want || fromClass[i] != tt.want {
			t.Errorf("%s: DEX %q, class file %q, want %q", tt.name, fromDEX[i], fromClass[i], tt.want)
		}
		if !utf8.ValidString(fromDEX[i]) {
			t.Errorf("%s: %q is not valid UTF-8", tt.name, fromDEX[i])
		}
	}
}

package apkstrings

import (
	"testing"
	"unicode/utf8"
)

func TestDecodeMUTF8(t *testing.T) {
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
		{"overlong slash", []byte{0xC0, 0xAF}, "/"},
		{"max BMP", []byte{0xEF, 0xBF, 0xBF}, "\uFFFF"},
		{"highest pair", []byte{0xED, 0xAF, 0xBF, 0xED, 0xBF, 0xBF}, "\U0010FFFF"},
	}
	for _, tt := range tests {
		got := decodeMUTF8(tt.in)
		if got != tt.want {
			t.Errorf("%s: decodeMUTF8(% X) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("%s: result %q is not valid UTF-8", tt.name, got)
		}
	}
}

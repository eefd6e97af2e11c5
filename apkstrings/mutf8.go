package apkstrings

import (
	"unicode/utf16"
	"unicode/utf8"
)

// decodeMUTF8 decodes modified UTF-8, as stored by DEX and class files, into
// valid UTF-8. A surrogate pair (two 3-byte sequences) becomes one 4-byte
// sequence, C0 80 becomes NUL, and a lone surrogate or an invalid byte becomes
// U+FFFD. Standard 4-byte sequences, which modified UTF-8 never contains, are
// accepted as they are.
func decodeMUTF8(b []byte) string {
	// Modified UTF-8 that is also valid UTF-8 (no surrogates, no C0 80)
	// needs no work; that is nearly every string.
	if utf8.Valid(b) {
		return string(b)
	}
	return string(appendMUTF8(make([]byte, 0, len(b)+8), b))
}

const replacement = "\uFFFD"

// appendMUTF8 appends the UTF-8 form of the modified UTF-8 text b to dst.
func appendMUTF8(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < 0x80:
			dst = append(dst, c)
			i++
		case c&0xE0 == 0xC0:
			if i+1 < len(b) && b[i+1]&0xC0 == 0x80 {
				// Overlong forms, C0 80 for NUL among them, decode to
				// their value.
				dst = utf8.AppendRune(dst, rune(c&0x1F)<<6|rune(b[i+1]&0x3F))
				i += 2
			} else {
				dst = append(dst, replacement...)
				i++
			}
		case c&0xF0 == 0xE0:
			if i+2 >= len(b) || b[i+1]&0xC0 != 0x80 || b[i+2]&0xC0 != 0x80 {
				dst = append(dst, replacement...)
				i++
				continue
			}
			u := rune(c&0x0F)<<12 | rune(b[i+1]&0x3F)<<6 | rune(b[i+2]&0x3F)
			i += 3
			switch {
			case u >= 0xD800 && u <= 0xDBFF:
				// A high surrogate must be followed by a low one,
				// encoded as ED B0..BF 80..BF.
				if i+2 < len(b) && b[i] == 0xED && b[i+1]&0xF0 == 0xB0 && b[i+2]&0xC0 == 0x80 {
					lo := 0xD000 | rune(b[i+1]&0x3F)<<6 | rune(b[i+2]&0x3F)
					dst = utf8.AppendRune(dst, utf16.DecodeRune(u, lo))
					i += 3
				} else {
					dst = append(dst, replacement...)
				}
			case u >= 0xDC00 && u <= 0xDFFF:
				dst = append(dst, replacement...)
			default:
				dst = utf8.AppendRune(dst, u)
			}
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 {
				dst = append(dst, replacement...)
				i++
			} else {
				dst = append(dst, b[i:i+size]...)
				i += size
			}
		}
	}
	return dst
}

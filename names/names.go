// Package names is the one place where a name as a virtual machine writes
// it becomes the text that BMD hashes, and where both hashes are computed
// (spec/bmd.md §7.2 and §11).
//
// HPROF STRING records, DEX string_data_items and class-file CONSTANT_Utf8
// entries all hold names in modified UTF-8: NUL as C0 80 and a
// supplementary character as two 3-byte sequences, one per UTF-16
// surrogate (CESU-8). A name is hashed in standard UTF-8, so that its hash
// taken from a heap dump (crunch) equals its hash taken from the app's code
// (package apkstrings, then decrunch's name table). Every caller converts
// through [Normalize] (or [Append], [NormalizeString]) and hashes through
// [Hash] or [JavaHash], so that the two sides can never disagree, malformed
// input included.
//
// The conversion reads the input from the start, one sequence at a time:
//
//   - a valid UTF-8 sequence (1 to 4 bytes, shortest form, not a
//     surrogate, at most U+10FFFF) is copied;
//   - C0 80 becomes NUL (00);
//   - a surrogate pair, ED A0–AF 80–BF followed by ED B0–BF 80–BF, becomes
//     the 4-byte UTF-8 sequence of its code point;
//   - any other encoded surrogate, ED A0–BF 80–BF (a lone surrogate, which
//     modified UTF-8 may hold but UTF-8 cannot), becomes one U+FFFD;
//   - any other byte becomes U+FFFD (EF BF BD), and decoding resumes at the
//     next byte, so that no valid sequence after a bad byte is lost (ED C0
//     41 9F gives U+FFFD U+FFFD A U+FFFD).
//
// Valid UTF-8 is therefore returned unchanged, and the result is always
// valid UTF-8.
package names

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
)

// text is what a name may be given as.
type text interface{ ~string | ~[]byte }

// decode returns the character of the sequence at b[i:] (i < len(b)) and
// the number of bytes it takes, following the rules of the package
// documentation; utf8.RuneError stands for any byte or lone surrogate that
// has no character.
func decode[T text](b T, i int) (rune, int) {
	c := b[i]
	if c < 0x80 {
		return rune(c), 1
	}
	rest := len(b) - i
	cont := func(k int) bool { return k < rest && b[i+k]&0xC0 == 0x80 }
	switch {
	case c == 0xC0:
		if rest >= 2 && b[i+1] == 0x80 {
			return 0, 2
		}
	case c >= 0xC2 && c <= 0xDF:
		if cont(1) {
			return rune(c&0x1F)<<6 | rune(b[i+1]&0x3F), 2
		}
	case c >= 0xE0 && c <= 0xEF:
		if !cont(1) || !cont(2) || c == 0xE0 && b[i+1] < 0xA0 {
			break
		}
		r := rune(c&0x0F)<<12 | rune(b[i+1]&0x3F)<<6 | rune(b[i+2]&0x3F)
		if r < 0xD800 || r > 0xDFFF {
			return r, 3
		}
		if r <= 0xDBFF && rest >= 6 && b[i+3] == 0xED && b[i+4]&0xF0 == 0xB0 && cont(5) {
			lo := 0xD000 | rune(b[i+4]&0x3F)<<6 | rune(b[i+5]&0x3F)
			return utf16.DecodeRune(r, lo), 6
		}
		return utf8.RuneError, 3
	case c >= 0xF0 && c <= 0xF4:
		if !cont(1) || !cont(2) || !cont(3) || c == 0xF0 && b[i+1] < 0x90 || c == 0xF4 && b[i+1] > 0x8F {
			break
		}
		return rune(c&0x07)<<18 | rune(b[i+1]&0x3F)<<12 | rune(b[i+2]&0x3F)<<6 | rune(b[i+3]&0x3F), 4
	}
	return utf8.RuneError, 1
}

func appendText[T text](dst []byte, b T) []byte {
	for i := 0; i < len(b); {
		r, n := decode(b, i)
		dst = utf8.AppendRune(dst, r)
		i += n
	}
	return dst
}

// Normalize returns name, given as a VM writes it (modified UTF-8), in
// standard UTF-8. A name that is already valid UTF-8, nearly every name, is
// returned as it is, without allocating; otherwise the result is new.
func Normalize(name []byte) []byte {
	if utf8.Valid(name) {
		return name
	}
	return appendText(make([]byte, 0, len(name)+8), name)
}

// NormalizeString is Normalize of a string: a valid UTF-8 string is
// returned as it is.
func NormalizeString(name string) string {
	if utf8.ValidString(name) {
		return name
	}
	return string(appendText(make([]byte, 0, len(name)+8), name))
}

// Append appends the standard UTF-8 form of name to dst and returns the
// extended slice (it allocates only if dst must grow).
func Append(dst, name []byte) []byte {
	if utf8.Valid(name) {
		return append(dst, name...)
	}
	return appendText(dst, name)
}

// Len returns the byte length of the standard UTF-8 form of name: the
// length BMD stores with a hashed name, in both versions.
func Len(name []byte) int {
	if utf8.Valid(name) {
		return len(name)
	}
	n := 0
	for i := 0; i < len(name); {
		r, k := decode(name, i)
		n += utf8.RuneLen(r)
		i += k
	}
	return n
}

// Hash returns the version 2 hash of a name: xxhash64 (seed 0) of its
// standard UTF-8 form.
func Hash(name []byte) uint64 {
	if utf8.Valid(name) {
		return xxhash.Sum64(name)
	}
	var buf [256]byte
	return xxhash.Sum64(appendText(buf[:0], name))
}

// HashString is Hash of a string.
func HashString(name string) uint64 {
	if utf8.ValidString(name) {
		return xxhash.Sum64String(name)
	}
	var buf [256]byte
	return xxhash.Sum64(appendText(buf[:0], name))
}

// JavaHash returns the version 1 hash of a name: Java's String.hashCode()
// of its standard UTF-8 form, h = 31·h + c over its UTF-16 code units, a
// supplementary character counting as its two surrogates. (A lone
// surrogate or an invalid byte counts as U+FFFD, as in the standard UTF-8
// form.)
func JavaHash(name []byte) int32 {
	if utf8.Valid(name) {
		var h int32
		for _, r := range string(name) { // does not allocate
			h = javaStep(h, r)
		}
		return h
	}
	return javaHash(name)
}

// JavaHashString is JavaHash of a string.
func JavaHashString(name string) int32 {
	if utf8.ValidString(name) {
		return javaHashValid(name)
	}
	return javaHash(name)
}

func javaHashValid(s string) int32 {
	var h int32
	for _, r := range s {
		h = javaStep(h, r)
	}
	return h
}

func javaHash[T text](name T) int32 {
	var h int32
	for i := 0; i < len(name); {
		r, n := decode(name, i)
		h = javaStep(h, r)
		i += n
	}
	return h
}

func javaStep(h int32, r rune) int32 {
	if r >= 0x10000 {
		hi, lo := utf16.EncodeRune(r)
		return 31*(31*h+hi) + lo
	}
	return 31*h + r
}

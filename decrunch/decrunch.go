// Package decrunch turns a BMD file back into an HPROF heap dump, recovering
// hashed names from candidate strings. It reads the BMD twice, streaming:
// the names first, which an HPROF file must have before the heap dump
// that uses them, then everything else.
package decrunch

import (
	"fmt"
	"io"

	"github.com/heapcrunch/heapcrunch/bmd"
)

// Names recovers hashed names: it returns the text whose hash and UTF-8 byte
// length are those given.
type Names interface {
	Lookup(hash, length uint64) (string, bool)
}

// Placeholder is the name written for a hashed name that was not
// recovered: "unknown$" and the 16 hex digits of its hash. It is unique per
// hash and visible in any analyzer.
func Placeholder(hash uint64) string { return fmt.Sprintf("unknown$%016x", hash) }

// Options shape the HPROF written.
type Options struct {
	Names Names // nil: every hashed name becomes its placeholder
	// Rename, when set, is applied to every name after recovery, with the
	// kind of use ("class" for LOAD CLASS names, "" otherwise).
	Rename func(name string) string
	// Mapping, when set, renames obfuscated class names (LOAD CLASS),
	// field and static names (CLASS) and method names (STACK FRAME) to
	// their original names, each in the context of its class.
	Mapping Mapping
	// SegmentSize bounds heap dump segments (0: hprof.DefaultSegmentSize).
	SegmentSize int
	// MaxOutput bounds the HPROF written, in bytes (0: no bound). A BMD
	// file is untrusted input, and a few bytes of it can ask for
	// gigabytes (a primitive array's length, an instance of a class with
	// thousands of fields): a file that asks for more fails with an
	// *OutputLimitError, before the array that would cross the bound is
	// written.
	MaxOutput int64
	// Salvage makes a damaged BMD give a valid HPROF of the records before
	// the damage instead of an error; Stats.Salvaged then says what was lost.
	// An *OutputLimitError is still an error.
	Salvage bool
	// Labels are key=value labels taken as if the file held them after its
	// own (the last of each key counts): those of BuildLabels, the
	// device's Build texts, and ProcessNameLabel, the app's process name
	// (TextLabel), for a file crunched without them, when the server knows
	// the device and the app (enumnames.go).
	Labels []string
}

// Stats counts what a decrunch did.
type Stats struct {
	Strings   uint64 // string records
	Clear     uint64 // names that were in the clear
	Recovered uint64 // hashed names recovered
	Missing   uint64 // hashed names left as placeholders
	// ArrayNames counts array class names made of their element's name
	// (ARRAY NAME records): recovered whenever the element name is.
	ArrayNames uint64
	Objects    uint64
	Roots      uint64
	OutBytes   int64
	Salvaged   error // with Options.Salvage: the damage that ended the input, or nil
	Metadata   bmd.Metadata
	Warnings   []string // what the input's format could not carry and was filled in (version 1)

	// Uses of names renamed by Options.Mapping.
	RenamedClasses, RenamedFields, RenamedMethods uint64

	// EnumNames counts the enum constants whose names were written back
	// into their Strings, from the names of the static fields that hold
	// them (enumnames.go).
	EnumNames uint64

	// ThreadNames counts the Strings of an Android app's main thread's
	// name written back ("main", from the thread of
	// android.os.Looper.sMainLooper: enumnames.go), 0 or 1.
	ThreadNames uint64

	// BuildTexts counts the Strings of android.os.Build.MANUFACTURER and
	// Build.ID written back from the labels of those names, the file's or
	// Options.Labels (enumnames.go), 0 to 2.
	BuildTexts uint64

	// ProcessNames counts the Strings of the app's process name written
	// back from the label ApplicationInfo.processName, the file's or
	// Options.Labels (enumnames.go), 0 or 1.
	ProcessNames uint64
}

// countText counts a String's text written back, of kind k.
func (s *Stats) countText(k textKind) {
	switch k {
	case threadText:
		s.ThreadNames++
	case buildText:
		s.BuildTexts++
	case processText:
		s.ProcessNames++
	default:
		s.EnumNames++
	}
}

// HPROF IDs written: objects at multiples of the dump's alignment (8 or
// more, see objectIDs), strings and frames in their own residue classes
// (4 and 2 modulo 8) so that no two kinds of ID share a value.
func strID(s uint64) uint64 { return s<<3 | 4 }
func frameID(f uint64) uint64 {
	if f == 0 {
		return 0
	}
	return f<<3 | 2
}

func lookup(n Names, hash, length uint64) (string, bool) {
	if n == nil {
		return "", false
	}
	return n.Lookup(hash, length)
}

// countWriter counts the bytes written and refuses to write beyond max
// (when not 0).
type countWriter struct {
	w   io.Writer
	n   int64
	max int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	if c.max > 0 && c.n+int64(len(b)) > c.max {
		return 0, &OutputLimitError{Limit: c.max}
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// OutputLimitError reports a BMD file whose HPROF would be larger than
// Options.MaxOutput.
type OutputLimitError struct {
	Limit int64
}

// Error returns the message of an OutputLimitError.
func (e *OutputLimitError) Error() string {
	return fmt.Sprintf("decrunch: the HPROF would be larger than the output limit of %d bytes", e.Limit)
}

// NamesLimitError reports a BMD file whose names would take far more memory
// than its size explains (a few bytes of STRING or ARRAY NAME records
// standing for long texts, over and over, or for names that a mapping
// gives long originals): only a crafted file has them.
// Like an *OutputLimitError, it is not damage that salvage applies to.
type NamesLimitError struct {
	Offset int64  // file offset of the record whose name crossed the bound
	Record string // its kind
	Bytes  int64  // bytes of names held with it
}

// Error returns the message of a NamesLimitError.
func (e *NamesLimitError) Error() string {
	return fmt.Sprintf("decrunch: the names up to the %s record at offset %d take %d bytes, implausibly many for a file of that size (a real dump's names take at most a few times its bytes)", e.Record, e.Offset, e.Bytes)
}

// IDOverflowError reports a BMD file with an object ID too large for the
// HPROF IDs of its ID size: a dense ID above what such IDs can express (a
// file that numbers that many objects is damaged or forged), or a version
// 1 file's raw ID in a LEGACY record or a root; or a string or stack frame
// ID too large (s<<3|4, f<<3|2). The record that holds it is not written:
// salvage keeps what came before it.
type IDOverflowError struct {
	IDSize int
	What   string // "string" or "stack frame"; "" for an object
	Record string // the kind of the record that holds it ("INSTANCE", …)
	Offset int64  // that record's offset in the (uncompressed) file
	// An object record met ahead of the reading, in a batch, whose
	// offset converter.locate finds: its kind, its dense ID and its
	// place among the second pass's object records (from 1).
	kind   bmd.Kind
	object uint64
	nth    uint64
}

// Error returns the message of an IDOverflowError.
func (e *IDOverflowError) Error() string {
	what, a := e.What, "a"
	if what == "" {
		what, a = "object", "an"
	}
	at := ""
	if e.Record != "" {
		at = fmt.Sprintf(" in the %s record at offset %d", e.Record, e.Offset)
	}
	return fmt.Sprintf("decrunch: %s %s ID too large for %d-byte identifiers%s (more %ss than they can number, or a damaged file)", a, what, e.IDSize, at, what)
}

package hprof

import (
	"errors"
	"fmt"
)

// ErrNotHPROF is wrapped by the error returned for a file that does not start
// with an HPROF header.
var ErrNotHPROF = errors.New("hprof: not an HPROF heap dump")

// FormatError reports input that does not follow the HPROF format, saying
// where: the byte offset and the record being read.
type FormatError struct {
	Offset int64  // byte offset in the (decompressed) file where the problem was found
	Record string // the record or sub-record being read, e.g. "HEAP DUMP SEGMENT" or "INSTANCE DUMP"
	Tag    int    // its tag, or -1
	Msg    string
	Err    error // an underlying cause (io.ErrUnexpectedEOF for truncation), or nil
}

// Error returns the message of a FormatError.
func (e *FormatError) Error() string {
	s := "hprof: " + e.Msg
	if e.Record != "" {
		if e.Tag >= 0 {
			s += fmt.Sprintf(" in %s (tag 0x%02X)", e.Record, e.Tag)
		} else {
			s += " in " + e.Record
		}
	}
	return s + fmt.Sprintf(" at offset %d", e.Offset)
}

// Unwrap returns the error underneath, for errors.Is and errors.As.
func (e *FormatError) Unwrap() error { return e.Err }

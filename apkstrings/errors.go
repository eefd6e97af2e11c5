package apkstrings

import (
	"strconv"
	"strings"
)

// FormatError reports malformed input: which file, which entry inside it,
// where (a byte offset) and what is wrong.
type FormatError struct {
	// Path is the file that was read; empty when the input came from memory.
	Path string
	// Entry is the archive entry (or the path below a directory) that is
	// malformed; empty when the problem is in the file itself. Entries of an
	// archive nested inside another are written as "outer.jar!/inner.class".
	Entry string
	// Offset is the byte offset within the entry (or the file when Entry is
	// empty) where the problem was found, or -1 when it is not known.
	Offset int64
	// Msg says what is wrong.
	Msg string
}

// Error formats the error as "apkstrings: PATH: ENTRY: MSG at offset N",
// leaving out the parts that are empty or unknown.
func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString("apkstrings: ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	if e.Entry != "" {
		b.WriteString(e.Entry)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Offset >= 0 {
		b.WriteString(" at offset ")
		b.WriteString(strconv.FormatInt(e.Offset, 10))
	}
	return b.String()
}

// formatErr builds a FormatError without path or entry; the readers of files
// and archives fill those in.
func formatErr(off int64, msg string) *FormatError {
	return &FormatError{Offset: off, Msg: msg}
}

// withLocation fills in Path and Entry of a *FormatError that does not have
// them yet; other errors are returned as they are.
func withLocation(err error, path, entry string) error {
	if fe, ok := err.(*FormatError); ok {
		if fe.Path == "" {
			fe.Path = path
		}
		if fe.Entry == "" {
			fe.Entry = entry
		}
	}
	return err
}

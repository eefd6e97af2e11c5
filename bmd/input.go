package bmd

import (
	"errors"
	"fmt"
	"io"

	"github.com/heapcrunch/heapcrunch/internal/bufin"
)

// input is the buffered byte source of both readers (version 2 and 1): a
// bufin.Reader, in a named field so that its exported methods do not become
// the Readers', with the few calls the readers make and the error of a
// record that cannot be read.
type input struct{ buf bufin.Reader }

// newInput returns the input of src, read ahead size bytes at a time.
func newInput(src io.Reader, size int) input {
	var in input
	in.buf.Reset(src, size)
	return in
}

// off returns the offset of the next byte to read.
func (in *input) off() int64 { return in.buf.Offset() }

// fill makes at least n bytes available, if the source has them.
func (in *input) fill(n int) bool { return in.buf.Fill(n) }

// take consumes the next n bytes (see bufin.Reader.Take); ok is false if
// the source ends first. Runs longer than the buffer are copied to a slice
// of the input's own, never to one that may alias the buffer (such as the
// previous record's text), which the copy refills.
func (in *input) take(n int) (b []byte, ok bool) { return in.buf.Take(n) }

// failed returns the error of the source, unless it is io.EOF.
func (in *input) failed() error {
	if err := in.buf.Err(); err != io.EOF {
		return err
	}
	return nil
}

// formatError returns the error of a record that starts at offset at: the
// source's own error if reading failed, else a FormatError.
func (in *input) formatError(at int64, record, msg string, err error) error {
	if srcErr := in.failed(); srcErr != nil {
		var fe *FormatError
		var be *blockReadError
		if errors.As(srcErr, &fe) || errors.As(srcErr, &be) {
			return srcErr // a damaged, cut or unreadable block: where it is in the file
		}
		return fmt.Errorf("bmd: reading at offset %d: %w", in.off(), srcErr) // version 1: a file offset
	}
	return &FormatError{Offset: at, Record: record, Msg: msg, Err: err}
}

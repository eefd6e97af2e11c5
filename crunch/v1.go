package crunch

import (
	"errors"
	"io"
)

// CrunchV1 writes BMD version 1, the format of the original 2014 tools.
func CrunchV1(src io.ReadSeeker, out io.Writer, opt Options, warn io.Writer) (*Stats, error) {
	return nil, errors.New("--format v1 is not implemented yet")
}

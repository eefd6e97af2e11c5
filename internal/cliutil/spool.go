package cliutil

import (
	"fmt"
	"io"
	"os"

	"github.com/heapcrunch/heapcrunch/internal/compress"
)

// SeekableInput returns the decompressed content of the named input (or of
// standard input for "-") as a seekable file, for tools that read their
// input twice. A plain file is used as it is; standard input and compressed
// files are spooled to a temporary file, which cleanup removes.
func SeekableInput(name string) (f io.ReadSeeker, size int64, kind compress.Kind, cleanup func(), err error) {
	in, err := OpenInput(name)
	if err != nil {
		return nil, 0, "", nil, err
	}
	dec, kind, err := compress.NewReader(in)
	if err != nil {
		in.Close()
		return nil, 0, kind, nil, fmt.Errorf("%s: %w", name, err)
	}
	if file, ok := in.(*os.File); ok && kind == compress.None && name != "-" {
		st, err := file.Stat()
		if err != nil {
			file.Close()
			return nil, 0, kind, nil, err
		}
		if _, err := file.Seek(0, io.SeekStart); err != nil {
			file.Close()
			return nil, 0, kind, nil, err
		}
		return file, st.Size(), kind, func() { file.Close() }, nil
	}
	tmp, err := os.CreateTemp("", "heapcrunch-spool-*")
	if err != nil {
		in.Close()
		return nil, 0, kind, nil, err
	}
	remove := func() { tmp.Close(); os.Remove(tmp.Name()) }
	cancel := OnInterrupt(remove)
	clean := func() { cancel(); remove() }
	n, err := io.Copy(tmp, dec)
	dec.Close()
	in.Close()
	if err != nil {
		clean()
		if kind == compress.None {
			return nil, 0, kind, nil, fmt.Errorf("%s: reading at offset %d: %w", name, n, err)
		}
		return nil, 0, kind, nil, fmt.Errorf("%s: truncated or damaged %s data after %d uncompressed bytes: %w", name, kind, n, err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		clean()
		return nil, 0, kind, nil, err
	}
	return tmp, n, kind, clean, nil
}

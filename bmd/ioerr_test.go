package bmd_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/bmd"
)

// failingReader returns its data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// TestSourceError: when the underlying reader fails inside a block, the
// error wraps the reader's, says once which block failed and at what file
// offset, and carries the package prefix.
func TestSourceError(t *testing.T) {
	var b bytes.Buffer
	w, _ := bmd.NewWriter(&b, &bmd.Metadata{IDSize: 4})
	for range 3000 {
		w.ClearString([]byte("a name long enough to fill several blocks of records"))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	eio := errors.New("input/output error")
	cut := b.Len() / 2
	r, err := bmd.NewReader(&failingReader{data: b.Bytes()[:cut], err: eio})
	for err == nil {
		_, err = r.Next()
	}
	if !errors.Is(err, eio) {
		t.Fatalf("error %v does not wrap the reader's", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "bmd: reading block ") || strings.Count(msg, "offset") != 1 {
		t.Errorf("error %q: want one \"bmd: reading block N at offset X\"", msg)
	}
	if err == io.EOF {
		t.Error("a failing source read as a whole file")
	}
}

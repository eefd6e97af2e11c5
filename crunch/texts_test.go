package crunch

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/heapcrunch/heapcrunch/internal/testutil"
)

// readSeekOnly hides a source's ReadAt: pass 1 must keep the texts of its
// STRING records as it reads them.
type readSeekOnly struct{ io.ReadSeeker }

// failingAt is a source whose ReadAt fails: the texts cannot be read back.
type failingAt struct{ *bytes.Reader }

func (failingAt) ReadAt([]byte, int64) (int, error) { return 0, errors.New("disk gone") }

// TestTextsReadBack: where the source can be read at offsets, pass 1 keeps
// no texts of STRING records and its end reads back those it keeps; where
// it cannot, or it does not start at its start, pass 1 keeps them as it
// reads. Both write the same BMD, with every option that reads names
// before they are classified (--preserve-class, --profile leak). A read
// back that fails is an error that says so.
func TestTextsReadBack(t *testing.T) {
	for _, name := range []string{"sample.hprof.gz", "sample32.hprof.gz"} {
		data := testutil.ReadAll(t, testutil.Fixture(name))
		for _, opt := range []Options{{}, {KeepStrings: true}, {PreserveClasses: []string{"java.lang.String"}, Profile: "leak"}} {
			var want, got bytes.Buffer
			if _, err := Crunch(readSeekOnly{bytes.NewReader(data)}, &want, opt); err != nil {
				t.Fatal(err)
			}
			r := bytes.NewReader(data)
			if in := openInput(r); in.texts() == nil {
				t.Fatal("a bytes.Reader at its start: no texts to read back from")
			}
			if _, err := Crunch(r, &got, opt); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s %+v: texts read back: %d bytes of BMD, kept: %d, not the same", name, opt, got.Len(), want.Len())
			}
		}
		if in := openInput(readSeekOnly{bytes.NewReader(data)}); in.texts() != nil {
			t.Error("a source without ReadAt: texts to read back from")
		}
		moved := bytes.NewReader(data)
		moved.Seek(10, io.SeekStart)
		if in := openInput(moved); in.texts() != nil {
			t.Error("a source not at its start: texts to read back from")
		}
		_, err := Crunch(failingAt{bytes.NewReader(data)}, io.Discard, Options{})
		if err == nil || !strings.Contains(err.Error(), "reading back the text of a STRING record") || !strings.Contains(err.Error(), "disk gone") {
			t.Errorf("ReadAt failing: %v", err)
		}
	}
}

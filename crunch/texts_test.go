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

// TestReadTexts: readTexts reads texts within one window, across windows,
// a text longer than a window alone, and one that ends at the end of the
// source; a text beyond the end is an error.
func TestReadTexts(t *testing.T) {
	data := make([]byte, 3*textWindow)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	texts := []struct{ off, length int }{{10, 5}, {100, 40}, {200, textWindow + 3}, {2 * textWindow, 10}, {3*textWindow - 1024, 1024}}
	st := &state{textsAt: bytes.NewReader(data)}
	size := 0
	for i, x := range texts {
		st.pending.add(pendingString{id: uint64(i) + 1, place: uint64(x.off), length: uint32(x.length)})
		st.kept = append(st.kept, i)
		st.strs = append(st.strs, stringInfo{off: size, length: x.length})
		size += x.length
	}
	st.arena = make([]byte, size)
	if err := st.readTexts(); err != nil {
		t.Fatal(err)
	}
	for i, x := range texts {
		if got := st.text(i); !bytes.Equal(got, data[x.off:x.off+x.length]) {
			t.Errorf("text %d (%d bytes at %d): not the source's", i, x.length, x.off)
		}
	}
	st.pending.add(pendingString{id: 9, place: uint64(len(data) - 4), length: 8})
	st.kept = []int{len(texts)}
	st.strs = []stringInfo{{off: 0, length: 8}}
	if err := st.readTexts(); err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a text past the end: %v", err)
	}
}

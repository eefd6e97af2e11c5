package cliutil

import (
	"bytes"
	"io"
	"os"

	"github.com/heapcrunch/heapcrunch/bmd"
	"github.com/heapcrunch/heapcrunch/internal/compress"
)

// Sniff names the kind of file that starts with head, for messages about
// an input of the wrong kind: "an empty file", "a PNG image", "an HPROF heap
// dump", … It returns "" when it does not recognise the content. BMD files
// and compressed files are recognised by their own packages (bmd.Sniff,
// compress.Sniff).
func Sniff(head []byte) string {
	has := func(p string) bool { return bytes.HasPrefix(head, []byte(p)) }
	switch ck := compress.Sniff(head); {
	case len(head) == 0:
		return "an empty file"
	case has("JAVA PROFILE "):
		return "an HPROF heap dump"
	case bmd.Sniff(head) != 0:
		return "a BMD file"
	case has("PK\x03\x04"), has("PK\x05\x06"):
		return "a zip archive"
	case has("dex\n"):
		return "a DEX file"
	case has("\xca\xfe\xba\xbe"):
		return "a Java class file"
	case has("JM\x01\x00"):
		return "a JDK jmod file"
	case has("\x89PNG"):
		return "a PNG image"
	case has("\xff\xd8\xff"):
		return "a JPEG image"
	case has("GIF8"):
		return "a GIF image"
	case has("%PDF"):
		return "a PDF document"
	case has("\x7fELF"):
		return "an ELF executable"
	case ck == compress.Xz:
		return "an xz file (not supported: decompress it first)"
	case ck != compress.None:
		return "a " + string(ck) + " file"
	}
	return ""
}

// SniffFile is Sniff on the first bytes of a regular file, "a folder" for
// a folder, and "" for anything else or a file that cannot be read (a pipe
// or FIFO is not read: its bytes would be lost for the real reading).
func SniffFile(path string) string {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return ""
	case st.IsDir():
		return "a folder"
	case !st.Mode().IsRegular():
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	return Sniff(head[:n])
}

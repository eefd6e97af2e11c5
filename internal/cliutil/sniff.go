package cliutil

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
)

// Sniff names the kind of file that starts with head, for messages about
// an input of the wrong kind: "an empty file", "a PNG image", "an HPROF heap
// dump", … It returns "" when it does not recognise the content.
func Sniff(head []byte) string {
	has := func(p string) bool { return bytes.HasPrefix(head, []byte(p)) }
	switch {
	case len(head) == 0:
		return "an empty file"
	case has("JAVA PROFILE "):
		return "an HPROF heap dump"
	case isBMD(head):
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
	case has("\x1f\x8b"):
		return "a gzip file"
	case has("\x28\xb5\x2f\xfd"):
		return "a zstd file"
	case has("BZh"):
		return "a bzip2 file"
	case has("\xfd7zXZ\x00"):
		return "an xz file (not supported: decompress it first)"
	}
	return ""
}

// isBMD recognises a BMD header: version 1 or 2, the metadata length,
// and metadata that starts as the versions write it (version 2: protobuf
// field 1 or 2; version 1: the HPROF version text).
func isBMD(head []byte) bool {
	if len(head) < 3 || (head[0] != 1 && head[0] != 2) {
		return false
	}
	n, k := binary.Uvarint(head[1:])
	if k <= 0 || n == 0 || n > 1<<20 || 1+k >= len(head) {
		return false
	}
	meta := head[1+k:]
	if head[0] == 2 {
		return meta[0] == 0x0a || meta[0] == 0x10
	}
	return bytes.HasPrefix(meta, []byte("JAVA PROFILE"))
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

package bmd

import "google.golang.org/protobuf/encoding/protowire"

// Sniff reports which version of BMD a file that starts with prefix is:
// Version1, Version2, or 0 if it is not a BMD file. prefix may be the whole
// file or its first bytes (64 are plenty); Sniff decides on as much of the
// header as prefix holds, by the rules NewReader and NewV1Reader apply to
// it: the version number, a metadata length of at most 1 MiB and, for
// version 2, metadata in protobuf wire format and, when prefix holds all of
// it, metadata the Reader accepts. A prefix that ends within the version
// number is 0. Sniff does not check the header's checksum: a damaged file
// may still be named. So when Sniff returns 0, neither reader reads the
// file; when it returns a version, that version's reader is the one to use.
func Sniff(prefix []byte) int {
	v, k := protowire.ConsumeVarint(prefix)
	if k < 0 {
		return 0
	}
	var version int
	switch {
	case v == Version2:
		version = Version2
	case int32(v) == Version1: // as NewV1Reader reads it: an int32
		version = Version1
	default:
		return 0
	}
	n, m := protowire.ConsumeVarint(prefix[k:])
	switch {
	case m < 0 && cutShort(m):
		return version // prefix ends within the metadata length
	case m < 0:
		return 0
	case version == Version1:
		if int32(n) < 0 || n > maxMetadataSize {
			return 0
		}
		return Version1
	case n > maxMetadataSize:
		return 0
	}
	meta := prefix[k+m:]
	if uint64(len(meta)) >= n {
		md, err := parseMetadata(meta[:n])
		if err != nil || !md.Blocks || md.check() != nil {
			return 0
		}
		return Version2
	}
	// prefix ends within the metadata: its fields must be well formed as
	// far as they go.
	for len(meta) > 0 {
		num, typ, k := protowire.ConsumeTag(meta)
		if k >= 0 {
			j := protowire.ConsumeFieldValue(num, typ, meta[k:])
			if j >= 0 {
				meta = meta[k+j:]
				continue
			}
			k = j
		}
		if !cutShort(k) {
			return 0
		}
		break
	}
	return Version2
}

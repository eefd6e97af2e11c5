package apkstrings

import (
	"bufio"
	"errors"
	"fmt"
	"os"
)

// maxLineSize bounds one line of a strings file or a mapping file.
const maxLineSize = 16 << 20

// ReadStringsFile emits each line of a text file as one string: a trailing
// "\r" is stripped, empty lines are skipped, and a UTF-8 byte order mark at
// the start of the file is dropped. Lines are emitted as they are otherwise
// (no trimming, no check of the encoding). A line longer than 16 MiB is a
// *FormatError. ReadStringsFile returns the number of strings emitted.
func ReadStringsFile(path string, emit func(string)) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	err = scanLines(f, func(line []byte, lineNo int, _ int64) error {
		if lineNo == 1 {
			line = trimBOM(line)
		}
		if len(line) > 0 {
			emit(string(line))
			n++
		}
		return nil
	})
	return n, withLocation(err, path, "")
}

func trimBOM(line []byte) []byte {
	if len(line) >= 3 && line[0] == 0xEF && line[1] == 0xBB && line[2] == 0xBF {
		return line[3:]
	}
	return line
}

// scanLines calls fn for each line of f (without its "\n" or "\r\n"), with
// its 1-based number and the byte offset where it starts. Errors of fn stop
// the scan and are returned.
func scanLines(f interface{ Read([]byte) (int, error) }, fn func(line []byte, lineNo int, off int64) error) error {
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineSize)
	var next int64 // offset of the line after the current one
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(data, atEOF)
		next += int64(adv)
		return adv, tok, err
	})
	lineNo := 0
	var start int64
	for sc.Scan() {
		lineNo++
		line := sc.Bytes()
		if err := fn(line, lineNo, start); err != nil {
			return err
		}
		start = next
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return formatErr(start, fmt.Sprintf("line %d is longer than %d MiB", lineNo+1, maxLineSize>>20))
		}
		return err
	}
	return nil
}

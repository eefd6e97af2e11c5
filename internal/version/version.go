// Package version holds the tools' version.
package version

// Version is the version of crunch and decrunch.
const Version = "0.1.0"

// Tool is written into the metadata of BMD files.
const Tool = "heapcrunch " + Version

// Package apkstrings extracts candidate names from an application's own code
// and expands each candidate into every spelling a virtual machine may use for
// the same name in a heap dump.
//
// # Sources
//
// Heap dumps that have been de-identified carry hashes instead of class, field
// and method names. To recover the names, a server hashes every string found in
// the app's code and matches the hashes. This package finds those strings:
//
//   - [ReadDEX]: every entry of a DEX file's string table (string_ids), which
//     holds all class descriptors, member names, method shorties and string
//     literals of the file. Versions 035 and later are accepted, including the
//     v41 container format that packs several DEX files into one.
//   - [ReadAPK]: the classes*.dex entries of an APK (multi-dex).
//   - [ReadClass]: every CONSTANT_Utf8 of a Java class file's constant pool.
//   - [ReadJAR]: the .class entries of a JAR, of an Android AAR (through its
//     classes.jar and libs/*.jar), of a JDK .jmod, or of a directory tree of
//     .class files, plus the class name derived from each entry's path.
//   - [ReadStringsFile]: a text file with one string per line.
//
// DEX and class files store text as "modified UTF-8". The readers decode it to
// standard UTF-8 with package names (names.Normalize), the conversion crunch
// applies to the names of a heap dump, so that a name hashes alike on both
// sides: a surrogate pair becomes one 4-byte UTF-8 sequence, the two-byte NUL
// (C0 80) becomes "\x00", and a lone surrogate or an invalid byte becomes
// U+FFFD.
//
// Archives are read entry by entry through archive/zip; a single entry is held
// in memory at most, and entries above 512 MiB are refused. Every count and
// offset taken from a file is checked against the bytes that are really there
// before anything is allocated for it. Malformed input is reported as a
// [*FormatError]; no input makes the readers panic.
//
// # Spellings
//
// The same class is written differently by different VMs and tools: Android
// writes "com.a.B" and "com.a.B[]", HotSpot 9+ writes "com/a/B" and
// "[Lcom/a/B;", older HotSpot "com.a.B", Class.getName gives "[Lcom.a.B;", and
// the code itself holds descriptors such as "Lcom/a/B;". [Spellings] turns one
// candidate string into all of these so that the caller can hash each one
// (hashing is not done here). Field and method names are spelled alike
// everywhere and are emitted unchanged. Class names that occur only inside a
// method descriptor or a generic signature, such as "(ILjava/lang/String;)V",
// are pulled out and expanded too.
//
// # Mappings
//
// [ParseMapping] reads a ProGuard/R8 mapping.txt so that names that an
// obfuscator renamed can be mapped back to the original ones.
package apkstrings

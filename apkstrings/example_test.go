package apkstrings_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/heapcrunch/heapcrunch/apkstrings"
)

// ReadClass gives every string of a class file's constant pool, decoded
// to UTF-8: here testdata/Hello.class, compiled from
// testdata/src/fixture/Hello.java. A server hashes each one (in each of
// its Spellings) to recover the names a de-identified heap dump hashed.
func ExampleReadClass() {
	data, err := os.ReadFile(filepath.Join("testdata", "Hello.class"))
	if err != nil {
		log.Fatal(err)
	}
	var found []string
	n, err := apkstrings.ReadClass(data, func(s string) {
		// The class's own names, its fields, and two string literals:
		// a surrogate pair and a lone surrogate.
		if strings.HasPrefix(s, "fixture/") || s == "items" || s == "mDestroyed" ||
			strings.HasPrefix(s, "smile") || strings.HasPrefix(s, "lone") {
			found = append(found, s)
		}
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(n, "strings, among them:")
	for _, s := range found {
		fmt.Printf("%q\n", s)
	}
	// Output:
	// 59 strings, among them:
	// "fixture/Hello"
	// "items"
	// "fixture/Hello$Inner"
	// "mDestroyed"
	// "smile 😀"
	// "lone � surrogate"
	// "smile 😀\x01\x01\x01\x01"
}

// Spellings turns one string of the app's code into every way a heap dump
// may spell the same class.
func ExampleSpellings() {
	apkstrings.Spellings("[Lcom/example/Foo;", func(s string) { fmt.Println(s) })
	// Output:
	// [Lcom/example/Foo;
	// com.example.Foo
	// com/example/Foo
	// com.example.Foo[]
	// com/example/Foo[]
	// [Lcom.example.Foo;
	// com.example.Foo[][]
	// com/example/Foo[][]
	// [[Lcom/example/Foo;
	// [[Lcom.example.Foo;
}

// ParseMapping reads an R8 or ProGuard mapping file; Class, Field and
// Method then give the original names of obfuscated ones.
func ExampleParseMapping() {
	m, err := apkstrings.ParseMapping(strings.NewReader(`com.example.app.Util -> a.a:
    java.lang.String TAG -> a
    1:3:void log(java.lang.String):40:42 -> b
`))
	if err != nil {
		log.Fatal(err)
	}
	show := func(name string, ok bool) { fmt.Printf("%q %v\n", name, ok) }
	show(m.Class("a.a"))
	show(m.Class("[La/a;"))
	show(m.Field("a/a", "a"))
	show(m.Method("a.a", "b"))
	show(m.Method("a.a", "c")) // not in the mapping
	// Output:
	// "com.example.app.Util" true
	// "[Lcom/example/app/Util;" true
	// "TAG" true
	// "log" true
	// "" false
}

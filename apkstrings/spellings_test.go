package apkstrings

import (
	"slices"
	"sort"
	"testing"
)

func spellings(s string) []string {
	var out []string
	Spellings(s, collect(&out))
	return out
}

// classSet lists every spelling of a class with the given dotted name.
func classSet(dotted, slashed string) []string {
	return []string{
		dotted, slashed,
		dotted + "[]", slashed + "[]", "[L" + slashed + ";", "[L" + dotted + ";",
		dotted + "[][]", slashed + "[][]", "[[L" + slashed + ";", "[[L" + dotted + ";",
	}
}

func TestSpellingsExact(t *testing.T) {
	ab := classSet("com.a.B", "com/a/B")
	tests := []struct {
		in   string
		want []string // besides in itself
	}{
		{"mDestroyed", nil},
		{"", nil},
		{"<init>", nil},
		{"Hello, World!", nil},
		{"1.0", nil},
		{"192.168.0.1", nil},
		{"e.g.", nil},
		{"hello world.", nil},
		{"http://example.com/x", nil},
		{"a.b/c", nil},
		{"/usr/lib", nil},
		{"Lcom/a/B;", ab},
		{"com.a.B", ab},
		{"com/a/B", ab},
		{"com.a.B[]", ab},
		{"[Lcom/a/B;", ab},
		{"[Lcom.a.B;", ab},
		{"com.a.B$Inner", classSet("com.a.B$Inner", "com/a/B$Inner")},
		{"La;", []string{"a", "a[]", "[La;", "a[][]", "[[La;"}},
		{"a[]", []string{"a", "[La;", "a[][]", "[[La;"}},
		{"[[[Lcom/a/B;", append(slices.Clone(ab), "com.a.B[][][]", "com/a/B[][][]", "[[[Lcom.a.B;")},
		{"I", []string{"int", "int[]", "[I", "int[][]", "[[I"}},
		{"J", []string{"long", "long[]", "[J", "long[][]", "[[J"}},
		{"Z", []string{"boolean", "boolean[]", "[Z", "boolean[][]", "[[Z"}},
		{"B", []string{"byte", "byte[]", "[B", "byte[][]", "[[B"}},
		{"C", []string{"char", "char[]", "[C", "char[][]", "[[C"}},
		{"S", []string{"short", "short[]", "[S", "short[][]", "[[S"}},
		{"F", []string{"float", "float[]", "[F", "float[][]", "[[F"}},
		{"D", []string{"double", "double[]", "[D", "double[][]", "[[D"}},
		{"V", []string{"void"}},
		{"X", nil},
		{"[I", []string{"int[]"}},
		{"[[I", []string{"int[][]"}},
		{"[[[J", []string{"long[][][]"}},
		{"int[]", []string{"[I"}},
		{"double[][]", []string{"[[D"}},
		{"[V", nil},
		{"void[]", nil},
		{"[", nil},
		{"L;", nil},
		{"[L;", nil},
		{"Lcom//B;", nil},
		{"Lcom/a/B", classSet("Lcom.a.B", "Lcom/a/B")}, // a valid internal name, package Lcom/a
		{"(ILjava/lang/String;)V", classSet("java.lang.String", "java/lang/String")},
		{"()V", nil},
		{"(IJZ)D", nil},
		{"([I)V", []string{"int[]", "[I"}},
	}
	for _, tt := range tests {
		got := spellings(tt.in)
		if len(got) == 0 || got[0] != tt.in {
			t.Errorf("Spellings(%q) does not start with the input: %q", tt.in, got)
			continue
		}
		want := []string{tt.in}
		for _, w := range tt.want {
			if !slices.Contains(want, w) {
				want = append(want, w)
			}
		}
		g := slices.Clone(got)
		sort.Strings(g)
		sort.Strings(want)
		if !slices.Equal(g, want) {
			t.Errorf("Spellings(%q)\n got %q\nwant %q", tt.in, got, want)
		}
	}
}

func TestSpellingsSignatures(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		notWant []string
	}{
		{"(I[[Lcom/a/B;[JLjava/lang/String;Ljava/lang/String;)Lcom/c/D;",
			[]string{"com.a.B", "com/a/B", "com.a.B[][]", "[[Lcom/a/B;", "[[Lcom.a.B;", "long[]", "[J", "java.lang.String", "[Ljava/lang/String;", "com.c.D", "com/c/D[]"},
			[]string{"int", "I", "long"}},
		{"Ljava/util/Map<Ljava/lang/String;Ljava/util/List<[Lcom/a/B;>;>;",
			[]string{"java.util.Map", "java/util/Map", "java.lang.String", "java.util.List", "com.a.B", "com.a.B[]", "[Lcom/a/B;"}, nil},
		{"<T:Ljava/lang/Object;U::Ljava/lang/Comparable<-TU;>;>(TT;Ljava/util/List<+TT;>;[TU;)Lcom/a/Outer<TT;>.Inner<*>;^Ljava/io/IOException;^TT;",
			[]string{"java.lang.Object", "java.lang.Comparable", "java.util.List", "com.a.Outer$Inner", "com/a/Outer$Inner", "java.io.IOException"},
			[]string{"com.a.Outer", "T", "U"}},
		{"<E:Ljava/lang/Enum<TE;>;>Ljava/lang/Object;Ljava/lang/Comparable<TE;>;Ljava/io/Serializable;",
			[]string{"java.lang.Enum", "java.lang.Object", "java.lang.Comparable", "java.io.Serializable"}, nil},
		{"[Ljava/util/List<Ljava/lang/String;>;",
			[]string{"java.util.List[]", "[Ljava/util/List;", "java.lang.String"}, nil},
		// Malformed: what was understood before the fault is kept.
		{"(Ljava/lang/String;Lbroken", []string{"java.lang.String"}, nil},
		{"(Ljava/lang/String;Q)V", []string{"java.lang.String"}, nil},
		{"<T", nil, nil},
		{"(" + string(make([]byte, 0)) + "Ljava/util/List<" + repeat("Ljava/util/List<", 40) + "TT;", nil, nil},
	}
	for _, tt := range tests {
		got := spellings(tt.in)
		set := toSet(got)
		if len(set) != len(got) {
			t.Errorf("Spellings(%q) repeats a spelling: %q", tt.in, got)
		}
		for _, w := range tt.want {
			if !set[w] {
				t.Errorf("Spellings(%q) lacks %q; got %q", tt.in, w, got)
			}
		}
		for _, w := range tt.notWant {
			if set[w] {
				t.Errorf("Spellings(%q) has %q", tt.in, w)
			}
		}
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

func TestSpellingsDistinct(t *testing.T) {
	inputs := []string{
		"Lcom/a/B;", "[Lcom/a/B;", "[[Lcom/a/B;", "com.a.B[][]", "[[Lcom.a.B;", "La;", "[[La;", "a[][]",
		"(La;La;[La;[[La;)La;", "I", "[[I", "int[][]", "Ljava/util/List<La;>;",
	}
	for _, in := range inputs {
		got := spellings(in)
		if len(toSet(got)) != len(got) {
			t.Errorf("Spellings(%q) repeats: %q", in, got)
		}
	}
}

func TestValidName(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{"com.a.B", true}, {"com/a/B", true}, {"com.a.B$1", true}, {"a", true},
		{"com.a.-$$Lambda$B", true}, {"über.Klasse", true}, {"_a.b", true},
		{"", false}, {"a.", false}, {".a", false}, {"a..b", false}, {"a.b/c", false},
		{"a.1b", false}, {"1.0", false}, {"a b.c", false}, {"a.b;", false}, {"a.b()", false},
	} {
		if got := validName(tt.in); got != tt.want {
			t.Errorf("validName(%q) = %v", tt.in, got)
		}
	}
}

package crunch

import "testing"

// TestRecentClasses: a remembered ID gives its value back until another
// ID takes its slot; ID 0 is never found.
func TestRecentClasses(t *testing.T) {
	var c recentClasses
	if _, ok := c.get(0); ok {
		t.Fatal("ID 0 found in an empty table")
	}
	c.put(0x1000, 7)
	if k, ok := c.get(0x1000); !ok || k != 7 {
		t.Fatalf("get(0x1000) = %d, %v; want 7, true", k, ok)
	}
	other := uint64(0x1000 + 8*len(c)) // the same slot
	if _, ok := c.get(other); ok {
		t.Fatal("an ID never put found")
	}
	c.put(other, 9)
	if _, ok := c.get(0x1000); ok {
		t.Fatal("an evicted ID still found")
	}
	c.put(0, 3)
	if _, ok := c.get(0); ok {
		t.Fatal("ID 0 found")
	}
}

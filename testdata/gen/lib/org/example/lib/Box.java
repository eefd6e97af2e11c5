package org.example.lib;

/** A generic holder. */
public class Box<T> {
    public T value;
    public Box<T> previous;
    public long version;

    public Box(T value) { this.value = value; }

    public Box<T> with(T v) {
        Box<T> b = new Box<>(v);
        b.previous = this;
        b.version = version + 1;
        return b;
    }
}

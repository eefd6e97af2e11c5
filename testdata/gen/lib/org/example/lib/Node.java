package org.example.lib;

/** A graph node with a static nested class and an inner (non-static) class. */
public class Node {
    public static int instances;
    public final int id;
    public String label;
    public Node next;
    public Node[] children;
    public long weight;
    public boolean visited;

    public Node(int id, String label) {
        this.id = id;
        this.label = label;
        instances++;
    }

    /** Static nested class. */
    public static class Edge {
        public Node from, to;
        public float cost;
        public Edge(Node from, Node to, float cost) { this.from = from; this.to = to; this.cost = cost; }
    }

    /** Inner class: holds an implicit reference to its Node. */
    public class Cursor {
        public int position;
        public Node current() { return position == 0 ? Node.this : next; }
    }

    public Cursor cursor() { return new Cursor(); }
}

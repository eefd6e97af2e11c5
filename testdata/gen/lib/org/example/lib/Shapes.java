package org.example.lib;

/** A small class hierarchy: interface, abstract base and concrete classes. */
public final class Shapes {
    private Shapes() { }

    public interface Measurable {
        double area();
    }

    public abstract static class AbstractShape implements Measurable {
        public static long created;
        public String name;
        public int color;
        public boolean filled;
        protected AbstractShape(String name) { this.name = name; created++; }
    }

    public static class Circle extends AbstractShape {
        public double radius;
        public Circle(double radius) { super("circle"); this.radius = radius; }
        public double area() { return Math.PI * radius * radius; }
    }

    public static class Square extends AbstractShape {
        public float side;
        public Square(float side) { super("square"); this.side = side; }
        public double area() { return (double) side * side; }
    }

    public static class Triangle extends AbstractShape {
        public final double[] sides;
        public Triangle(double a, double b, double c) { super("triangle"); sides = new double[] {a, b, c}; }
        public double area() {
            double s = (sides[0] + sides[1] + sides[2]) / 2;
            return Math.sqrt(s * (s - sides[0]) * (s - sides[1]) * (s - sides[2]));
        }
    }
}

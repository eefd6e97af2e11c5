package org.example.lib;

/** Primitive arrays, including a 2-D one. */
public class Matrix {
    public final int rows, cols;
    public final double[][] cells;
    public final int[] rowSums;
    public float[] scratch = new float[4];
    public byte[] checksum = new byte[8];

    public Matrix(int rows, int cols) {
        this.rows = rows;
        this.cols = cols;
        cells = new double[rows][cols];
        rowSums = new int[rows];
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < cols; c++) {
                cells[r][c] = r * 10 + c;
                rowSums[r] += r * 10 + c;
            }
        }
    }
}

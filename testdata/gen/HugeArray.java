// Keeps one huge Object[] whose elements refer to 1,000 small objects (two
// in three; the others null), as a large HashMap's table or ArrayList's
// array does in an app that ran out of memory: for measuring what crunch
// and decrunch take on such a dump.
//   java HugeArray LENGTH      (default 40000000)
// Prints READY on stdout, then sleeps until killed. Build and dump with:
//   XMX=1g scripts/gendump.sh HugeArray OUT.hprof LENGTH
public class HugeArray {
    static Object[] keep;

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 40_000_000;
        Object[] nodes = new Object[1000];
        for (int i = 0; i < nodes.length; i++) {
            nodes[i] = new int[] {i};
        }
        keep = new Object[n];
        for (int i = 0; i < n; i++) {
            if (i % 3 != 0) {
                keep[i] = nodes[i % nodes.length];
            }
        }
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}

// Runs out of memory the way a leaking program does, for a dump written by
// the JVM itself: -XX:+HeapDumpOnOutOfMemoryError. JDK 21 and later write
// it in segment files merged at the end, with several threads where the
// machine has the cores for them (on a 2-core VM, one: -Xlog:heapdump says
// "actual dump threads 1"; with -XX:ActiveProcessorCount=8 and the default
// -Xmx96m, two); jcmd GC.heap_dump -parallel=N asks for N.
//   java -Xmx96m -XX:+HeapDumpOnOutOfMemoryError -XX:HeapDumpPath=OUT.hprof Oom
// A session cache that is never trimmed keeps every Session, each with a
// user name, a byte[] of its data, a HashMap of attributes and a link to
// the session before; every thousandth one is also kept in a list of
// recent ones. The heap fills in order, so the dump is as deterministic as
// the JVM's collections allow. Build and dump with:
//   scripts/gendump.sh Oom OUT.hprof      (XMX sets the heap, default 96m)

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class Oom {
    static final class Session {
        final Session before;
        final String user;
        final byte[] data;
        final Map<String, Integer> attributes = new HashMap<>();

        Session(Session before, int i) {
            this.before = before;
            this.user = "user" + i + "@example.com";
            this.data = new byte[i % 61];
            attributes.put("visits", i);
            if (i % 3 == 0) {
                attributes.put("tier", i % 5);
            }
        }
    }

    static final List<Session> RECENT = new ArrayList<>();
    static Session last;

    public static void main(String[] args) {
        System.out.println("READY"); // gendump.sh's sign that the program runs
        for (int i = 0; ; i++) {
            last = new Session(last, i);
            if (i % 1000 == 0) {
                RECENT.add(last);
            }
        }
    }
}

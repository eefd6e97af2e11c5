import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Loads (without initializing) every class of the JDK's modules it can, about 24,000, then
 * prints READY and sleeps: a dump of a JVM with as many classes as a large server
 * application, whose HotSpot heap dump holds the whole symbol table as STRING records
 * (552,870 of them on JDK 17.0.15) for few objects.
 */
public class ManyClasses {
    static final List<Class<?>> KEEP = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
        try (var modules = Files.newDirectoryStream(jrt.getPath("/modules"))) {
            for (Path module : modules) {
                try (Stream<Path> files = Files.walk(module)) {
                    for (Path p : (Iterable<Path>) files::iterator) {
                        String n = p.toString();
                        if (!n.endsWith(".class") || n.endsWith("module-info.class")) {
                            continue;
                        }
                        // /modules/<module>/<package path>/<Name>.class
                        String name = n.substring(n.indexOf('/', "/modules/".length()) + 1, n.length() - ".class".length());
                        try {
                            KEEP.add(Class.forName(name.replace('/', '.'), false, ManyClasses.class.getClassLoader()));
                        } catch (Throwable t) {
                            // not loadable from here: skipped
                        }
                    }
                }
            }
        }
        System.out.println("loaded " + KEEP.size());
        System.out.println("READY");
        Thread.sleep(Long.MAX_VALUE);
    }
}

package io.attnproof.attention;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The packages of the system under test depend on each other one way: no import cycle (a lane never reaches back
 * into the calls that dispatch to it), and no code asks which lane it holds ({@code instanceof Cpu}): what differs
 * between lanes is a {@code Backend} operation.
 */
class PackageGraphTest {
    private static final Pattern REFERENCE = Pattern.compile("io\\.attnproof\\.attention\\.([a-z0-9]+)\\.[A-Z]");
    private static final Path ROOT = Path.of("src/main/java/io/attnproof/attention");

    /** Package -> the other packages of the system its sources name (imports and qualified names alike). */
    static Map<String, Set<String>> graph() throws IOException {
        assertTrue(Files.isDirectory(ROOT), "run from the system-under-test module, not " + Path.of("").toAbsolutePath());
        Map<String, Set<String>> edges = new TreeMap<>();
        try (Stream<Path> files = Files.walk(ROOT)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                Path rel = ROOT.relativize(f);
                String pkg = rel.getNameCount() == 1 ? "(root)" : rel.getName(0).toString();
                Set<String> out = edges.computeIfAbsent(pkg, k -> new TreeSet<>());
                Matcher m = REFERENCE.matcher(Files.readString(f));
                while (m.find()) {
                    if (!m.group(1).equals(pkg)) {
                        out.add(m.group(1));
                    }
                }
            }
        }
        return edges;
    }

    /** A cycle of {@code edges} as the packages along it, or an empty list when there is none. */
    static List<String> cycle(Map<String, Set<String>> edges) {
        Map<String, Integer> state = new TreeMap<>(); // absent: unseen; 1: on the path; 2: done
        for (String start : edges.keySet()) {
            Deque<String> path = new ArrayDeque<>();
            List<String> found = visit(start, edges, state, path);
            if (!found.isEmpty()) {
                return found;
            }
        }
        return List.of();
    }

    private static List<String> visit(String p, Map<String, Set<String>> edges, Map<String, Integer> state,
            Deque<String> path) {
        Integer s = state.get(p);
        if (s != null && s == 2) {
            return List.of();
        }
        if (s != null) {
            List<String> onPath = new ArrayList<>(path).reversed();
            List<String> loop = new ArrayList<>(onPath.subList(onPath.indexOf(p), onPath.size()));
            loop.add(p);
            return loop;
        }
        state.put(p, 1);
        path.push(p);
        for (String q : edges.getOrDefault(p, Set.of())) {
            List<String> found = visit(q, edges, state, path);
            if (!found.isEmpty()) {
                return found;
            }
        }
        path.pop();
        state.put(p, 2);
        return List.of();
    }

    @Test
    void thePackagesFormNoCycle() throws IOException {
        Map<String, Set<String>> edges = graph();
        assertTrue(edges.keySet().containsAll(List.of("backend", "dsv4", "engine", "sinks", "dispatch")), edges.toString());
        assertEquals(List.of(), cycle(edges), "an import cycle in the system under test; the graph: " + edges);
    }

    @Test
    void theCycleFinderFindsACycleWhereThereIsOne() {
        // The graph main had before the CPU engines moved out: backend -> dsv4 -> backend.
        Map<String, Set<String>> before = Map.of("backend", Set.of("dsv4", "tensor"), "dsv4", Set.of("backend"),
                "tensor", Set.of());
        assertEquals(List.of("backend", "dsv4", "backend"), cycle(new TreeMap<>(before)));
        assertEquals(List.of(), cycle(new TreeMap<>(Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of()))));
    }

    @Test
    void noCodeAsksWhichLaneItHolds() throws IOException {
        try (Stream<Path> files = Files.walk(ROOT)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                assertFalse(Files.readString(f).contains("instanceof Cpu"), f + " tests for the Java lane by type");
            }
        }
    }
}

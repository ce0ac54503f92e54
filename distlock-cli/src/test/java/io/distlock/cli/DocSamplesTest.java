package io.distlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Keeps the Java samples of the docs compiling: every {@code ```java} block of README.md and docs/, and every javadoc
 * {@code <pre>{@code ...}} block marked {@code <!-- sample: NAME -->} in a module's main sources, must equal the region
 * {@code tag::NAME[]} ... {@code end::NAME[]} of {@link DocSamples} (indentation aside), which the build compiles.
 */
class DocSamplesTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Path SAMPLES = Path.of("src/test/java/io/distlock/cli/DocSamples.java");
    private static final Pattern MARKER = Pattern.compile("<!-- sample: ([a-z0-9-]+) -->");
    private static final Pattern TAG = Pattern.compile("//\\s*tag::([a-z0-9-]+)\\[]");

    /** A sample as a page shows it: where, and its lines. */
    record Shown(String where, String tag, List<String> lines) {}

    @Test
    void everyJavaSampleInTheDocs_isACompiledRegion() throws IOException {
        Map<String, List<String>> regions = regions(Files.readAllLines(SAMPLES, StandardCharsets.UTF_8));
        List<Shown> shown = new ArrayList<>();
        List<String> unmarked = new ArrayList<>();
        for (Path page : pages()) {
            markdownSamples(page, shown, unmarked);
        }
        for (Path source : javaSources()) {
            javadocSamples(source, shown);
        }

        assertThat(unmarked)
                .as("```java blocks with no <!-- sample: NAME --> line above them")
                .isEmpty();
        assertThat(shown).as("samples found").hasSizeGreaterThanOrEqualTo(regions.size());
        List<String> drifted = new ArrayList<>();
        for (Shown s : shown) {
            List<String> region = regions.get(s.tag());
            if (region == null) {
                drifted.add(s.where() + ": no region tag::" + s.tag() + "[] in " + SAMPLES);
            } else if (!dedent(s.lines()).equals(dedent(region))) {
                drifted.add(s.where() + " differs from tag::" + s.tag() + "[] in " + SAMPLES + ":\n--- shown\n"
                        + String.join("\n", dedent(s.lines())) + "\n--- compiled\n"
                        + String.join("\n", dedent(region)));
            }
        }
        assertThat(drifted).as("samples that drifted from the compiled code").isEmpty();
        TreeSet<String> unused = new TreeSet<>(regions.keySet());
        shown.forEach(s -> unused.remove(s.tag()));
        assertThat(unused).as("regions no page shows").isEmpty();
    }

    @Test
    void aSampleThatDrifts_isFound() {
        Map<String, List<String>> regions =
                regions(List.of("class X {", "  // tag::a[]", "  int x = 1;", "  // end::a[]", "}"));
        assertThat(regions).containsOnlyKeys("a");
        List<String> a = Objects.requireNonNull(regions.get("a"));
        assertThat(dedent(a)).containsExactly("int x = 1;");
        assertThat(dedent(List.of("    int x = 1;"))).isEqualTo(dedent(a));
        assertThat(dedent(List.of("    int x = 2;"))).isNotEqualTo(dedent(a));
    }

    static Map<String, List<String>> regions(List<String> source) {
        Map<String, List<String>> regions = new LinkedHashMap<>();
        for (int i = 0; i < source.size(); i++) {
            Matcher m = TAG.matcher(source.get(i));
            if (!m.find()) {
                continue;
            }
            String end = "end::" + m.group(1) + "[]";
            int j = i + 1;
            while (j < source.size() && !source.get(j).contains(end)) {
                j++;
            }
            assertThat(j).as("%s closed", end).isLessThan(source.size());
            assertThat(regions.put(m.group(1), source.subList(i + 1, j)))
                    .as("tag %s once", m.group(1))
                    .isNull();
        }
        return regions;
    }

    private static void markdownSamples(Path page, List<Shown> shown, List<String> unmarked) throws IOException {
        List<String> lines = Files.readAllLines(page, StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size(); i++) {
            if (!lines.get(i).strip().equals("```java")) {
                continue;
            }
            int end = i + 1;
            while (!lines.get(end).strip().equals("```")) {
                end++;
            }
            String where = ROOT.relativize(page) + ":" + (i + 1);
            Matcher m = i > 0 ? MARKER.matcher(lines.get(i - 1)) : null;
            if (m != null && m.find()) {
                shown.add(new Shown(where, m.group(1), lines.subList(i + 1, end)));
            } else {
                unmarked.add(where);
            }
            i = end;
        }
    }

    private static void javadocSamples(Path source, List<Shown> shown) throws IOException {
        List<String> lines = Files.readAllLines(source, StandardCharsets.UTF_8);
        for (int i = 0; i + 1 < lines.size(); i++) {
            Matcher m = MARKER.matcher(lines.get(i));
            if (!m.find()) {
                continue;
            }
            assertThat(lines.get(i + 1).strip()).as("%s:%d", source, i + 2).isEqualTo("* <pre>{@code");
            List<String> body = new ArrayList<>();
            int j = i + 2;
            while (!lines.get(j).strip().equals("* }</pre>")) {
                body.add(lines.get(j).replaceFirst("^\\s*\\* ?", ""));
                j++;
            }
            shown.add(new Shown(ROOT.relativize(source) + ":" + (i + 1), m.group(1), body));
        }
    }

    private static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>();
        pages.add(ROOT.resolve("README.md"));
        try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        return pages;
    }

    private static List<Path> javaSources() throws IOException {
        try (Stream<Path> files = Files.walk(ROOT, 1)) {
            return files.filter(p -> p.getFileName().toString().startsWith("distlock-"))
                    .map(p -> p.resolve("src/main/java"))
                    .filter(Files::isDirectory)
                    .flatMap(DocSamplesTest::walk)
                    .filter(p -> p.toString().endsWith(".java"))
                    .sorted()
                    .collect(Collectors.toList());
        }
    }

    private static Stream<Path> walk(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.collect(Collectors.toList()).stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The lines without the indentation they share and without trailing blanks. */
    static List<String> dedent(List<String> lines) {
        int indent = lines.stream()
                .filter(l -> !l.isBlank())
                .mapToInt(l -> l.length() - l.stripLeading().length())
                .min()
                .orElse(0);
        return lines.stream()
                .map(l -> l.isBlank() ? "" : l.substring(indent).stripTrailing())
                .collect(Collectors.toList());
    }
}

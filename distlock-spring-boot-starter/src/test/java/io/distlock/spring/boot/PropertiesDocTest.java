package io.distlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The properties block of docs/spring-boot.md lists exactly the {@code distlock.*} properties whose metadata the
 * configuration processor wrote.
 */
class PropertiesDocTest {
    static final Path DOC = Path.of("..", "docs", "spring-boot.md");
    static final Path METADATA = Path.of("target", "classes", "META-INF", "spring-configuration-metadata.json");

    @Test
    void theDocListsEveryPropertyAndNoOther() throws Exception {
        Set<String> documented = new TreeSet<>();
        String doc = Files.readString(DOC);
        int start = doc.indexOf("```properties");
        assertThat(start).as("a properties block").isNotNegative();
        String block = doc.substring(start, doc.indexOf("```", start + 3));
        Matcher m = Pattern.compile("(?m)^(distlock\\.[a-z.-]+)=").matcher(block);
        while (m.find()) {
            documented.add(m.group(1));
        }
        Set<String> declared = new TreeSet<>();
        Matcher n =
                Pattern.compile("\"name\"\\s*:\\s*\"(distlock\\.[a-z.-]+)\"").matcher(Files.readString(METADATA));
        while (n.find()) {
            declared.add(n.group(1));
        }
        // group names ("distlock.redis") are listed in the metadata too; properties have a value in the doc
        declared.removeIf(name -> declared.stream().anyMatch(other -> other.startsWith(name + ".")));
        assertThat(declared).hasSizeGreaterThan(20);
        assertThat(documented).isEqualTo(declared);
    }
}

package io.distlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.cluster.SlotHash;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KeyLayoutTest {
    private final KeyLayout layout = new KeyLayout("distlock:");

    private static final List<String> NAMES = List.of(
            "a",
            "order:123",
            "{a}",
            "a}b{c",
            "}",
            "{",
            "{}",
            "%7B",
            "%",
            "%25",
            "with space",
            "line\nbreak",
            "tab\tand\r\nCRLF",
            "ünïcødé ✓ 🔒",
            "\uD800",
            "\uDC00",
            "\uD801",
            "a/b.c'd\"e",
            "*?[x]\\",
            "x".repeat(10_000));

    @Test
    void encode_distinctNames_distinctTags() {
        Set<String> tags = new HashSet<>();
        for (String name : NAMES) {
            assertThat(tags.add(layout.tag(name))).as("tag of %s", name).isTrue();
        }
    }

    @Test
    void encode_roundTrips_andNeverContainsClosingBrace() {
        for (String name : NAMES) {
            String encoded = KeyLayout.encode(name);
            assertThat(encoded).doesNotContain("}").doesNotContain("{");
            assertThat(KeyLayout.decode(encoded)).isEqualTo(name);
        }
    }

    @Test
    void keysOfOneName_shareOneSlot_hashedOnTheEncodedName() {
        for (String name : NAMES) {
            String tag = layout.tag(name);
            int slot = SlotHash.getSlot(KeyLayout.key(tag, KeyLayout.HOLD));
            for (String kind : List.of(KeyLayout.FENCE, KeyLayout.QUEUE, KeyLayout.WAITERS, KeyLayout.CHANNEL)) {
                assertThat(SlotHash.getSlot(KeyLayout.key(tag, kind)))
                        .as("%s of %s", kind, name)
                        .isEqualTo(slot);
            }
            assertThat(slot).isEqualTo(SlotHash.getSlot(KeyLayout.encode(name)));
        }
    }

    @Test
    void keys_areTheKeysOfTheNameAsked_alsoWhenNamesShareACacheSlot() {
        // "Aa" and "BB" have one hash code, so they meet in the recent-names cache and replace each other there
        assertThat("Aa".hashCode()).isEqualTo("BB".hashCode());
        List<String> names = new java.util.ArrayList<>(NAMES);
        names.addAll(List.of("Aa", "BB", "Aa", "BB"));
        for (int round = 0; round < 2; round++) { // the second round reads entries the first one left
            for (String name : names) {
                KeyLayout.NameKeys k = layout.keys(name);
                String tag = layout.tag(name);
                assertThat(k.name).as("name of %s", name).isEqualTo(name);
                assertThat(k.tag).as("tag of %s", name).isEqualTo(tag);
                assertThat(k.hold).isEqualTo(KeyLayout.key(tag, KeyLayout.HOLD));
                assertThat(k.fence).isEqualTo(KeyLayout.key(tag, KeyLayout.FENCE));
                assertThat(k.queue()).isEqualTo(KeyLayout.key(tag, KeyLayout.QUEUE));
                assertThat(k.wakeOrder()).isEqualTo(KeyLayout.key(tag, KeyLayout.WAKE_ORDER));
            }
        }
        assertThat(layout.keys("BB")).as("a kept entry is reused").isSameAs(layout.keys("BB"));
        String longName = "x".repeat(KeyLayout.CACHED_NAME_LENGTH + 1);
        assertThat(layout.keys(longName).hold).isEqualTo(KeyLayout.key(layout.tag(longName), KeyLayout.HOLD));
        assertThat(layout.keys(longName)).as("a long name is not kept").isNotSameAs(layout.keys(longName));
    }

    @Test
    void nameOfHoldKey_readsBackTheName_ignoresForeignKeys() {
        for (String name : NAMES) {
            assertThat(layout.nameOfHoldKey(KeyLayout.key(layout.tag(name), KeyLayout.HOLD)))
                    .isEqualTo(name);
        }
        assertThat(layout.nameOfHoldKey("distlock:{a}:fence")).isNull();
        assertThat(layout.nameOfHoldKey("other:{a}:hold")).isNull();
        assertThat(layout.nameOfHoldKey("distlock:{%zz}:hold")).isNull();
    }

    @Test
    void glob_escapesPatternCharacters() {
        assertThat(KeyLayout.glob("a*b?c[d]e\\")).isEqualTo("a\\*b\\?c\\[d\\]e\\\\");
    }

    @Test
    void prefix_withBrace_isRejected_namingTheValue() {
        assertThatThrownBy(() -> new KeyLayout("a{b"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a{b");
    }
}

package io.distlock.zookeeper;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.zookeeper.common.PathUtils;
import org.junit.jupiter.api.Test;

class ZkNamesTest {
    private static final List<String> NAMES = List.of(
            "a",
            "A",
            "a/b",
            "a%2Fb",
            "/",
            ".",
            "..",
            "zookeeper",
            "order:123",
            "{tag}",
            "'\"quoted\"'",
            "tab\tnew\nline\u0000nul\u007f",
            "ünïcødé ✓ 😀",
            "\ud800lone surrogate",
            " spaced ",
            "x".repeat(ZkNames.MAX_ESCAPED),
            "x".repeat(ZkNames.MAX_ESCAPED + 1),
            "é".repeat(1000));

    @Test
    void lockNode_isOneValidPathComponent_ofBoundedLength() {
        for (String name : NAMES) {
            String node = ZkNames.lockNode(name);
            PathUtils.validatePath("/distlock/locks/" + node); // throws on "/", ".", "..", control characters
            assertThat(node).doesNotContain("/").isNotIn(".", "..");
            assertThat(node.length()).isLessThanOrEqualTo(ZkNames.MAX_ESCAPED + 2);
        }
    }

    @Test
    void lockNode_distinctNames_distinctNodes() {
        Set<String> nodes = new HashSet<>();
        for (String name : NAMES) {
            assertThat(nodes.add(ZkNames.lockNode(name))).as(name).isTrue();
        }
    }

    @Test
    void lockName_readableNodes_decodeToTheName_hashedOnesToNull() {
        for (String name : NAMES) {
            String node = ZkNames.lockNode(name);
            if (node.startsWith("n-")) {
                assertThat(ZkNames.lockName(node))
                        .isEqualTo(name.contains("\ud800") ? ZkNames.unescape(ZkNames.escape(name)) : name);
            } else {
                assertThat(node).startsWith("h-");
                assertThat(ZkNames.lockName(node)).isNull();
            }
        }
        assertThat(ZkNames.lockNode("x".repeat(ZkNames.MAX_ESCAPED + 1))).startsWith("h-");
    }

    @Test
    void entry_parsesPlainAndProtectedNames_rejectsOthers() {
        String owner = "3f2a@123:t7";
        String prefix = ZkNames.entryPrefix(owner);
        ZkNames.Entry plain = java.util.Objects.requireNonNull(ZkNames.entry(prefix + "0000000042"));
        assertThat(plain).isNotNull();
        assertThat(plain.ownerTag()).isEqualTo(ZkNames.ownerTag(owner));
        assertThat(plain.sequence()).isEqualTo(42);
        ZkNames.Entry protectedMode = java.util.Objects.requireNonNull(
                ZkNames.entry("_c_0f8fad5b-d9cb-469f-a165-70867728950e-" + prefix + "0000000007"));
        assertThat(protectedMode).isNotNull();
        assertThat(protectedMode.ownerTag()).isEqualTo(ZkNames.ownerTag(owner));
        assertThat(protectedMode.sequence()).isEqualTo(7);
        assertThat(ZkNames.entry("lock-0000000001")).isNull();
        assertThat(ZkNames.entry("l-x-00000001")).isNull();
        assertThat(ZkNames.entry("l-x-000000000a")).isNull();
        assertThat(ZkNames.entry("something")).isNull();
    }

    @Test
    void ownerTag_longOwners_areHashed_distinctOwners_distinctTags() {
        String longOwner = "c".repeat(500) + ":t1";
        assertThat(ZkNames.ownerTag(longOwner)).startsWith("#").hasSizeLessThanOrEqualTo(65);
        assertThat(ZkNames.ownerTag("a:t1")).isNotEqualTo(ZkNames.ownerTag("a:t2"));
        assertThat(ZkNames.ownerTag(longOwner)).isNotEqualTo(ZkNames.ownerTag("c".repeat(500) + ":t2"));
    }
}

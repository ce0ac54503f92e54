package io.distlock.testkit.history;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * The events of one run, merged from every history file of a directory and sorted by time: client events, the fenced
 * resource's log, fault starts and ends, and the run's facts ({@code meta} lines).
 */
public final class History {
    private final List<ClientEvent> client;
    private final List<ResourceEvent> resource;
    private final List<NemesisEvent> nemesis;
    private final Map<String, String> meta;
    private final int skippedLines;

    private History(
            List<ClientEvent> client,
            List<ResourceEvent> resource,
            List<NemesisEvent> nemesis,
            Map<String, String> meta,
            int skippedLines) {
        this.client = sorted(client, ClientEvent::t);
        this.resource = sorted(resource, ResourceEvent::t);
        this.nemesis = sorted(nemesis, NemesisEvent::t);
        this.meta = Map.copyOf(meta);
        this.skippedLines = skippedLines;
    }

    private static <T> List<T> sorted(List<T> events, java.util.function.ToLongFunction<T> time) {
        List<T> copy = new ArrayList<>(events);
        copy.sort(Comparator.comparingLong(time)); // stable: equal times keep file order
        return List.copyOf(copy);
    }

    /** A history made of these events (for tests and for histories built in memory). */
    public static History of(
            List<ClientEvent> client,
            List<ResourceEvent> resource,
            List<NemesisEvent> nemesis,
            Map<String, String> meta) {
        return new History(client, resource, nemesis, meta, 0);
    }

    /**
     * Reads every {@code *.jsonl} file under {@code dir}. A line that does not parse (the last line of a process
     * killed while writing it) is skipped and counted.
     */
    public static History load(Path dir) {
        Objects.requireNonNull(dir, "dir");
        List<ClientEvent> client = new ArrayList<>();
        List<ResourceEvent> resource = new ArrayList<>();
        List<NemesisEvent> nemesis = new ArrayList<>();
        Map<String, String> meta = new LinkedHashMap<>();
        int skipped = 0;
        List<Path> files;
        try (Stream<Path> s = Files.walk(dir)) {
            files = s.filter(p -> p.toString().endsWith(".jsonl")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list histories in " + dir, e);
        }
        for (Path f : files) {
            List<String> lines;
            try {
                lines = Files.readAllLines(f, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read history " + f, e);
            }
            for (String line : lines) {
                if (line.isBlank()) {
                    continue;
                }
                try {
                    Map<String, Object> m = Json.parse(line);
                    switch (String.valueOf(m.get("kind"))) {
                        case "client" -> client.add(ClientEvent.fromJson(m));
                        case "resource" -> resource.add(ResourceEvent.fromJson(m));
                        case "nemesis" -> nemesis.add(NemesisEvent.fromJson(m));
                        case "meta" -> meta.put(Json.str(m, "name"), Json.str(m, "value", ""));
                        default -> skipped++;
                    }
                } catch (RuntimeException e) {
                    skipped++;
                }
            }
        }
        return new History(client, resource, nemesis, meta, skipped);
    }

    public List<ClientEvent> client() {
        return client;
    }

    public List<ResourceEvent> resource() {
        return resource;
    }

    public List<NemesisEvent> nemesis() {
        return nemesis;
    }

    public Map<String, String> meta() {
        return meta;
    }

    /** Lines that did not parse (a write cut short by a kill). */
    public int skippedLines() {
        return skippedLines;
    }

    /** Every lock name in the client events and the resource log. */
    public TreeSet<String> keys() {
        TreeSet<String> keys = new TreeSet<>();
        client.forEach(e -> keys.add(e.key()));
        resource.forEach(e -> keys.add(e.key()));
        return keys;
    }

    /** The earliest timestamp of any event, the origin of timelines. */
    public long start() {
        long start = Long.MAX_VALUE;
        if (!client.isEmpty()) {
            start = Math.min(start, client.get(0).t());
        }
        if (!resource.isEmpty()) {
            start = Math.min(start, resource.get(0).t());
        }
        if (!nemesis.isEmpty()) {
            start = Math.min(start, nemesis.get(0).t());
        }
        return start == Long.MAX_VALUE ? 0 : start;
    }
}

package io.distlock.cli;

import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;

/** Runs the command in-process, as {@code main} would, with captured output. */
final class Cli {
    private Cli() {}

    /** What a run printed and returned. */
    record Result(int code, String out, String err) {
        @Override
        public String toString() {
            return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    static Result run(String... args) {
        return runWithInput("", args);
    }

    static Result runWithInput(String stdin, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(
                args,
                Main.io(
                        new PrintWriter(out, true),
                        new PrintWriter(err, true),
                        new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8))));
        return new Result(code, out.toString(), err.toString());
    }
}

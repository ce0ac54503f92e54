package io.distlock.cli;

import io.distlock.DistributedLockException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine;

/**
 * The entry point of the {@code distlock} command ({@code java -jar distlock-cli.jar}, or {@code ./distlock} at the
 * repository root).
 */
public final class Main {
    private Main() {}

    /** Runs the command and exits with its exit code. */
    public static void main(String[] args) {
        Charset cs = Charset.defaultCharset();
        PrintWriter out = new PrintWriter(new OutputStreamWriter(System.out, cs), true);
        PrintWriter err = new PrintWriter(new OutputStreamWriter(System.err, cs), true);
        boolean tty = System.console() != null && !"dumb".equals(System.getenv("TERM"));
        int code = run(args, new Io(out, err, System.in, tty));
        out.flush();
        err.flush();
        System.exit(code);
    }

    /** Runs the command with these streams and returns its exit code; what {@link #main} and the tests call. */
    static int run(String[] args, Io io) {
        return commandLine(io).execute(args);
    }

    static CommandLine commandLine(Io io) {
        CommandLine.IFactory fallback = CommandLine.defaultFactory();
        CommandLine.IFactory factory = new CommandLine.IFactory() {
            @Override
            public <K> K create(Class<K> cls) throws Exception {
                try {
                    return cls.getDeclaredConstructor(Io.class).newInstance(io);
                } catch (NoSuchMethodException e) {
                    return fallback.create(cls);
                }
            }
        };
        CommandLine cl = new CommandLine(new DistlockCommand(io), factory);
        cl.setOut(io.out());
        cl.setErr(io.err());
        cl.setParameterExceptionHandler((e, args) -> {
            CommandLine bad = e.getCommandLine();
            PrintWriter err = bad.getErr();
            err.println("distlock: " + e.getMessage());
            err.println("Run '" + bad.getCommandSpec().qualifiedName() + " --help' for usage.");
            err.flush();
            return ExitCodes.USAGE;
        });
        cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            PrintWriter err = commandLine.getErr();
            if (e instanceof BackendUnreachableException || e instanceof DistributedLockException) {
                err.println("distlock: " + message(e));
                err.flush();
                return ExitCodes.UNREACHABLE;
            }
            err.println("distlock: failed: " + e);
            e.printStackTrace(err);
            err.flush();
            return ExitCodes.FAILED;
        });
        Map<String, String> codes = new LinkedHashMap<>();
        for (String line : ExitCodes.HELP) {
            int colon = line.indexOf(':');
            codes.put(line.substring(0, colon), line.substring(colon + 1));
        }
        applyExitCodes(cl, codes);
        return cl;
    }

    private static void applyExitCodes(CommandLine cl, Map<String, String> codes) {
        cl.getCommandSpec()
                .usageMessage()
                .exitCodeListHeading("%nExit codes:%n")
                .exitCodeList(codes);
        for (CommandLine sub : cl.getSubcommands().values()) {
            applyExitCodes(sub, codes);
        }
    }

    private static String message(Throwable e) {
        String m = String.valueOf(e.getMessage());
        Throwable cause = e.getCause();
        if (cause != null && cause != e) {
            String root = Backend.rootMessage(cause);
            if (!m.contains(root)) {
                m = m + " (" + root + ")";
            }
        }
        return m;
    }

    /** For tests: an {@link Io} on these streams, never a terminal. */
    static Io io(PrintWriter out, PrintWriter err, InputStream in) {
        return new Io(out, err, in, false);
    }
}

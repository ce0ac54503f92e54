package io.distlock.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReportTest {

    @Test
    void csv_everyRowAndTarget_underItsTitleAndSection_quotedWhereNeeded() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Report.csvTo(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            Report report = new Report(new PrintStream(OutputStream.nullOutputStream()));
            report.title("Redis");
            report.section("Uncontended");
            report.table(
                    List.of(new Harness.Result(
                            "fenced reference (Lua SET NX PX + INCR, Lua release)",
                            1,
                            5.0,
                            20_000,
                            4_000,
                            250,
                            400,
                            0,
                            Double.NaN,
                            Double.NaN,
                            Double.NaN,
                            2,
                            null,
                            0,
                            20_000,
                            List.of())),
                    false);
            report.target("p50 ÷ PING", 2.37, "<=", 2.1);
        } finally {
            Report.csvTo(null);
        }

        assertThat(bytes.toString(StandardCharsets.UTF_8).lines())
                .containsExactly(
                        Report.CSV_HEADER,
                        "phase,Redis,Uncontended,\"fenced reference (Lua SET NX PX + INCR, Lua release)\",1,4000.00,"
                                + "250.000,400.000,,,0,,2,,,,",
                        "target,Redis,Uncontended,p50 ÷ PING,,,,,,,,,,2.37000,<=,2.10000,false");
    }
}

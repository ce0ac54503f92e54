package io.distlock.testkit.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throw-away certificate authority, a server certificate for 127.0.0.1 and localhost, and a client certificate,
 * as PEM files made with the {@code openssl} command, for TLS tests against servers started on loopback. Valid for
 * two days; never use them for anything else.
 *
 * @param dir the directory holding the files
 * @param caCert the authority's certificate: what clients trust
 * @param serverCert the server's certificate, signed by the authority
 * @param serverKey the server's private key (PKCS#8, unencrypted)
 * @param clientCert a client certificate ({@code CN=distlock-client}), signed by the authority
 * @param clientKey the client's private key (PKCS#8, unencrypted)
 */
public record TestCertificates(
        Path dir, Path caCert, Path serverCert, Path serverKey, Path clientCert, Path clientKey) {

    /** Makes a new authority, server and client certificate in a fresh temporary directory. */
    public static TestCertificates create() {
        try {
            Path dir = Files.createTempDirectory("distlock-tls-");
            Path caKey = dir.resolve("ca.key");
            Path caCert = dir.resolve("ca.crt");
            openssl(
                    dir,
                    "req",
                    "-x509",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-keyout",
                    caKey.toString(),
                    "-out",
                    caCert.toString(),
                    "-days",
                    "2",
                    "-subj",
                    "/CN=distlock test CA");
            Path[] server = signed(dir, "server", "/CN=127.0.0.1", "subjectAltName=IP:127.0.0.1,DNS:localhost");
            Path[] client = signed(dir, "client", "/CN=distlock-client", "extendedKeyUsage=clientAuth");
            return new TestCertificates(dir, caCert, server[0], server[1], client[0], client[1]);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A key and a certificate signed by the authority in {@code dir}: {certificate, key}. */
    private static Path[] signed(Path dir, String name, String subject, String extension) throws IOException {
        Path key = dir.resolve(name + ".key");
        Path csr = dir.resolve(name + ".csr");
        Path cert = dir.resolve(name + ".crt");
        Path ext = dir.resolve(name + ".ext");
        Files.writeString(ext, extension + "\n", StandardCharsets.UTF_8);
        openssl(
                dir,
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                key.toString(),
                "-out",
                csr.toString(),
                "-subj",
                subject);
        openssl(
                dir,
                "x509",
                "-req",
                "-in",
                csr.toString(),
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                cert.toString(),
                "-days",
                "2",
                "-extfile",
                ext.toString());
        return new Path[] {cert, key};
    }

    private static void openssl(Path dir, String... args) {
        List<String> command = new ArrayList<>();
        command.add("openssl");
        command.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("openssl.log").toFile())
                    .start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("openssl did not finish within 60 s: " + command);
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("openssl failed (" + p.exitValue() + "): " + command + "\n"
                        + Files.readString(dir.resolve("openssl.log"), StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run openssl (is it installed?)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}

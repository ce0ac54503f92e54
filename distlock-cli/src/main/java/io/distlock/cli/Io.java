package io.distlock.cli;

import java.io.InputStream;
import java.io.PrintWriter;

/**
 * Where a command writes and reads: results on {@code out}, progress and messages on {@code err}, confirmations from
 * {@code in}. {@code tty} says whether {@code err} is a terminal (progress redrawn in place) or not (plain lines).
 */
record Io(PrintWriter out, PrintWriter err, InputStream in, boolean tty) {}
